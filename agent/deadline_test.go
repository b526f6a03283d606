package agent_test

import (
	"context"
	"iter"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/turn"
)

// fakeTimers is agent.Config.AfterFunc for tests: its timers fire only
// when fire says so. Safe for concurrent use.
type fakeTimers struct {
	mu sync.Mutex
	ts []*fakeTimer
}

type fakeTimer struct {
	ft    *fakeTimers
	d     time.Duration
	f     func()
	armed bool
	// resets counts Reset calls.
	resets int
}

func (ft *fakeTimers) after(d time.Duration, f func()) agent.Timer {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	t := &fakeTimer{ft: ft, d: d, f: f, armed: true}
	ft.ts = append(ft.ts, t)
	return t
}

func (t *fakeTimer) Stop() bool {
	t.ft.mu.Lock()
	defer t.ft.mu.Unlock()
	was := t.armed
	t.armed = false
	return was
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	t.ft.mu.Lock()
	defer t.ft.mu.Unlock()
	was := t.armed
	t.armed, t.d = true, d
	t.resets++
	return was
}

// resets sums the Reset calls of the timers of duration d.
func (ft *fakeTimers) resets(d time.Duration) int {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	n := 0
	for _, tm := range ft.ts {
		if tm.d == d {
			n += tm.resets
		}
	}
	return n
}

// fire fires every armed timer of duration d, as if d had passed; it
// fails the test when none is armed (the bound is missing).
func (ft *fakeTimers) fire(t *testing.T, d time.Duration) {
	t.Helper()
	ft.mu.Lock()
	var fs []func()
	for _, tm := range ft.ts {
		if tm.armed && tm.d == d {
			tm.armed = false
			fs = append(fs, tm.f)
		}
	}
	ft.mu.Unlock()
	if len(fs) == 0 {
		t.Fatalf("no timer of %s is armed", d)
	}
	for _, f := range fs {
		f()
	}
}

// stallModel answers each Stream with its next step: "stall" sends
// nothing until the stream's context ends (a provider that stopped
// sending), "text-stall" sends one delta first, "answer" replies
// "hello". Each stall is announced on stalled once it waits.
type stallModel struct {
	mu      sync.Mutex
	steps   []string
	stalled chan struct{}
}

func newStallModel(steps ...string) *stallModel {
	return &stallModel{steps: steps, stalled: make(chan struct{}, len(steps))}
}

func (m *stallModel) Ref() string                     { return "fake:stall" }
func (m *stallModel) Capabilities() turn.Capabilities { return turn.Capabilities{Tools: true} }
func (m *stallModel) CheckTool(llm.ToolDef) error     { return nil }

func (m *stallModel) Stream(ctx context.Context, _ llm.Request) iter.Seq2[llm.Event, error] {
	m.mu.Lock()
	step := "answer"
	if len(m.steps) > 0 {
		step, m.steps = m.steps[0], m.steps[1:]
	}
	m.mu.Unlock()
	return func(yield func(llm.Event, error) bool) {
		switch step {
		case "answer":
			if yield(llm.Event{Kind: llm.EventText, Text: "hello"}, nil) {
				yield(llm.Event{Kind: llm.EventDone, Stop: llm.StopEnd}, nil)
			}
			return
		case "text-stall":
			if !yield(llm.Event{Kind: llm.EventText, Text: "Let me"}, nil) {
				return
			}
		}
		m.stalled <- struct{}{}
		<-ctx.Done()
		// What an adapter reports when its request's context ends.
		yield(llm.Event{}, &llm.Error{Kind: llm.ErrNetwork, Msg: ctx.Err().Error()})
	}
}

// turnResult is what a Run in the background ended with.
type turnResult struct {
	out agent.Outcome
	evs []agent.Event
	err error
}

// runAsync runs a turn in the background; its result comes on the
// returned channel.
func (e *env) runAsync(conv, msg string, m llm.Model) <-chan turnResult {
	done := make(chan turnResult, 1)
	s := e.start(conv, msg, m)
	go func() {
		var r turnResult
		r.out, r.err = e.runner.Run(context.Background(), s, func(ev agent.Event) { r.evs = append(r.evs, ev) })
		done <- r
	}()
	return done
}

func errorText(evs []agent.Event) []string {
	var out []string
	for _, ev := range evs {
		if ev.Kind == agent.EventError {
			out = append(out, ev.Error)
		}
	}
	return out
}

