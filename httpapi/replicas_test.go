package httpapi_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/runs"
	"github.com/quiverhq/quiver/store"
)

// pair is the fixture's server (replica a) and a second server over the
// same store (replica b), each with its own runs registry, as two
// replicas of one deployment.
type pair struct {
	a, b       *fixture
	regA, regB *runs.Registry
}

func newPair(t *testing.T) *pair {
	t.Helper()
	p := &pair{}
	newReg := func(c *httpapi.Config, name string) *runs.Registry {
		reg, err := runs.New(runs.Config{Runs: c.Store, Events: c.Store, Turns: c.Store, Replica: name, Now: c.Now})
		if err != nil {
			t.Fatal(err)
		}
		return reg
	}
	var cfg httpapi.Config
	p.a = newFixture(t, func(c *httpapi.Config) {
		p.regA = newReg(c, "a")
		c.Runs = p.regA
		cfg = *c
	})
	p.regB = newReg(&cfg, "b")
	cfg.Runs = p.regB
	b := *p.a
	b.srv = httptest.NewServer(httpapi.New(cfg))
	t.Cleanup(b.srv.Close)
	p.b = &b
	return p
}

// blockOnA starts a blocking turn of bob's on replica a (script "block"
// or "block-bare") and returns its stream after the first event. The turn
// is stored as running, as the engine stores it.
func (p *pair) blockOnA(t *testing.T, script string) (*bufio.Reader, sseEvent) {
	t.Helper()
	p.a.conversation("org_a", "bob", "conv_bob")
	p.a.must(p.a.st.PutTurn(t.Context(), store.Turn{ID: "turn_b", OrgID: "org_a", UserID: "bob", ConversationID: "conv_bob",
		Agent: "helper", Status: store.TurnRunning, StartedAt: start}))
	resp := p.a.open(p.a.bob, "/api/conversations/conv_bob/messages", map[string]any{"message": script})
	t.Cleanup(func() { resp.Body.Close() })
	br := bufio.NewReader(resp.Body)
	first, err := readEvent(t, br)
	p.a.must(err)
	return br, first
}

func TestCancelReachesTurnOnOtherReplica(t *testing.T) {
	p := newPair(t)
	br, _ := p.blockOnA(t, "block")
	wantError(t, p.b.do(p.b.bob, "POST", "/api/conversations/conv_bob/messages", map[string]any{"message": "hi"}), http.StatusConflict, "turn_running")
	var c httpapi.Conversation
	p.b.ok(p.b.do(p.b.bob, "GET", "/api/conversations/conv_bob", nil), 200, &c)
	if !c.Running {
		t.Error("the other replica says running=false")
	}
	p.b.ok(p.b.do(p.b.bob, "POST", "/api/conversations/conv_bob/cancel", nil), http.StatusAccepted, nil)
	p.regA.Heartbeat(t.Context())
	if err := <-p.a.eng.blocked; !errors.Is(err, runs.ErrCancelled) {
		t.Errorf("the turn's context ended with %v, want runs.ErrCancelled", err)
	}
	rest := readAll(t, br)
	if len(rest) != 1 || rest[0].Data.Stop != agent.StopCancelled {
		t.Errorf("the stream on a after the cancel on b: %+v", rest)
	}
	p.b.ok(p.b.do(p.b.bob, "POST", "/api/conversations/conv_bob/messages", map[string]any{"message": "hi"}), 200, nil)
}

