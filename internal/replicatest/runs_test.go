package replicatest_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/internal/pgtest"
	"github.com/quiverhq/quiver/internal/replicatest"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/postgres"
)

// runsConfig makes a replica that stops renewing lose its turns within
// seconds (lease 3s, reaped every 500ms), and a cancel sent to another
// replica reach the owner within 500ms.
const runsConfig = "runs:\n  lease: 3s\n  heartbeat: 500ms\n  reap: 500ms\n"

// interruptedMsg is the error event a reader of a turn whose replica died
// gets once the turn is reaped.
const interruptedMsg = "the server running this turn stopped before it finished; the turn was recorded as interrupted"

// The calculation whose turn is held: its second model request alone
// carries the product.
const (
	heldCalc    = replicatest.CalcPrefix + "31337 * 31337"
	heldProduct = "982007569"
)

// TestStreamResumesOnOtherReplica reads a turn's first events from the
// replica running it, drops that stream while the turn waits for its
// second model request, and resumes on the other replica with
// Last-Event-ID: the other replica's stream goes on at the next number,
// one by one to done, so that what the client read equals the turn's
// full replay on either replica, and the transcript holds the turn's
// messages once.
func TestStreamResumesOnOtherReplica(t *testing.T) {
	t.Parallel()
	c := replicatest.New(t, replicatest.Options{DatabaseURL: pgtest.URL(t), Config: runsConfig})
	a, b := c.Start(), c.Start()
	onA := c.Admin(a).NewToken("replicatest")
	onB := onA.At(b)
	conv := onA.NewConversation("assistant")
	held := c.Model.Hold(heldProduct)
	defer held.Release()
	p := sendPumped(t, onA, conv, heldCalc)
	read := p.untilHeld(t, held)
	p.stop()
	last := lastID(t, read)

	// Opened while the turn waits; a cursor counts within its turn, named.
	rest := follow(t, onB, conv, read[0].TurnID, last)
	held.Release()
	got := rest.all(t)
	checkIDs(t, "b's resumed stream", got, last+1)
	if n := len(got); n == 0 || got[n-1].Kind != agent.EventDone || got[n-1].Stop != agent.StopAnswer {
		t.Fatalf("b's resumed stream: events %v; want it to end with done, stop answer", kinds(got))
	}
	if text := joinText(got); text != "the result is "+heldProduct+"." {
		t.Errorf("b's resumed stream's text: %q", text)
	}
	turnID := read[0].TurnID
	union := wire(append(slices.Clone(read), got...))
	for _, r := range []*replicatest.Client{onA, onB} {
		replay := follow(t, r, conv, turnID, 0).all(t)
		if diff := cmp.Diff(union, wire(replay)); diff != "" {
			t.Errorf("the full replay on %s differs from what the client read on a then b (-read +replay):\n%s", r.Base, diff)
		}
	}

	// The context message (who and when) is left out: it holds the time.
	want := []message{
		{turnID, "context", "", ""},
		{turnID, "user", heldCalc, ""},
		{turnID, "assistant", "", ""},
		{turnID, "tool_call", `{"expression":"31337 * 31337"}`, "calculate"},
		{turnID, "tool", heldProduct, "calculate"},
		{turnID, "assistant", "the result is " + heldProduct + ".", ""},
	}
	for _, r := range []*replicatest.Client{onA, onB} {
		if diff := cmp.Diff(want, messages(r.Messages(conv))); diff != "" {
			t.Errorf("the transcript on %s (-want +got):\n%s", r.Base, diff)
		}
	}
}