// TestStalledModelStreamIsRetried: a stream that sends nothing for
// ModelIdle fails as a timeout, which the retry rule retries while the
// call has produced nothing; once the retries run out the turn ends with
// one sentence, recorded as failed (not left running).
func TestStalledModelStreamIsRetried(t *testing.T) {
	for _, tc := range []struct {
		name   string
		steps  []string
		stalls int
		stop   string
		sleeps int
	}{
		{name: "retried", steps: []string{"stall", "answer"}, stalls: 1, stop: agent.StopAnswer, sleeps: 1},
		{name: "retries run out", steps: []string{"stall", "stall", "stall", "stall"}, stalls: 4, stop: agent.StopError, sleeps: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			timers := &fakeTimers{}
			e := newEnv(t, agent.Config{ModelIdle: 90 * time.Second, AfterFunc: timers.after})
			m := newStallModel(tc.steps...)
			done := e.runAsync("c1", "hi", m)
			for range tc.stalls {
				<-m.stalled
				timers.fire(t, 90*time.Second)
			}
			r := <-done
			if r.err != nil || r.out.Stop != tc.stop || len(e.sleeps) != tc.sleeps {
				t.Fatalf("outcome %+v, error %v, sleeps %v", r.out, r.err, e.sleeps)
			}
			rec, err := e.st.GetTurn(context.Background(), "o1", r.out.TurnID)
			if err != nil {
				t.Fatal(err)
			}
			if rec.Status == store.TurnRunning || rec.EndedAt.IsZero() {
				t.Errorf("turn left %s", rec.Status)
			}
			if tc.stop != agent.StopError {
				return
			}
			want := []string{"The model provider stopped responding in the middle of the reply (the model sent nothing for 1m30s); try again shortly."}
			if diff := cmp.Diff(want, errorText(r.evs)); diff != "" {
				t.Errorf("error events (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStallAfterOutputIsNotRetried: a stream that went silent after it
// sent text is not retried (the user saw the text); the turn ends with
// one sentence.
func TestStallAfterOutputIsNotRetried(t *testing.T) {
	timers := &fakeTimers{}
	e := newEnv(t, agent.Config{AfterFunc: timers.after})
	m := newStallModel("text-stall")
	done := e.runAsync("c1", "hi", m)
	<-m.stalled
	timers.fire(t, agent.DefaultModelIdle)
	r := <-done
	if r.err != nil || r.out.Stop != agent.StopError || len(e.sleeps) != 0 {
		t.Fatalf("outcome %+v, error %v, sleeps %v", r.out, r.err, e.sleeps)
	}
	if diff := cmp.Diff([]string{"text", "error", "done"}, kinds(r.evs)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if got := errorText(r.evs); len(got) != 1 || !strings.Contains(got[0], "nothing for 1m0s") {
		t.Errorf("error events %q", got)
	}
	rec, _ := e.st.GetTurn(context.Background(), "o1", r.out.TurnID)
	if rec.Status != store.TurnFailed {
		t.Errorf("turn status %s", rec.Status)
	}
}

// TestTurnTimeLimit: a turn still running at MaxDuration (here in a tool
// that never returns) is stopped, recorded as interrupted, and ends with
// one error event then done; the conversation takes the next message.
func TestTurnTimeLimit(t *testing.T) {
	timers := &fakeTimers{}
	e := newEnv(t, agent.Config{MaxDuration: 20 * time.Minute, AfterFunc: timers.after})
	blocked := make(chan struct{}, 1)
	e.block = func(ctx context.Context) {
		blocked <- struct{}{}
		<-ctx.Done()
	}
	m := llmtest.NewModel(llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("w1", "wait", map[string]string{})}})
	done := e.runAsync("c1", "go", m)
	<-blocked
	timers.fire(t, 20*time.Minute)
	r := <-done
	if r.err != nil || r.out.Stop != agent.StopTimeLimit {
		t.Fatalf("outcome %+v, error %v", r.out, r.err)
	}
	got := kinds(r.evs)
	if slices.Index(got, "error") != len(got)-2 || got[len(got)-1] != "done" || r.evs[len(got)-1].Stop != agent.StopTimeLimit {
		t.Errorf("events %v", got)
	}
	want := []string{"The turn took longer than its limit of 20m0s and was stopped; what it did so far is saved."}
	if diff := cmp.Diff(want, errorText(r.evs)); diff != "" {
		t.Errorf("error events (-want +got):\n%s", diff)
	}
	rec, _ := e.st.GetTurn(context.Background(), "o1", r.out.TurnID)
	if rec.Status != store.TurnInterrupted || rec.EndedAt.IsZero() {
		t.Errorf("turn %s, ended %v", rec.Status, rec.EndedAt)
	}
	next, _ := e.run(context.Background(), "c1", "again", llmtest.NewModel(llmtest.Reply{Text: []string{"ok"}}))
	if next.Stop != agent.StopAnswer {
		t.Errorf("next turn %+v", next)
	}
}

// progressModel reports provider progress three times (as an adapter
// does for a tool call's argument deltas, which complete no event) before
// its inner model's reply, noting how often the idle watch had restarted
// by then.
type progressModel struct {
	llm.Model
	timers *fakeTimers
	seen   int
	had    bool
}

func (m *progressModel) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	m.had = req.Progress != nil
	for range 3 {
		if req.Progress != nil {
			req.Progress()
		}
	}
	m.seen = m.timers.resets(agent.DefaultModelIdle)
	return m.Model.Stream(ctx, req)
}

// TestProgressRestartsIdleWatch: what the provider sends that completes
// no event (a long tool call's arguments, thinking, keep-alives) restarts
// the idle watch, so a stream busy for longer than ModelIdle without an
// event is not cut.
func TestProgressRestartsIdleWatch(t *testing.T) {
	timers := &fakeTimers{}
	e := newEnv(t, agent.Config{AfterFunc: timers.after})
	m := &progressModel{Model: llmtest.NewModel(llmtest.Reply{Text: []string{"ok"}}), timers: timers}
	if out, _ := e.run(context.Background(), "c1", "hi", m); out.Stop != agent.StopAnswer {
		t.Fatalf("outcome %+v", out)
	}
	if !m.had || m.seen != 3 {
		t.Errorf("the model got a Progress hook: %v; the idle watch restarted %d times by three progress calls, want 3", m.had, m.seen)
	}
}