func TestEventsResumeOnOtherReplica(t *testing.T) {
	p := newPair(t)
	_, first := p.blockOnA(t, "block")
	resumed := p.b.openEvents(p.b.bob, "/api/conversations/conv_bob/events?turn=turn_b", "Last-Event-ID: 1")
	defer resumed.Body.Close()
	p.a.ok(p.a.do(p.a.bob, "POST", "/api/conversations/conv_bob/cancel", nil), http.StatusAccepted, nil)
	<-p.a.eng.blocked
	got := readAll(t, resumed.Body)
	want := []sseEvent{{ID: first.ID + 1, Name: "done", Data: agent.Event{Kind: agent.EventDone, ConversationID: "conv_bob", TurnID: "turn_b", Stop: agent.StopCancelled}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("resumed on b (-want +got):\n%s", diff)
	}
	// From the start, the whole stream; by turn, after it ended.
	all := readAll(t, p.b.openEvents(p.b.bob, "/api/conversations/conv_bob/events?turn=turn_b").Body)
	if diff := cmp.Diff([]string{"text", "done"}, kinds(all)); diff != "" || all[0].ID != 1 {
		t.Errorf("the whole stream from b (-want +got):\n%s", diff)
	}
}

func TestEventsOfDeadReplicaEndInterrupted(t *testing.T) {
	p := newPair(t)
	br, _ := p.blockOnA(t, "block")
	// The text event was sent live before a stored it (text is stored in
	// batches); wait for the store to have it, as a replica that dies
	// after text_flush would have.
	p.a.must(p.a.st.WaitTurnEvents(t.Context(), "org_a", "turn_b", 0))
	// a stops renewing; past the lease b reaps the turn.
	p.a.clock.Advance(runs.DefaultLease + time.Second)
	p.regB.Reap(t.Context())
	if tu, err := p.a.st.GetTurn(t.Context(), "org_a", "turn_b"); err != nil || tu.Status != store.TurnInterrupted {
		t.Fatalf("the turn after b reaped it: %q, %v", tu.Status, err)
	}
	got := readAll(t, p.b.openEvents(p.b.bob, "/api/conversations/conv_bob/events?turn=turn_b", "Last-Event-ID: 1").Body)
	if len(got) != 1 || got[0].Name != "error" || got[0].ID != 2 || got[0].Data.Error != "the server running this turn stopped before it finished; the turn was recorded as interrupted" {
		t.Errorf("following a reaped turn: %+v, want the error event numbered 2", got)
	}
	// Resuming after that end: nothing more.
	if r := p.b.do(p.b.bob, "GET", "/api/conversations/conv_bob/events?turn=turn_b", nil, "Last-Event-ID: 2"); r.StatusCode != http.StatusNoContent {
		t.Errorf("resuming after the interrupted end: status %d, want 204", r.StatusCode)
	}
	// a wakes: its heartbeat finds the lease gone and stops the turn.
	p.regA.Heartbeat(t.Context())
	if err := <-p.a.eng.blocked; !errors.Is(err, runs.ErrLeaseLost) {
		t.Errorf("the turn's context on a ended with %v, want runs.ErrLeaseLost", err)
	}
	// The engine ends a cancelled turn with done; a lost lease ends it
	// with an error saying so instead.
	if rest := readAll(t, br); len(rest) != 1 || rest[0].Name != "error" || !strings.Contains(rest[0].Data.Error, "lost its hold") {
		t.Errorf("a's stream after losing the lease: %+v", rest)
	}
	p.b.ok(p.b.do(p.b.bob, "POST", "/api/conversations/conv_bob/messages", map[string]any{"message": "hi"}), 200, nil)
}

func TestEventsEndpointRefusals(t *testing.T) {
	f := newFixture(t, nil)
	f.conversation("org_a", "bob", "conv_bob")
	f.conversation("org_a", "bob", "conv_other")
	f.ok(f.do(f.bob, "POST", "/api/conversations/conv_other/messages", map[string]any{"message": "hello"}), 200, nil)
	wantError(t, f.do(f.bob, "GET", "/api/conversations/conv_bob/events", nil), http.StatusConflict, "no_turn")
	wantError(t, f.do(f.bob, "GET", "/api/conversations/conv_bob/events?turn=turn_1", nil), http.StatusNotFound, "not_found")
	wantError(t, f.do(f.carol, "GET", "/api/conversations/conv_other/events?turn=turn_1", nil), http.StatusNotFound, "not_found")
	wantError(t, f.do(f.bob, "GET", "/api/conversations/conv_other/events?turn=turn_1", nil, "Last-Event-ID: -1"), http.StatusBadRequest, "bad_cursor")
	wantError(t, f.do(f.bob, "GET", "/api/conversations/conv_other/events?turn=turn_1&after=x", nil), http.StatusBadRequest, "bad_cursor")
	wantError(t, f.do(f.bob, "GET", "/api/conversations/conv_other/events", nil, "Last-Event-ID: 2"), http.StatusBadRequest, "turn_required")
}

// TestEventsPastTheEnd: a cursor at the last event of a stopped turn is
// answered 204, so an EventSource stops reconnecting; one before it gets
// the rest.
func TestEventsPastTheEnd(t *testing.T) {
	f := newFixture(t, nil)
	f.conversation("org_a", "bob", "conv_bob")
	r := f.do(f.bob, "POST", "/api/conversations/conv_bob/messages", map[string]any{"message": "hello"})
	f.ok(r, 200, nil)
	live := readAll(t, bytes.NewReader(r.body))
	f.must(f.st.PutTurn(t.Context(), store.Turn{ID: "turn_1", OrgID: "org_a", UserID: "bob", ConversationID: "conv_bob",
		Agent: "helper", Status: store.TurnDone, StartedAt: start}))
	last := live[len(live)-1].ID
	if r := f.do(f.bob, "GET", fmt.Sprintf("/api/conversations/conv_bob/events?turn=turn_1&after=%d", last), nil); r.StatusCode != http.StatusNoContent {
		t.Errorf("at the end: status %d, want 204", r.StatusCode)
	}
	rest := readAll(t, f.openEvents(f.bob, fmt.Sprintf("/api/conversations/conv_bob/events?turn=turn_1&after=%d", last-1)).Body)
	if len(rest) != 1 || rest[0].ID != last {
		t.Errorf("one before the end: %+v, want the last event", rest)
	}
}

// TestNextMessageRightAfterDone: the done event comes once the
// conversation is free, so a client that sends on reading it is not
// refused.
func TestNextMessageRightAfterDone(t *testing.T) {
	p := newPair(t)
	p.a.conversation("org_a", "bob", "conv_bob")
	for i := range 3 {
		resp := p.a.open(p.a.bob, "/api/conversations/conv_bob/messages", map[string]any{"message": fmt.Sprintf("hi %d", i)})
		br := bufio.NewReader(resp.Body)
		for {
			ev, err := readEvent(t, br)
			p.a.must(err)
			if ev.Name == "done" {
				break
			}
		}
		// Not reading to the end of the stream: the next message at once,
		// on the other replica.
		p.b.ok(p.b.do(p.b.bob, "POST", "/api/conversations/conv_bob/messages", map[string]any{"message": "next"}), 200, nil)
		resp.Body.Close()
	}
}

func TestEventsReplayFinishedTurn(t *testing.T) {
	f := newFixture(t, nil)
	f.conversation("org_a", "bob", "conv_bob")
	r := f.do(f.bob, "POST", "/api/conversations/conv_bob/messages", map[string]any{"message": "convert 3"})
	f.ok(r, 200, nil)
	live := readAll(t, bytes.NewReader(r.body))
	f.must(f.st.PutTurn(t.Context(), store.Turn{ID: "turn_1", OrgID: "org_a", UserID: "bob", ConversationID: "conv_bob",
		Agent: "helper", Status: store.TurnDone, StartedAt: start}))
	all := readAll(t, f.openEvents(f.bob, "/api/conversations/conv_bob/events?turn=turn_1").Body)
	if diff := cmp.Diff(live, all); diff != "" {
		t.Errorf("replay from 0 against the live stream (-live +replay):\n%s", diff)
	}
	tail := readAll(t, f.openEvents(f.bob, "/api/conversations/conv_bob/events?turn=turn_1&after=3").Body)
	if diff := cmp.Diff(live[3:], tail); diff != "" {
		t.Errorf("replay after 3 (-want +got):\n%s", diff)
	}
}

// TestFactsReadAgainOnlyWhenAnotherTurnRan: with replicas, a turn's facts
// are read once when nothing was appended to the conversation between
// Begin and the claim, and read again when another turn ran meanwhile
// (here one that paused the conversation, so the message is refused).
func TestFactsReadAgainOnlyWhenAnotherTurnRan(t *testing.T) {
	p := newPair(t)
	p.a.conversation("org_a", "bob", "conv_bob")
	p.a.eng.onBegin = func(message string, n int) {
		if message == "raced" && n == 1 {
			// Another replica's turn runs to a pause after this Begin
			// read the facts and before its claim.
			p.a.pause("org_a", "bob", "conv_bob")
		}
	}
	p.a.ok(p.a.do(p.a.bob, "POST", "/api/conversations/conv_bob/messages", map[string]any{"message": "hi"}), 200, nil)
	wantError(t, p.a.do(p.a.bob, "POST", "/api/conversations/conv_bob/messages", map[string]any{"message": "raced"}), http.StatusConflict, "conversation_changed")
	p.a.eng.mu.Lock()
	defer p.a.eng.mu.Unlock()
	if got := p.a.eng.begins; got["hi"] != 1 || got["raced"] != 2 {
		t.Errorf("Begin calls %v, want hi once (nothing ran between) and raced twice (read again)", got)
	}
	for _, c := range p.a.eng.calls {
		if c.Message == "raced" {
			t.Errorf("the raced message ran: %+v", c)
		}
	}
}