// TestReplicaKilledMidTurnOnPostgres kills (SIGKILL) the replica running
// a turn while the turn waits for its second model request: a reader
// resuming on the other replica gets the turn's interrupted end once that
// replica reaps the dead one's lease, the turn is stored as interrupted
// with its tool result once, and the conversation takes a new message
// there. The killed replica then starts again without touching the turn
// the other replica runs meanwhile, which finishes.
func TestReplicaKilledMidTurnOnPostgres(t *testing.T) {
	t.Parallel()
	c := replicatest.New(t, replicatest.Options{DatabaseURL: pgtest.URL(t), Config: runsConfig})
	a, b := c.Start(), c.Start()
	st := openStore(t, c)
	onA := c.Admin(a).NewToken("replicatest")
	onB := onA.At(b)
	conv := onA.NewConversation("assistant")
	held := c.Model.Hold(heldProduct)
	defer held.Release()
	p := sendPumped(t, onA, conv, heldCalc)
	read := p.untilHeld(t, held)
	last := lastID(t, read)
	turnID := read[0].TurnID
	// The events a's stream showed are stored within runs.text_flush;
	// waiting for them makes the kill lose nothing a reader saw.
	if err := st.WaitTurnEvents(t.Context(), onA.OrgID, turnID, last-1); err != nil {
		t.Fatalf("wait for a's events to be stored: %v", err)
	}
	a.Kill()
	p.stop()

	got := follow(t, onB, conv, turnID, last).all(t)
	n := len(got)
	endID := strconv.FormatInt(last+1, 10)
	if n == 0 || got[n-1].Kind != agent.EventError || got[n-1].ID != endID || got[n-1].Error != interruptedMsg {
		t.Fatalf("b's stream of the killed turn: %+v; want it to end with an error event numbered %s saying %q", got, endID, interruptedMsg)
	}
	// Resuming after that end: nothing more (204).
	if code, _, err := onB.TryDo(t.Context(), http.MethodGet, "/api/conversations/"+conv+"/events?turn="+turnID+"&after="+endID, nil); err != nil || code != http.StatusNoContent {
		t.Errorf("resuming after the interrupted end: %d, %v; want 204", code, err)
	}
	checkIDs(t, "b's stream of the killed turn", got[:n-1], last+1)
	replay := follow(t, onB, conv, turnID, 0).all(t)
	if diff := cmp.Diff(wire(append(slices.Clone(read), got...)), wire(replay)); diff != "" {
		t.Errorf("the killed turn's replay on b differs from what was read on a then b (-read +replay):\n%s", diff)
	}
	checkStatus(t, st, onA.OrgID, turnID, store.TurnInterrupted)
	msgs := onB.Messages(conv)
	if n := countMessages(msgs, "tool", heldProduct); n != 1 {
		t.Errorf("the transcript holds the tool result stored before the kill %d times, want once: %+v", n, msgs)
	}
	if got := onB.Send(conv, "after the kill").Text; got != "echo: after the kill" {
		t.Errorf("a new message on b after the kill: %q", got)
	}

	// A turn running on b while a starts again is b's to finish.
	conv2 := onB.NewConversation("assistant")
	held2 := c.Model.Hold("83810205")
	defer held2.Release()
	p2 := sendPumped(t, onB, conv2, replicatest.CalcPrefix+"12345 * 6789")
	defer p2.stop()
	read2 := p2.untilHeld(t, held2)
	a.Restart()
	checkStatus(t, st, onA.OrgID, turnID, store.TurnInterrupted)
	if run, err := st.GetRun(t.Context(), onA.OrgID, conv2); err != nil || run.TurnID != read2[0].TurnID {
		t.Fatalf("b's running turn after a restarted: run %+v, %v; want b's run of turn %s", run, err, read2[0].TurnID)
	}
	held2.Release()
	rest, err := p2.rest()
	if err != nil {
		t.Fatalf("b's turn after a restarted: %v, events %v", err, kinds(rest))
	}
	all := append(read2, rest...)
	if n := len(all); all[n-1].Kind != agent.EventDone || all[n-1].Stop != agent.StopAnswer || joinText(all) != "the result is 83810205." {
		t.Errorf("b's turn after a restarted: events %v, stop %q, text %q; want done with the answer", kinds(all), all[n-1].Stop, joinText(all))
	}
	checkIDs(t, "b's turn after a restarted", all, 1)
	checkStatus(t, st, onA.OrgID, read2[0].TurnID, store.TurnDone)
	if got := onA.Send(conv, "back on a").Text; got != "echo: back on a" {
		t.Errorf("a new message on the restarted a: %q", got)
	}
}

