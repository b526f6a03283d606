package runs_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/runs"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
)

// clock is a settable clock shared by the registries of a test.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// world is one store with a clock, and the registries of "replicas" over
// it.
type world struct {
	t   *testing.T
	st  *sqlite.Store
	clk *clock
}

func newWorld(t *testing.T) *world {
	t.Helper()
	st, err := sqlite.Open(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &world{t: t, st: st, clk: &clock{t: time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)}}
}

// replica is a registry named name; its text is gathered for an hour, so
// only a non-text event or End stores and sends it.
func (w *world) replica(name string, runsStore store.Runs) *runs.Registry {
	w.t.Helper()
	if runsStore == nil {
		runsStore = w.st
	}
	reg, err := runs.New(runs.Config{Runs: runsStore, Events: w.st, Turns: w.st, Replica: name, Now: w.clk.Now,
		Lease: 30 * time.Second, Heartbeat: 2 * time.Second})
	if err != nil {
		w.t.Fatal(err)
	}
	runs.HoldText(reg, time.Hour)
	return reg
}

// exclusive is a registry of the store's only process.
func (w *world) exclusive(name string) *runs.Registry {
	w.t.Helper()
	reg, err := runs.New(runs.Config{Runs: w.st, Events: w.st, Turns: w.st, Replica: name, Now: w.clk.Now, Exclusive: true})
	if err != nil {
		w.t.Fatal(err)
	}
	return reg
}

// turn stores a running turn of conv for user alice.
func (w *world) turn(conv, turnID string) {
	w.t.Helper()
	now := w.clk.Now()
	if err := w.st.PutConversation(w.t.Context(), store.Conversation{ID: conv, OrgID: "org", UserID: "alice", Agent: "a", CreatedAt: now, UpdatedAt: now}); err != nil {
		w.t.Fatal(err)
	}
	if err := w.st.PutTurn(w.t.Context(), store.Turn{ID: turnID, OrgID: "org", UserID: "alice", ConversationID: conv, Agent: "a",
		Status: store.TurnRunning, StartedAt: now}); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) claim(reg *runs.Registry, conv, turnID string) *runs.Run {
	w.t.Helper()
	run, err := reg.Claim(w.t.Context(), runs.Turn{OrgID: "org", ConversationID: conv, TurnID: turnID, UserID: "alice"})
	if err != nil {
		w.t.Fatalf("Claim %s: %v", conv, err)
	}
	w.t.Cleanup(run.End)
	return run
}

func (w *world) status(turnID string) string {
	w.t.Helper()
	tu, err := w.st.GetTurn(w.t.Context(), "org", turnID)
	if err != nil {
		w.t.Fatal(err)
	}
	return tu.Status
}

func cause(run *runs.Run) error {
	if run.Context().Err() == nil {
		return nil
	}
	return context.Cause(run.Context())
}

func TestClaimRefusesSecondReplica(t *testing.T) {
	w := newWorld(t)
	a, b := w.replica("a", nil), w.replica("b", nil)
	w.turn("c1", "t1")
	w.claim(a, "c1", "t1")
	if _, err := b.Claim(t.Context(), runs.Turn{OrgID: "org", ConversationID: "c1", TurnID: "t2", UserID: "alice"}); !errors.Is(err, runs.ErrRunning) {
		t.Fatalf("second claim on another replica: %v, want ErrRunning", err)
	}
	if _, err := a.Claim(t.Context(), runs.Turn{OrgID: "org", ConversationID: "c1", TurnID: "t2", UserID: "alice"}); !errors.Is(err, runs.ErrRunning) {
		t.Fatalf("second claim on the same replica: %v, want ErrRunning", err)
	}
	if !a.Local("org", "c1") || b.Local("org", "c1") {
		t.Errorf("Local: a %v, b %v; want true, false", a.Local("org", "c1"), b.Local("org", "c1"))
	}
	if _, live, err := b.Running(t.Context(), "org", "c1"); err != nil || !live {
		t.Errorf("Running seen from b: %v, %v; want live", live, err)
	}
}

