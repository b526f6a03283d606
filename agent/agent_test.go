package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quiverhq/quiver/internal/golden"

	"github.com/google/go-cmp/cmp"
	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/builtin/ask"
	"github.com/quiverhq/quiver/builtin/calc"
	"github.com/quiverhq/quiver/dispatch"
	"github.com/quiverhq/quiver/ids"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
	"github.com/quiverhq/quiver/prompt"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
	"github.com/quiverhq/quiver/tmpl"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

var t0 = time.Date(2026, 11, 29, 23, 3, 0, 0, time.UTC)

var quiet = slog.New(slog.DiscardHandler)

// env is one test's world: a real SQLite store, a catalog with real and
// instrumented tools, and a runner with a fake clock and recorded sleeps.
type env struct {
	t       *testing.T
	dir     string
	st      *sqlite.Store
	cat     *registry.Catalog
	runner  *agent.Runner
	sleeps  []time.Duration
	mu      sync.Mutex
	order   []string // tool executions, in order
	barrier chan struct{}
	block   func(ctx context.Context) // run by the "wait" tool
}

type noteIn struct {
	Text string `json:"text"`
}

func newEnv(t *testing.T, cfg agent.Config) *env {
	t.Helper()
	e := &env{t: t, dir: t.TempDir(), barrier: make(chan struct{})}
	e.open()
	e.cat = registry.New()
	e.cat.Register(calc.Tool(), ask.Tool(),
		tool.New(tool.Spec{Name: "lookup", Description: "Read-only lookup.", Timeout: 10 * time.Second}, e.lookup),
		tool.New(tool.Spec{Name: "note", Description: "Writes a note.", Access: tool.Write}, e.note),
		tool.New(tool.Spec{Name: "wait", Description: "Blocks.", Timeout: time.Hour}, func(ctx context.Context, _ tool.Scope, _ struct{}) (string, error) {
			e.block(ctx)
			return "", ctx.Err()
		}),
		tool.New(tool.Spec{Name: "secret", Description: "Not allowed."}, func(context.Context, tool.Scope, struct{}) (string, error) { return "leak", nil }),
	)
	cfg.Store, cfg.Dispatcher = e.st, dispatch.New(dispatch.Config{Results: e.st, Threshold: 200, Preview: 50, IDs: &ids.Sequence{}, Logger: quiet})
	cfg.Logger = quiet
	cfg.Now = func() time.Time { return t0 }
	cfg.Sleep = func(_ context.Context, d time.Duration) error { e.sleeps = append(e.sleeps, d); return nil }
	e.runner = agent.New(cfg)
	return e
}

func (e *env) open() {
	st, err := sqlite.Open(context.Background(), e.dir)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { st.Close() })
	e.st = st
}

func (e *env) record(s string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.order = append(e.order, s)
}

// lookup is read-only; with key "pair" it waits until its pair has started
// too, so two lookups finish only if they run concurrently.
func (e *env) lookup(ctx context.Context, _ tool.Scope, in noteIn) (string, error) {
	e.record("lookup " + in.Text)
	if strings.HasPrefix(in.Text, "pair") {
		select {
		case e.barrier <- struct{}{}:
		case <-e.barrier:
		case <-ctx.Done():
			return "", errors.New("the other lookup never started: lookups ran one at a time")
		}
	}
	return "found " + in.Text, nil
}

func (e *env) note(_ context.Context, _ tool.Scope, in noteIn) (string, error) {
	e.record("note " + in.Text)
	return "noted " + in.Text, nil
}

func (e *env) facts(conv string) turn.Facts {
	return turn.Facts{
		Start:  t0,
		Caller: turn.Caller{UserID: "u1", DisplayName: "Ana", Organisation: "Acme", Timezone: "Asia/Ho_Chi_Minh"},
		Place:  turn.Place{OrgID: "o1", ConversationID: conv},
		Agent:  turn.Agent{Name: "helper", Prompt: tmpl.Author("Be brief."), Allow: []string{"lookup", "note", "wait"}},
		Model:  turn.Model{Provider: "fake", Name: "scripted", Caps: turn.Capabilities{Tools: true}},
		Payer:  "acme",
	}
}