// TestCancelFromOtherReplica cancels, through one replica, a turn that
// the other runs while it waits for its second model request: the
// request is accepted, the owner's stream ends with a done event whose
// stop is cancelled (recorded, so the other replica's replay ends the
// same way), the turn is stored as interrupted, and the conversation
// takes a new message on both.
func TestCancelFromOtherReplica(t *testing.T) {
	t.Parallel()
	c := replicatest.New(t, replicatest.Options{DatabaseURL: pgtest.URL(t), Config: runsConfig})
	a, b := c.Start(), c.Start()
	st := openStore(t, c)
	onA := c.Admin(a).NewToken("replicatest")
	onB := onA.At(b)
	conv := onA.NewConversation("assistant")
	held := c.Model.Hold(heldProduct)
	defer held.Release()
	p := sendPumped(t, onA, conv, heldCalc)
	defer p.stop()
	read := p.untilHeld(t, held)
	turnID := read[0].TurnID

	var out struct {
		Cancelled bool `json:"cancelled"`
	}
	onB.JSON(http.MethodPost, "/api/conversations/"+conv+"/cancel", nil, http.StatusAccepted, &out)
	if !out.Cancelled {
		t.Errorf("cancel on b answered cancelled false")
	}
	rest, err := p.rest()
	all := append(read, rest...)
	if n := len(all); err != nil || all[n-1].Kind != agent.EventDone || all[n-1].Stop != agent.StopCancelled {
		t.Fatalf("a's stream after the cancel on b: %v, events %v; want it to end with done, stop cancelled", err, kinds(all))
	}
	checkIDs(t, "a's stream of the cancelled turn", all, 1)
	if diff := cmp.Diff(wire(all), wire(follow(t, onB, conv, turnID, 0).all(t))); diff != "" {
		t.Errorf("the cancelled turn's replay on b differs from a's stream (-a +replay):\n%s", diff)
	}
	checkStatus(t, st, onA.OrgID, turnID, store.TurnInterrupted)
	if got := onA.Send(conv, "after the cancel on a").Text; got != "echo: after the cancel on a" {
		t.Errorf("a new message on a after the cancel: %q", got)
	}
	if got := onB.Send(conv, "after the cancel on b").Text; got != "echo: after the cancel on b" {
		t.Errorf("a new message on b after the cancel: %q", got)
	}
}

// pump reads a stream on a goroutine of its own, handing the test one
// event at a time, so that the test knows exactly which events it read.
type pump struct {
	s    *replicatest.Stream
	evs  chan replicatest.Event
	end  chan error
	quit chan struct{}
}

// sendPumped sends a message in conv and pumps the turn's stream.
func sendPumped(t *testing.T, cl *replicatest.Client, conv, text string) *pump {
	t.Helper()
	p := &pump{evs: make(chan replicatest.Event), end: make(chan error, 1), quit: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		// Stream returns with the response header, which a turn sends
		// with its first event: not on the test's goroutine.
		s, err := cl.Stream(context.Background(), http.MethodPost, "/api/conversations/"+conv+"/messages", map[string]string{"message": text}, nil)
		p.s = s
		started <- err
		if err != nil {
			return
		}
		for {
			ev, err := s.Next()
			if err != nil {
				if errors.Is(err, io.EOF) {
					err = nil
				}
				p.end <- err
				return
			}
			select {
			case p.evs <- ev:
			case <-p.quit:
				return
			}
		}
	}()
	select {
	case err := <-started:
		if err != nil {
			t.Fatalf("send %q: %v", text, err)
		}
	case <-t.Context().Done():
	}
	return p
}

// untilHeld returns the events read until both a tool result was read
// and the held model request arrived; a stream that ends first fails the
// test.
func (p *pump) untilHeld(t *testing.T, h *replicatest.Held) []replicatest.Event {
	t.Helper()
	var got []replicatest.Event
	arrived, result := h.Arrived(), false
	for arrived != nil || !result {
		select {
		case <-arrived:
			arrived = nil
		case ev := <-p.evs:
			got = append(got, ev)
			result = result || ev.Kind == agent.EventToolResult
		case err := <-p.end:
			t.Fatalf("the turn's stream ended before the held model request: %v, events %v", err, kinds(got))
		}
	}
	return got
}

// rest reads the stream's remaining events and how it ended (nil at a
// clean end).
func (p *pump) rest() ([]replicatest.Event, error) {
	var got []replicatest.Event
	for {
		select {
		case ev := <-p.evs:
			got = append(got, ev)
		case err := <-p.end:
			return got, err
		}
	}
}