func TestEndReleasesConversation(t *testing.T) {
	w := newWorld(t)
	a, b := w.replica("a", nil), w.replica("b", nil)
	run := w.claim(a, "c1", "t1")
	run.End()
	if !errors.Is(cause(run), context.Canceled) {
		t.Errorf("an ended run's context: %v, want plain cancellation", cause(run))
	}
	w.claim(b, "c1", "t2")
}

func TestCancelHereIsImmediate(t *testing.T) {
	w := newWorld(t)
	a := w.replica("a", nil)
	run := w.claim(a, "c1", "t1")
	if ok, err := a.Cancel(t.Context(), "org", "c1"); !ok || err != nil {
		t.Fatalf("Cancel: %v, %v", ok, err)
	}
	if !errors.Is(cause(run), runs.ErrCancelled) {
		t.Errorf("cause after a cancel on the same replica: %v, want ErrCancelled", cause(run))
	}
	if ok, err := a.Cancel(t.Context(), "org", "nothing-runs"); ok || err != nil {
		t.Errorf("Cancel of an idle conversation: %v, %v; want false, nil", ok, err)
	}
}

func TestCancelFromOtherReplicaAtHeartbeat(t *testing.T) {
	w := newWorld(t)
	a, b := w.replica("a", nil), w.replica("b", nil)
	run := w.claim(a, "c1", "t1")
	other := w.claim(a, "c2", "t2")
	if ok, err := b.Cancel(t.Context(), "org", "c1"); !ok || err != nil {
		t.Fatalf("Cancel from b: %v, %v", ok, err)
	}
	if cause(run) != nil {
		t.Fatalf("cancelled before a's heartbeat: %v", cause(run))
	}
	a.Heartbeat(t.Context())
	if !errors.Is(cause(run), runs.ErrCancelled) {
		t.Errorf("cause after a's heartbeat: %v, want ErrCancelled", cause(run))
	}
	if cause(other) != nil {
		t.Errorf("the other conversation's run stopped too: %v", cause(other))
	}
}