func (e *env) start(conv, msg string, m llm.Model) agent.Start {
	f := e.facts(conv)
	ts := e.cat.Select(f)
	req, err := prompt.Assemble(f, ts)
	if err != nil {
		e.t.Fatal(err)
	}
	return agent.Start{Facts: f, Toolset: ts, Request: req, Model: m, Message: msg}
}

func (e *env) run(ctx context.Context, conv, msg string, m llm.Model) (agent.Outcome, []agent.Event) {
	e.t.Helper()
	var evs []agent.Event
	out, err := e.runner.Run(ctx, e.start(conv, msg, m), func(ev agent.Event) { evs = append(evs, ev) })
	if err != nil {
		e.t.Fatalf("Run: %v", err)
	}
	return out, evs
}

func (e *env) transcript(conv string) string {
	e.t.Helper()
	msgs, err := e.st.ListMessages(context.Background(), "o1", conv, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	var b strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&b, "%d %s", m.Seq, m.Role)
		if m.ToolName != "" {
			fmt.Fprintf(&b, " %s[%s]", m.ToolName, m.ToolCallID)
		}
		if m.IsError {
			b.WriteString(" error")
		}
		if m.Ref != "" {
			b.WriteString(" ref")
		}
		fmt.Fprintf(&b, ": %s\n", m.Content)
	}
	return b.String()
}

func kinds(evs []agent.Event) []string {
	var out []string
	for _, ev := range evs {
		out = append(out, string(ev.Kind))
	}
	return out
}

