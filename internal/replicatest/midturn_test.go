package replicatest_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"testing"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/internal/replicatest"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
)

// TestServerKilledMidTurn kills a SQLite quiver serve with SIGKILL while
// a turn waits for its second model request (after a tool call and its
// result were streamed): the client's stream breaks without a done
// event, the restarted server records the turn as interrupted, keeps
// what the turn stored before the kill, and the conversation takes a new
// message.
func TestServerKilledMidTurn(t *testing.T) {
	t.Parallel()
	c := replicatest.New(t, replicatest.Options{})
	srv := c.Start()
	cl := c.Admin(srv).NewToken("replicatest")
	conv := cl.NewConversation("assistant")
	// Only the turn's second model request carries the product (a mark
	// no id or time in the first one could hold by chance).
	held := c.Model.Hold("982007569")
	defer held.Release()
	type ended struct {
		events []replicatest.Event
		err    error
	}
	stream := make(chan ended, 1)
	go func() {
		got, err := readUntilBroken(cl, conv, replicatest.CalcPrefix+"31337 * 31337")
		stream <- ended{got, err}
	}()
	select {
	case <-held.Arrived():
	case e := <-stream:
		t.Fatalf("the turn ended before its second model request: %v, events %v", e.err, kinds(e.events))
	}
	srv.Kill()
	e := <-stream
	got, err := e.events, e.err
	if err == nil || !slices.ContainsFunc(got, isKind(agent.EventToolResult)) || slices.ContainsFunc(got, isKind(agent.EventDone)) {
		t.Fatalf("the stream of the killed server: %v, events %v; want a tool result, no done, and an error", err, kinds(got))
	}
	turnID := got[0].TurnID

	srv.Restart()
	st, err := sqlite.Open(t.Context(), c.Data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if turn, err := st.GetTurn(t.Context(), cl.OrgID, turnID); err != nil || turn.Status != store.TurnInterrupted {
		t.Errorf("the killed turn after the restart: %q, %v; want interrupted", turn.Status, err)
	}
	if msgs := cl.Messages(conv); !slices.ContainsFunc(msgs, func(m replicatest.Message) bool { return m.Role == "tool" && m.Content == "982007569" }) {
		t.Errorf("the transcript after the restart lacks the tool result stored before the kill: %+v", msgs)
	}
	if got := cl.Send(conv, "after the crash").Text; got != "echo: after the crash" {
		t.Errorf("a new message after the restart: %q", got)
	}
}

// readUntilBroken sends a message and reads its events until the stream
// ends, returning them and how it ended (nil for a clean end).
func readUntilBroken(cl *replicatest.Client, conv, text string) ([]replicatest.Event, error) {
	s, err := cl.Stream(context.Background(), http.MethodPost, "/api/conversations/"+conv+"/messages", map[string]string{"message": text}, nil)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	var got []replicatest.Event
	for {
		ev, err := s.Next()
		if errors.Is(err, io.EOF) {
			return got, nil
		}
		if err != nil {
			return got, err
		}
		got = append(got, ev)
	}
}

func isKind(k agent.EventKind) func(replicatest.Event) bool {
	return func(e replicatest.Event) bool { return e.Kind == k }
}

func kinds(evs []replicatest.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, string(e.Kind))
	}
	return out
}