func TestCancelUserReachesEveryReplica(t *testing.T) {
	w := newWorld(t)
	a, b := w.replica("a", nil), w.replica("b", nil)
	onA, onB := w.claim(a, "c1", "t1"), w.claim(b, "c2", "t2")
	bob, err := b.Claim(t.Context(), runs.Turn{OrgID: "org", ConversationID: "c3", TurnID: "t3", UserID: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	defer bob.End()
	if err := b.CancelUser(t.Context(), "org", "alice"); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(cause(onB), runs.ErrCancelled) {
		t.Errorf("alice's run on b: %v, want cancelled at once", cause(onB))
	}
	a.Heartbeat(t.Context())
	if !errors.Is(cause(onA), runs.ErrCancelled) {
		t.Errorf("alice's run on a after its heartbeat: %v, want ErrCancelled", cause(onA))
	}
	b.Heartbeat(t.Context())
	if cause(bob) != nil {
		t.Errorf("bob's run: %v, want running", cause(bob))
	}
}

func TestDeadReplicaReapedAndHolderStops(t *testing.T) {
	w := newWorld(t)
	a, b := w.replica("a", nil), w.replica("b", nil)
	w.turn("c1", "t1")
	run := w.claim(a, "c1", "t1")
	w.clk.Add(29 * time.Second)
	b.Reap(t.Context())
	if got := w.status("t1"); got != store.TurnRunning {
		t.Fatalf("reaped within the lease: %q", got)
	}
	// a renews in time: its lease runs 30s from now.
	a.Heartbeat(t.Context())
	w.clk.Add(29 * time.Second)
	b.Reap(t.Context())
	if got := w.status("t1"); got != store.TurnRunning || cause(run) != nil {
		t.Fatalf("after a renewed: %q, %v; want still running", got, cause(run))
	}
	// a stops renewing (it hangs); past its lease b reaps the turn.
	w.clk.Add(2 * time.Second)
	b.Reap(t.Context())
	if got := w.status("t1"); got != store.TurnInterrupted {
		t.Fatalf("after the lease passed: %q, want interrupted", got)
	}
	// The conversation is free again.
	w.claim(b, "c1", "t2")
	// a wakes up: its heartbeat finds the run gone and stops the turn.
	a.Heartbeat(t.Context())
	if !errors.Is(cause(run), runs.ErrLeaseLost) {
		t.Errorf("a's run after its lease was reaped: %v, want ErrLeaseLost", cause(run))
	}
}

// failingRuns fails RenewRuns while fail is set.
type failingRuns struct {
	store.Runs
	fail bool
}

func (f *failingRuns) RenewRuns(ctx context.Context, replica string, now, expires time.Time) ([]store.Run, error) {
	if f.fail {
		return nil, errors.New("connection refused")
	}
	return f.Runs.RenewRuns(ctx, replica, now, expires)
}

func TestUnreachableStoreStopsRunsAfterLease(t *testing.T) {
	w := newWorld(t)
	fr := &failingRuns{Runs: w.st}
	a := w.replica("a", fr)
	run := w.claim(a, "c1", "t1")
	fr.fail = true
	w.clk.Add(20 * time.Second)
	a.Heartbeat(t.Context())
	if cause(run) != nil {
		t.Fatalf("stopped within the lease: %v", cause(run))
	}
	w.clk.Add(11 * time.Second)
	a.Heartbeat(t.Context())
	if !errors.Is(cause(run), runs.ErrLeaseLost) {
		t.Errorf("after its lease passed unrenewed: %v, want ErrLeaseLost", cause(run))
	}
}

// claimingRuns claims another conversation while a RenewRuns is in
// flight, as a request does on another goroutine.
type claimingRuns struct {
	store.Runs
	during func()
}

func (c *claimingRuns) RenewRuns(ctx context.Context, replica string, now, expires time.Time) ([]store.Run, error) {
	got, err := c.Runs.RenewRuns(ctx, replica, now, expires)
	if c.during != nil {
		c.during()
		c.during = nil
	}
	return got, err
}

func TestHeartbeatKeepsRunClaimedMeanwhile(t *testing.T) {
	w := newWorld(t)
	cr := &claimingRuns{Runs: w.st}
	a := w.replica("a", cr)
	var late *runs.Run
	cr.during = func() { late = w.claim(a, "c1", "t1") }
	a.Heartbeat(t.Context())
	if late == nil || cause(late) != nil {
		t.Fatalf("a run claimed while the heartbeat was in flight: %v, want running", cause(late))
	}
	a.Heartbeat(t.Context())
	if cause(late) != nil {
		t.Errorf("after the next heartbeat: %v, want running", cause(late))
	}
}

// slowClaims holds ClaimRun until release is closed, after telling
// started.
type slowClaims struct {
	store.Runs
	started, release chan struct{}
}

func (s *slowClaims) ClaimRun(ctx context.Context, r store.Run) (*store.Run, error) {
	close(s.started)
	<-s.release
	return s.Runs.ClaimRun(ctx, r)
}

// TestHeartbeatKeepsClaimCommittedAfterItsRenewal: a claim that began
// before a heartbeat and committed after the heartbeat's renewal read the
// runs is absent from its answer, yet not lost.
func TestHeartbeatKeepsClaimCommittedAfterItsRenewal(t *testing.T) {
	w := newWorld(t)
	slow := &slowClaims{Runs: w.st, started: make(chan struct{}), release: make(chan struct{})}
	cr := &claimingRuns{Runs: slow}
	a := w.replica("a", cr)
	claimed := make(chan *runs.Run, 1)
	go func() {
		run, err := a.Claim(t.Context(), runs.Turn{OrgID: "org", ConversationID: "c1", TurnID: "t1", UserID: "alice"})
		if err != nil {
			t.Error(err)
		}
		claimed <- run
	}()
	<-slow.started
	var run *runs.Run
	cr.during = func() {
		close(slow.release)
		run = <-claimed
	}
	a.Heartbeat(t.Context())
	if run == nil {
		t.Fatal("the claim did not finish")
	}
	defer run.End()
	if cause(run) != nil {
		t.Errorf("a claim committed after the renewal read: %v, want running", cause(run))
	}
}

func TestAnswerNumbersEventsOn(t *testing.T) {
	w := newWorld(t)
	a, b := w.replica("a", nil), w.replica("b", nil)
	w.turn("c1", "t1")
	first := w.claim(a, "c1", "t1")
	first.Emit(text("Which unit?"))
	first.Emit(agent.Event{Kind: agent.EventPause, ConversationID: "c1", TurnID: "t1"})
	first.Emit(agent.Event{Kind: agent.EventDone, ConversationID: "c1", TurnID: "t1", Stop: "pause"})
	first.End()
	// The answer runs the same turn, on the other replica.
	second, err := b.Claim(t.Context(), runs.Turn{OrgID: "org", ConversationID: "c1", TurnID: "t1", UserID: "alice", Continues: true})
	if err != nil {
		t.Fatal(err)
	}
	var live sink
	second.SetSink(live.add)
	second.Emit(text("12 metres"))
	second.Emit(agent.Event{Kind: agent.EventDone, ConversationID: "c1", TurnID: "t1", Stop: "answer"})
	second.End()
	if got := live.got(); len(got) != 2 || got[0].Seq != 4 || got[1].Seq != 5 {
		t.Fatalf("the answer's events: %+v, want numbered 4 and 5", got)
	}
	var seqs []int64
	if err := b.Follow(t.Context(), "org", "c1", "t1", 3, func(ev runs.Event) error { seqs = append(seqs, ev.Seq); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(seqs, []int64{4, 5}) {
		t.Errorf("resumed after the pause's done: %v, want [4 5]", seqs)
	}
	if got := stored(t, w, "t1"); len(got) != 5 {
		t.Errorf("stored %d events, want all 5 (the answer's not refused as repeats)", len(got))
	}
}

// failingEvents fails every AppendTurnEvents while fail is set.
type failingEvents struct {
	store.TurnEvents
	fail  bool
	tries int
}

func (f *failingEvents) AppendTurnEvents(ctx context.Context, orgID, conversationID, turnID string, evs []store.TurnEvent) error {
	f.tries++
	if f.fail {
		return errors.New("disk full")
	}
	return f.TurnEvents.AppendTurnEvents(ctx, orgID, conversationID, turnID, evs)
}

// TestFailedBatchStopsRecording: a batch that cannot be stored (twice)
// ends the recording, so readers see the stream end, never a gap.
func TestFailedBatchStopsRecording(t *testing.T) {
	w := newWorld(t)
	fe := &failingEvents{TurnEvents: w.st}
	reg, err := runs.New(runs.Config{Runs: w.st, Events: fe, Turns: w.st, Replica: "a", Now: w.clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	runs.HoldText(reg, time.Hour)
	run := w.claim(reg, "c1", "t1")
	run.Emit(agent.Event{Kind: agent.EventPause, ConversationID: "c1", TurnID: "t1"}) // stored: 1
	fe.fail = true
	run.Emit(agent.Event{Kind: agent.EventPause, ConversationID: "c1", TurnID: "t1"}) // fails twice: 2
	fe.fail = false
	run.Emit(agent.Event{Kind: agent.EventDone, ConversationID: "c1", TurnID: "t1"}) // not stored: 3
	run.End()
	if fe.tries != 3 {
		t.Errorf("%d appends, want 1, then 2 tries of the failing batch, then none", fe.tries)
	}
	if got := stored(t, w, "t1"); len(got) != 1 || got[0].Seq != 1 {
		t.Errorf("stored: %d events, want only the first", len(got))
	}
}

func TestLoopStopsRunsWhenItEnds(t *testing.T) {
	w := newWorld(t)
	a := w.replica("a", nil)
	run := w.claim(a, "c1", "t1")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { a.Loop(ctx); close(done) }()
	cancel()
	<-done
	if !errors.Is(cause(run), runs.ErrStopping) {
		t.Errorf("after Loop returned: %v, want ErrStopping", cause(run))
	}
}

func TestRecover(t *testing.T) {
	w := newWorld(t)
	old := w.replica("old", nil)
	w.turn("c1", "t1")
	w.turn("c2", "t2") // running, with no run: an orphan
	w.claim(old, "c1", "t1")

	w.clk.Add(time.Second)
	// Replicas: a live lease is left alone, the orphan is interrupted.
	peer := w.replica("peer", nil)
	if n, err := peer.Recover(t.Context()); err != nil || n != 1 {
		t.Fatalf("Recover on a shared database: %d, %v; want 1", n, err)
	}
	if w.status("t1") != store.TurnRunning || w.status("t2") != store.TurnInterrupted {
		t.Fatalf("after Recover on a shared database: t1 %q, t2 %q", w.status("t1"), w.status("t2"))
	}
	// One process (SQLite): the old run is dead whatever its lease says.
	next := w.exclusive("next")
	if n, err := next.Recover(t.Context()); err != nil || n != 1 {
		t.Fatalf("Recover alone: %d, %v; want 1", n, err)
	}
	if w.status("t1") != store.TurnInterrupted {
		t.Errorf("the old run's turn after Recover alone: %q, want interrupted", w.status("t1"))
	}
	w.claim(next, "c1", "t3")
}

// sink collects what a run sends live.
type sink struct {
	mu  sync.Mutex
	evs []runs.Event
}

func (s *sink) add(ev runs.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.evs = append(s.evs, ev)
}

func (s *sink) got() []runs.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.evs)
}

func text(s string) agent.Event {
	return agent.Event{Kind: agent.EventText, ConversationID: "c1", TurnID: "t1", Text: s}
}

func kindsAndText(t *testing.T, evs []runs.Event) []string {
	t.Helper()
	var out []string
	for i, e := range evs {
		if e.Seq != int64(i+1) {
			t.Errorf("event %d numbered %d", i, e.Seq)
		}
		var ev agent.Event
		if err := json.Unmarshal(e.Data, &ev); err != nil {
			t.Fatal(err)
		}
		if string(ev.Kind) != string(e.Kind) {
			t.Errorf("event %d: kind %q, data says %q", i, e.Kind, ev.Kind)
		}
		out = append(out, string(e.Kind)+":"+ev.Text)
	}
	return out
}

func stored(t *testing.T, w *world, turnID string) []runs.Event {
	t.Helper()
	evs, err := w.st.ListTurnEvents(t.Context(), "org", turnID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []runs.Event
	for _, e := range evs {
		out = append(out, runs.Event{Seq: e.Seq, Kind: agent.EventKind(e.Kind), Data: e.Data})
	}
	return out
}

func TestRecordGathersTextAndBatchesWrites(t *testing.T) {
	w := newWorld(t)
	a := w.replica("a", nil)
	run := w.claim(a, "c1", "t1")
	var live sink
	run.SetSink(live.add)
	run.Emit(text("Hel"))
	run.Emit(text("lo"))
	if got := live.got(); len(got) != 0 {
		t.Fatalf("text sent before it was gathered: %v", kindsAndText(t, got))
	}
	if run.Last() != agent.EventText {
		t.Errorf("Last while gathering: %q", run.Last())
	}
	run.Emit(agent.Event{Kind: agent.EventToolCall, ConversationID: "c1", TurnID: "t1"})
	run.Emit(text(" world"))
	run.Emit(agent.Event{Kind: agent.EventUsage, ConversationID: "c1", TurnID: "t1"})
	want := []string{"text:Hello", "tool_call:", "text: world", "usage:"}
	if got := kindsAndText(t, live.got()); !slices.Equal(got, want) {
		t.Fatalf("live: %v, want %v", got, want)
	}
	if got := stored(t, w, "t1"); len(got) != 0 {
		t.Fatalf("stored before the batch's time or the turn's end: %d events, want none (one write per batch)", len(got))
	}
	run.Emit(agent.Event{Kind: agent.EventDone, ConversationID: "c1", TurnID: "t1", Stop: "answer"})
	want = append(want, "done:")
	if got := kindsAndText(t, live.got()); !slices.Equal(got, want) {
		t.Errorf("live after done: %v, want %v", got, want)
	}
	if got := kindsAndText(t, stored(t, w, "t1")); !slices.Equal(got, want) {
		t.Errorf("stored after done: %v, want %v", got, want)
	}
	run.End()
	run.Emit(text("late"))
	if got := stored(t, w, "t1"); len(got) != len(want) {
		t.Errorf("an event after End was recorded: %d events", len(got))
	}
}

func TestRecordBoundsGatheredText(t *testing.T) {
	w := newWorld(t)
	a := w.replica("a", nil)
	run := w.claim(a, "c1", "t1")
	var live sink
	run.SetSink(live.add)
	chunk := strings.Repeat("x", 1000)
	for range 200 {
		run.Emit(text(chunk))
	}
	run.End()
	got := live.got()
	if len(got) < 3 {
		t.Fatalf("200 KB of text in %d events, want it cut into events of at most 64 KiB", len(got))
	}
	var total int
	for _, e := range got {
		var ev agent.Event
		if err := json.Unmarshal(e.Data, &ev); err != nil {
			t.Fatal(err)
		}
		if len(ev.Text) > 64<<10+len(chunk) {
			t.Errorf("event %d holds %d bytes of text", e.Seq, len(ev.Text))
		}
		total += len(ev.Text)
	}
	if total != 200*1000 {
		t.Errorf("text lost or repeated: %d bytes, want %d", total, 200*1000)
	}
	if s := stored(t, w, "t1"); len(s) != len(got) {
		t.Errorf("stored %d events, sent %d", len(s), len(got))
	}
}

func TestRecordShrinksOversizedEvent(t *testing.T) {
	w := newWorld(t)
	a := w.replica("a", nil)
	run := w.claim(a, "c1", "t1")
	huge := strings.Repeat("y", store.MaxTurnEventData+10)
	run.Emit(agent.Event{Kind: agent.EventToolResult, ConversationID: "c1", TurnID: "t1",
		Result: &agent.Result{CallID: "k", Name: "read_file", Content: huge}})
	run.End()
	got := stored(t, w, "t1")
	if len(got) != 1 {
		t.Fatalf("stored %d events, want the one result", len(got))
	}
	var ev agent.Event
	if err := json.Unmarshal(got[0].Data, &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Result == nil || ev.Result.CallID != "k" || !strings.Contains(ev.Result.Content, "too large") {
		t.Errorf("the oversized result as recorded: %+v", ev.Result)
	}
}

func TestFollowResumesOnOtherReplica(t *testing.T) {
	w := newWorld(t)
	a, b := w.replica("a", nil), w.replica("b", nil)
	w.turn("c1", "t1")
	run := w.claim(a, "c1", "t1")
	var live sink
	run.SetSink(live.add)
	run.Emit(text("one"))
	run.Emit(agent.Event{Kind: agent.EventToolCall, ConversationID: "c1", TurnID: "t1"})
	run.Emit(agent.Event{Kind: agent.EventPause, ConversationID: "c1", TurnID: "t1"}) // stores the batch

	// A reader on b that saw event 1 resumes after it, and waits for the
	// rest while the turn runs on a.
	got := make(chan runs.Event, 16)
	ended := make(chan error, 1)
	go func() {
		ended <- b.Follow(t.Context(), "org", "c1", "t1", 1, func(ev runs.Event) error { got <- ev; return nil })
	}()
	for _, want := range []int64{2, 3} {
		if ev := <-got; ev.Seq != want {
			t.Fatalf("resumed event %d, want %d", ev.Seq, want)
		}
	}
	run.Emit(text("two"))
	run.Emit(agent.Event{Kind: agent.EventDone, ConversationID: "c1", TurnID: "t1"})
	for _, want := range []int64{4, 5} {
		if ev := <-got; ev.Seq != want {
			t.Fatalf("followed event %d, want %d", ev.Seq, want)
		}
	}
	if err := <-ended; err != nil {
		t.Errorf("Follow after done: %v, want nil", err)
	}
	if n := len(live.got()); n != 5 {
		t.Errorf("live saw %d events, want the same 5", n)
	}
}

func TestFollowEndsWhenTurnStopsWithoutEnd(t *testing.T) {
	w := newWorld(t)
	a, b := w.replica("a", nil), w.replica("b", nil)
	w.turn("c1", "t1")
	run := w.claim(a, "c1", "t1")
	run.Emit(text("partial"))
	run.End() // stops with no done (as a cancelled engine might)
	var got []int64
	err := b.Follow(t.Context(), "org", "c1", "t1", 0, func(ev runs.Event) error { got = append(got, ev.Seq); return nil })
	if !errors.Is(err, runs.ErrNoEnd) || !slices.Equal(got, []int64{1}) {
		t.Errorf("Follow of a turn that stopped without an end: %v, events %v; want ErrNoEnd after [1]", err, got)
	}
}

func TestConfigCheck(t *testing.T) {
	for _, c := range []struct {
		cfg  runs.Config
		want string
	}{
		{runs.Config{Lease: 4 * time.Second, Heartbeat: 2 * time.Second}, "longer than two heartbeats"},
		{runs.Config{TextFlush: 2 * time.Second}, "text_flush"},
		{runs.Config{Reap: -time.Second}, "runs.reap"},
		{runs.Config{Retention: 48 * time.Hour}, "runs.events_retention"},
	} {
		if err := c.cfg.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Check(%+v) = %v, want an error naming %q", c.cfg, err, c.want)
		}
	}
	if err := (runs.Config{}).Check(); err != nil {
		t.Errorf("the defaults: %v", err)
	}
}

// cancellingClaims calls cancel right after its ClaimRun commits, as a
// cancel arriving between a claim's commit and its registration does.
type cancellingClaims struct {
	store.Runs
	cancel func()
}

func (c *cancellingClaims) ClaimRun(ctx context.Context, r store.Run) (*store.Run, error) {
	expired, err := c.Runs.ClaimRun(ctx, r)
	if err == nil {
		c.cancel()
	}
	return expired, err
}

// TestCancelBetweenClaimCommitAndRegistration: a cancel answered as
// accepted while the claim it found was committed but not yet held here
// stops the run as soon as Claim returns, not at the next heartbeat.
func TestCancelBetweenClaimCommitAndRegistration(t *testing.T) {
	w := newWorld(t)
	cc := &cancellingClaims{Runs: w.st}
	a := w.replica("a", cc)
	accepted := false
	cc.cancel = func() {
		ok, err := a.Cancel(t.Context(), "org", "c1")
		if err != nil {
			t.Fatal(err)
		}
		accepted = ok
	}
	run := w.claim(a, "c1", "t1")
	if !accepted {
		t.Fatal("the cancel found no running turn")
	}
	if !errors.Is(cause(run), runs.ErrCancelled) {
		t.Errorf("cause after a cancel accepted during the claim: %v, want ErrCancelled", cause(run))
	}
	// The early cancel was for that turn only: the conversation's next
	// turn runs.
	run.End()
	cc.cancel = func() {}
	if next := w.claim(a, "c1", "t2"); cause(next) != nil {
		t.Errorf("the next turn: %v, want running", cause(next))
	}
}

// endingCancels runs during after its RequestCancel commits, as a turn
// ending between a cancel's store call and its look at the local runs.
type endingCancels struct {
	store.Runs
	during func()
}

func (e *endingCancels) RequestCancel(ctx context.Context, orgID, conversationID string) (store.Run, error) {
	sr, err := e.Runs.RequestCancel(ctx, orgID, conversationID)
	if err == nil && e.during != nil {
		e.during()
	}
	return sr, err
}

// TestCancelOfEndedRunSparesItsNextClaim: a cancel that reaches a run
// which ended meanwhile stashes nothing, so answering the paused turn
// later (a claim of the same turn) runs.
func TestCancelOfEndedRunSparesItsNextClaim(t *testing.T) {
	w := newWorld(t)
	ec := &endingCancels{Runs: w.st}
	a := w.replica("a", ec)
	first := w.claim(a, "c1", "t1")
	ec.during = first.End
	if _, err := a.Cancel(t.Context(), "org", "c1"); err != nil {
		t.Fatal(err)
	}
	ec.during = nil
	run, err := a.Claim(t.Context(), runs.Turn{OrgID: "org", ConversationID: "c1", TurnID: "t1", UserID: "alice", Continues: true})
	if err != nil {
		t.Fatal(err)
	}
	defer run.End()
	if cause(run) != nil {
		t.Errorf("the answered turn: %v, want running", cause(run))
	}
}