func TestAnswer(t *testing.T) {
	e := newEnv(t, agent.Config{Prices: map[string]agent.Price{"fake:scripted": {Input: 2, CachedInput: 0.5, Output: 8}}})
	m := llmtest.NewModel(llmtest.Reply{Text: []string{"Hi ", "Ana."}, Usage: llm.Usage{InputTokens: 1000, CachedInputTokens: 400, OutputTokens: 10}})
	out, evs := e.run(context.Background(), "c1", "hello", m)
	if out.Stop != agent.StopAnswer || out.Text != "Hi Ana." {
		t.Errorf("outcome %+v", out)
	}
	// 600×2 + 400×0.5 + 10×8 micro-units.
	if out.CostMicros != 1480 {
		t.Errorf("cost %d micros, want 1480", out.CostMicros)
	}
	if diff := cmp.Diff([]string{"text", "text", "usage", "done"}, kinds(evs)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	rec, err := e.st.GetTurn(context.Background(), "o1", out.TurnID)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != store.TurnDone || rec.Steps != 1 || rec.Timezone != "Asia/Ho_Chi_Minh" || rec.Model != "fake:scripted" {
		t.Errorf("turn %+v", rec)
	}
	if diff := cmp.Diff([]store.Exclusion{{Name: "secret", Reason: "not in the agent's allowlist"}}, rec.Excluded); diff != "" {
		t.Errorf("turn's exclusions (-want +got):\n%s", diff)
	}
	usage, err := e.st.ListUsage(context.Background(), "o1", out.TurnID)
	if err != nil || len(usage) != 1 || usage[0].CostMicros != 1480 || usage[0].Payer != "acme" {
		t.Errorf("usage %+v, %v", usage, err)
	}
	req := m.Requests()[0]
	// The agent's prompt, then the fragment calculate brings.
	if !strings.HasPrefix(req.System, "Be brief.\n\nFor arithmetic whose exact result matters, call `calculate`") || req.CacheKey != "helper" || len(req.Messages) != 2 || req.Messages[1].Text != "hello" {
		t.Errorf("request %+v", req)
	}
}

// TestTurnIDs: a turn started without an ID gets one from Config.IDs
// (random "turn_" and 20 hex digits by default); one that has an ID keeps it.
func TestTurnIDs(t *testing.T) {
	m := func() llm.Model { return llmtest.NewModel(llmtest.Reply{Text: []string{"ok"}}) }
	e := newEnv(t, agent.Config{IDs: &ids.Sequence{}})
	var got []string
	for range 2 {
		out, _ := e.run(context.Background(), "c1", "hi", m())
		got = append(got, out.TurnID)
	}
	s := e.start("c1", "hi", m())
	s.Facts.TurnID = "t-given"
	out, err := e.runner.Run(context.Background(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, out.TurnID)
	if diff := cmp.Diff([]string{"turn_1", "turn_2", "t-given"}, got); diff != "" {
		t.Errorf("turn IDs (-want +got):\n%s", diff)
	}
	if _, err := e.st.GetTurn(context.Background(), "o1", "turn_2"); err != nil {
		t.Errorf("turn_2 not stored under its ID: %v", err)
	}
	out, _ = newEnv(t, agent.Config{}).run(context.Background(), "c1", "hi", m())
	if !regexp.MustCompile(`^turn_[0-9a-f]{20}$`).MatchString(out.TurnID) {
		t.Errorf("default turn ID %q, want turn_ and 20 hex digits", out.TurnID)
	}
}

func TestToolCallsEndToEnd(t *testing.T) {
	e := newEnv(t, agent.Config{})
	m := llmtest.NewModel(
		llmtest.Reply{Text: []string{"Checking."}, ToolCalls: []llm.ToolCall{
			llmtest.Call("c1", "calculate", map[string]string{"expression": "0.1+0.2"}),
			llmtest.Call("c2", "secret", map[string]string{}),
			llmtest.Call("c3", "lookup", map[string]string{"text": strings.Repeat("x", 300)}),
		}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{
			llmtest.Call("c4", "lookup", map[string]string{"text": "pair-a"}),
			llmtest.Call("c5", "lookup", map[string]string{"text": "pair-b"}),
		}},
		llmtest.Reply{Text: []string{"0.3, and both found."}},
	)
	out, evs := e.run(context.Background(), "c1", "go", m)
	if out.Stop != agent.StopAnswer {
		t.Fatalf("outcome %+v", out)
	}
	golden.Check(t, "tool_calls.transcript", e.transcript("c1"))
	// The second model call saw the first step's results, in call order.
	reqs := m.Requests()
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if last.Role != llm.Tool || len(last.Results) != 3 || last.Results[0].Content != "0.3" || last.Results[1].Content != `Tool "secret" is not available.` {
		t.Errorf("results sent back: %+v", last)
	}
	var results int
	for _, ev := range evs {
		if ev.Kind == agent.EventToolResult {
			results++
			if ev.ConversationID != "c1" || ev.TurnID != out.TurnID {
				t.Errorf("event without ids: %+v", ev)
			}
		}
	}
	if results != 5 {
		t.Errorf("%d tool_result events, want 5", results)
	}
}

func TestWritesRunInCallOrder(t *testing.T) {
	e := newEnv(t, agent.Config{})
	m := llmtest.NewModel(
		llmtest.Reply{ToolCalls: []llm.ToolCall{
			llmtest.Call("a", "note", map[string]string{"text": "1"}),
			llmtest.Call("b", "lookup", map[string]string{"text": "2"}),
			llmtest.Call("c", "note", map[string]string{"text": "3"}),
			llmtest.Call("d", "note", map[string]string{"text": "4"}),
		}},
		llmtest.Reply{Text: []string{"done"}},
	)
	e.run(context.Background(), "c1", "go", m)
	if diff := cmp.Diff([]string{"note 1", "lookup 2", "note 3", "note 4"}, e.order); diff != "" {
		t.Errorf("execution order (-want +got):\n%s", diff)
	}
}

func TestPauseAndResume(t *testing.T) {
	e := newEnv(t, agent.Config{})
	m := llmtest.NewModel(llmtest.Reply{ToolCalls: []llm.ToolCall{
		llmtest.Call("q1", "ask_clarifying_question", map[string]any{"question": "Which year?", "suggested_answers": []string{"2026"}}),
	}})
	out, evs := e.run(context.Background(), "c1", "show the report", m)
	if out.Stop != agent.StopPause || out.Pause == nil || out.Pause.Question != "Which year?" || out.Pause.Suggested != "2026" {
		t.Fatalf("outcome %+v", out)
	}
	if k := kinds(evs); k[len(k)-2] != "pause" {
		t.Errorf("events %v: want pause before done", k)
	}
	rec, err := e.st.GetTurn(context.Background(), "o1", out.TurnID)
	if err != nil || rec.Status != store.TurnPaused || rec.Question != "Which year?" {
		t.Fatalf("stored turn %+v, %v", rec, err)
	}
	// The reasons of the turn's start, kept by the pause and by the resume
	// below (whose restored toolset has reasons of its own).
	wantExcluded := []store.Exclusion{{Name: "secret", Reason: "not in the agent's allowlist"}}
	if diff := cmp.Diff(wantExcluded, rec.Excluded); diff != "" {
		t.Errorf("paused turn's exclusions (-want +got):\n%s", diff)
	}

	// Resume: the same turn, its stored toolset and timezone.
	m.Push(llmtest.Reply{Text: []string{"Here is 2025."}})
	s := e.start("c1", "2025", m)
	s.Facts.TurnID = rec.ID
	s.Facts.Caller.Timezone = rec.Timezone
	s.Toolset = e.cat.Restore(rec.Tools)
	out2, err := e.runner.Resume(context.Background(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out2.Stop != agent.StopAnswer || out2.TurnID != out.TurnID {
		t.Errorf("resumed outcome %+v", out2)
	}
	rec, err = e.st.GetTurn(context.Background(), "o1", out.TurnID)
	if err != nil || rec.Status != store.TurnDone {
		t.Fatalf("resumed turn %+v, %v", rec, err)
	}
	if diff := cmp.Diff(wantExcluded, rec.Excluded); diff != "" {
		t.Errorf("resumed turn's exclusions (-want +got):\n%s", diff)
	}
	req := m.Requests()[1]
	if got := req.Messages[len(req.Messages)-1]; got.Role != llm.User || got.Text != "2025" {
		t.Errorf("answer not sent as the user's message: %+v", got)
	}
	if _, err := e.runner.Resume(context.Background(), s, nil); err == nil {
		t.Error("resuming a finished turn succeeded")
	}
}

func TestCancelAnswersEveryCall(t *testing.T) {
	e := newEnv(t, agent.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	e.block = func(c context.Context) {
		cancel() // the user presses stop while the tool runs
		<-c.Done()
	}
	m := llmtest.NewModel(llmtest.Reply{ToolCalls: []llm.ToolCall{
		llmtest.Call("w1", "wait", map[string]string{}),
		llmtest.Call("n1", "note", map[string]string{"text": "never"}),
	}})
	out, evs := e.run(ctx, "c1", "go", m)
	if out.Stop != agent.StopCancelled {
		t.Fatalf("outcome %+v", out)
	}
	golden.Check(t, "cancelled.transcript", e.transcript("c1"))
	// A cancel ends with done alone: it is not an error.
	if got := kinds(evs); got[len(got)-1] != "done" || slices.Contains(got, "error") || evs[len(evs)-1].Stop != agent.StopCancelled {
		t.Errorf("events %v", got)
	}
	rec, _ := e.st.GetTurn(context.Background(), "o1", out.TurnID)
	if rec.Status != store.TurnInterrupted || rec.EndedAt.IsZero() {
		t.Errorf("turn %+v", rec)
	}
	if len(e.order) != 0 {
		t.Errorf("a write ran after cancellation: %v", e.order)
	}
}

func TestCrashBetweenSteps(t *testing.T) {
	e := newEnv(t, agent.Config{})
	// A turn recorded a tool call, then the process died before its result.
	ctx := context.Background()
	for _, msg := range []store.Message{
		{ConversationID: "c1", TurnID: "t-old", Role: "user", Content: "do it"},
		{ConversationID: "c1", TurnID: "t-old", Role: "assistant", Content: ""},
		{ConversationID: "c1", TurnID: "t-old", Role: "tool_call", ToolName: "note", ToolCallID: "x1", Content: `{"text":"a"}`},
	} {
		msg.CreatedAt = t0
		if _, err := e.st.AppendMessage(ctx, "o1", msg); err != nil {
			t.Fatal(err)
		}
	}
	e.st.Close()
	e.open() // reopen: nothing torn
	e.runner = agent.New(agent.Config{Store: e.st, Dispatcher: dispatch.New(dispatch.Config{Results: e.st}), Now: func() time.Time { return t0 }, Logger: quiet})
	m := llmtest.NewModel(llmtest.Reply{Text: []string{"ok"}})
	e.run(ctx, "c1", "again", m)
	msgs := m.Requests()[0].Messages
	want := []llm.Message{
		{Role: llm.User, Text: "do it"},
		{Role: llm.Assistant, ToolCalls: []llm.ToolCall{{ID: "x1", Name: "note", Args: json.RawMessage(`{"text":"a"}`)}}},
		{Role: llm.Tool, Results: []llm.ToolResult{{CallID: "x1", Name: "note", Content: "interrupted: this call was never answered", IsError: true}}},
	}
	if diff := cmp.Diff(want, msgs[:3]); diff != "" {
		t.Errorf("history after a crash (-want +got):\n%s", diff)
	}
}

func TestStepLimit(t *testing.T) {
	e := newEnv(t, agent.Config{MaxSteps: 2})
	call := llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("c", "calculate", map[string]string{"expression": "1+1"})}}
	m := llmtest.NewModel(call, call, call)
	out, _ := e.run(context.Background(), "c1", "loop", m)
	if out.Stop != agent.StopStepLimit || !strings.Contains(out.Text, "I stopped after 2 steps") || len(m.Requests()) != 2 {
		t.Errorf("outcome %+v after %d model calls", out, len(m.Requests()))
	}
}

func TestRetries(t *testing.T) {
	e := newEnv(t, agent.Config{})
	m := llmtest.NewModel(
		llmtest.Reply{Fail: &llmtest.Failure{Status: 429, Kind: llm.ErrRateLimit, Message: "slow"}},
		llmtest.Reply{Fail: &llmtest.Failure{Status: 503, Kind: llm.ErrOverloaded, Message: "busy"}},
		llmtest.Reply{Text: []string{"made it"}},
	)
	out, _ := e.run(context.Background(), "c1", "hi", m)
	if out.Stop != agent.StopAnswer || len(e.sleeps) != 2 || e.sleeps[0] != time.Second || e.sleeps[1] != 2*time.Second {
		t.Errorf("outcome %+v, sleeps %v", out, e.sleeps)
	}
}

func TestProviderErrorIsOneClearMessage(t *testing.T) {
	e := newEnv(t, agent.Config{})
	m := llmtest.NewModel(llmtest.Reply{Fail: &llmtest.Failure{Status: 401, Kind: llm.ErrAuth, Message: "bad key sk-123"}})
	out, evs := e.run(context.Background(), "c1", "hi", m)
	if out.Stop != agent.StopError || len(e.sleeps) != 0 {
		t.Fatalf("outcome %+v, sleeps %v", out, e.sleeps)
	}
	var msg string
	for _, ev := range evs {
		if ev.Kind == agent.EventError {
			msg = ev.Error
		}
	}
	if msg != "The model provider refused the API key; check the key configured for this provider." {
		t.Errorf("error message %q", msg)
	}
	rec, _ := e.st.GetTurn(context.Background(), "o1", out.TurnID)
	if rec.Status != store.TurnFailed {
		t.Errorf("turn status %s", rec.Status)
	}
}

// TestChatMessageReachesTheModelVerbatim: a user's message is never a
// template, whatever it contains.
func TestChatMessageReachesTheModelVerbatim(t *testing.T) {
	e := newEnv(t, agent.Config{})
	msg := "{{if capability:self_teaching}}hi{{/if}} {memory_tool} {{else}} {calculator_tool}"
	m := llmtest.NewModel(llmtest.Reply{Text: []string{"ok"}})
	e.run(context.Background(), "c1", msg, m)
	msgs := m.Requests()[0].Messages
	if got := msgs[len(msgs)-1]; got.Role != llm.User || got.Text != msg {
		t.Errorf("sent %+v, want the message byte for byte", got)
	}
}

// TestSignaturesTravelWithinTheTurn: an opaque call signature (Gemini's
// thought signature) goes back to the model in the turn's next request.
func TestSignaturesTravelWithinTheTurn(t *testing.T) {
	e := newEnv(t, agent.Config{})
	call := llmtest.Call("s1", "calculate", map[string]string{"expression": "1+1"})
	call.Signature = []byte("opaque")
	m := llmtest.NewModel(llmtest.Reply{ToolCalls: []llm.ToolCall{call}}, llmtest.Reply{Text: []string{"2"}})
	e.run(context.Background(), "c1", "go", m)
	msgs := m.Requests()[1].Messages
	asst := msgs[len(msgs)-2]
	if len(asst.ToolCalls) != 1 || string(asst.ToolCalls[0].Signature) != "opaque" {
		t.Errorf("second request's assistant message %+v lost the signature", asst)
	}
}

func TestStoredExclusions(t *testing.T) {
	tests := []struct {
		name string
		ts   registry.Toolset
		want []store.Exclusion
	}{
		{"NothingLeftOut", registry.Toolset{}, []store.Exclusion{}},
		{"OrderKept", registry.New().Restore([]string{"gone_b", "gone_a"}), []store.Exclusion{
			{Name: "gone_b", Reason: "no longer registered"}, {Name: "gone_a", Reason: "no longer registered"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := agent.StoredExclusions(tc.ts)
			if got == nil {
				t.Fatal("StoredExclusions returned nil, which a store reads as \"not recorded\"")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("StoredExclusions (-want +got):\n%s", diff)
			}
		})
	}
}

// failingHistory is the store with a history that cannot be read.
type failingHistory struct{ *sqlite.Store }

func (failingHistory) ListMessages(context.Context, string, string, int64) ([]store.Message, error) {
	return nil, errors.New("sqlite: disk I/O error")
}

// TestHistoryFailureAfterStartEndsTurn: when the history cannot be read
// after the turn's start was written, the turn is recorded failed with
// one error event, not left running.
func TestHistoryFailureAfterStartEndsTurn(t *testing.T) {
	e := newEnv(t, agent.Config{})
	r := agent.New(agent.Config{Store: failingHistory{e.st}, Logger: quiet, Now: func() time.Time { return t0 },
		Dispatcher: dispatch.New(dispatch.Config{Results: e.st, IDs: &ids.Sequence{}, Logger: quiet})})
	var kinds []agent.EventKind
	out, _ := r.Run(context.Background(), e.start("c1", "hi", llmtest.NewModel(llmtest.Reply{Text: []string{"ok"}})), func(ev agent.Event) {
		kinds = append(kinds, ev.Kind)
	})
	rec, err := e.st.GetTurn(context.Background(), "o1", out.TurnID)
	if err != nil || rec.Status != store.TurnFailed {
		t.Errorf("the turn after its history failed: %q, %v; want failed", rec.Status, err)
	}
	if len(kinds) != 2 || kinds[0] != agent.EventError || kinds[1] != agent.EventDone {
		t.Errorf("events %v, want error then done", kinds)
	}
}

// TestResultImagesReachOnlyAVisionModel: a result's images go with its
// answer in the rest of the turn to a model with vision, and count in the
// request's token estimate; a model without vision gets the text alone.
func TestResultImagesReachOnlyAVisionModel(t *testing.T) {
	png := tool.Image{MIME: "image/png", Data: []byte("\x89PNG shot")}
	for _, vision := range []bool{true, false} {
		t.Run(fmt.Sprintf("vision=%v", vision), func(t *testing.T) {
			e := newEnv(t, agent.Config{})
			e.cat.Register(tool.New(tool.Spec{Name: "snap", Description: "Screenshot."}, func(context.Context, tool.Scope, struct{}) (tool.Result, error) {
				return tool.Result{Content: "a screenshot of the page", Images: []tool.Image{png}}, nil
			}))
			m := llmtest.NewModel(llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("s1", "snap", map[string]string{})}}, llmtest.Reply{Text: []string{"looks fine"}})
			st := e.start("c1", "check it", m)
			st.Facts.Agent.Allow = append(st.Facts.Agent.Allow, "snap")
			st.Facts.Model.Caps.Vision = vision
			st.Toolset = e.cat.Select(st.Facts)
			if _, err := e.runner.Run(context.Background(), st, func(agent.Event) {}); err != nil {
				t.Fatal(err)
			}
			msgs := m.Requests()[1].Messages
			last := msgs[len(msgs)-1]
			if last.Role != llm.Tool || len(last.Results) != 1 || last.Results[0].Content != "a screenshot of the page" {
				t.Fatalf("last message %+v, want the snap result", last)
			}
			var want []llm.Image
			if vision {
				want = []llm.Image{png}
			}
			if diff := cmp.Diff(want, last.Results[0].Images); diff != "" {
				t.Errorf("images (-want +got):\n%s", diff)
			}
			withImage := agent.EstimateTokens(llm.Request{Messages: []llm.Message{last}})
			last.Results[0].Images = nil
			if vision && withImage-agent.EstimateTokens(llm.Request{Messages: []llm.Message{last}}) < 1000 {
				t.Errorf("the image added %d tokens to the estimate", withImage-agent.EstimateTokens(llm.Request{Messages: []llm.Message{last}}))
			}
		})
	}
}