// stop drops the stream (the client goes away); it is idempotent.
func (p *pump) stop() {
	select {
	case <-p.quit:
	default:
		close(p.quit)
		if p.s != nil {
			p.s.Close()
		}
	}
}

// following is a GET …/events stream.
type following struct{ s *replicatest.Stream }

// follow opens GET …/events of conv on cl's replica: turn's events ("":
// the running turn's) numbered after after, sent as Last-Event-ID.
func follow(t *testing.T, cl *replicatest.Client, conv, turn string, after int64) following {
	t.Helper()
	path := "/api/conversations/" + conv + "/events"
	if turn != "" {
		path += "?turn=" + turn
	}
	s, err := cl.Stream(t.Context(), http.MethodGet, path, nil, http.Header{"Last-Event-ID": {strconv.FormatInt(after, 10)}})
	if err != nil {
		t.Fatalf("follow on %s after %d: %v", cl.Base, after, err)
	}
	t.Cleanup(func() { s.Close() })
	return following{s: s}
}

// all reads the stream to its clean end.
func (f following) all(t *testing.T) []replicatest.Event {
	t.Helper()
	defer f.s.Close()
	var got []replicatest.Event
	for {
		ev, err := f.s.Next()
		if errors.Is(err, io.EOF) {
			return got
		}
		if err != nil {
			t.Fatalf("read the followed stream after %v: %v", kinds(got), err)
		}
		got = append(got, ev)
	}
}

// lastID is the id of the last event read.
func lastID(t *testing.T, evs []replicatest.Event) int64 {
	t.Helper()
	n, err := strconv.ParseInt(evs[len(evs)-1].ID, 10, 64)
	if err != nil {
		t.Fatalf("the last event read has id %q: %v", evs[len(evs)-1].ID, err)
	}
	return n
}

// checkIDs checks that the events' ids are from, from+1, … one by one.
func checkIDs(t *testing.T, what string, evs []replicatest.Event, from int64) {
	t.Helper()
	var ids, want []string
	for i, ev := range evs {
		ids = append(ids, ev.ID)
		want = append(want, strconv.FormatInt(from+int64(i), 10))
	}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("%s: ids (-want +got):\n%s", what, diff)
	}
}

// wireEvent is an event as sent: id, name and data.
type wireEvent struct{ ID, Name, Data string }

func wire(evs []replicatest.Event) []wireEvent {
	out := make([]wireEvent, len(evs))
	for i, ev := range evs {
		out[i] = wireEvent{ev.ID, ev.Name, string(ev.Data)}
	}
	return out
}

func joinText(evs []replicatest.Event) string {
	var s string
	for _, ev := range evs {
		if ev.Kind == agent.EventText {
			s += ev.Text
		}
	}
	return s
}

// message is what a transcript check compares of a message (a context
// message's content, which holds the time, is left out).
type message struct{ TurnID, Role, Content, ToolName string }

func messages(msgs []replicatest.Message) []message {
	out := make([]message, len(msgs))
	for i, m := range msgs {
		out[i] = message{m.TurnID, m.Role, m.Content, m.ToolName}
		if m.Role == "context" {
			out[i].Content = ""
		}
	}
	return out
}

// countMessages counts the messages of that role and content.
func countMessages(msgs []replicatest.Message, role, content string) int {
	n := 0
	for _, m := range msgs {
		if m.Role == role && m.Content == content {
			n++
		}
	}
	return n
}

// openStore opens the cluster's PostgreSQL store, closed when t ends.
func openStore(t *testing.T, c *replicatest.Cluster) *postgres.Store {
	t.Helper()
	st, err := postgres.Open(t.Context(), replicatest.WithApplicationName(t, c.DatabaseURL, "replicatest"))
	if err != nil {
		t.Fatalf("open the cluster's store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// checkStatus checks the stored turn's status.
func checkStatus(t *testing.T, st store.Store, orgID, turnID, want string) {
	t.Helper()
	if turn, err := st.GetTurn(t.Context(), orgID, turnID); err != nil || turn.Status != want {
		t.Errorf("turn %s is stored %q (%v), want %q", turnID, turn.Status, err, want)
	}
}
