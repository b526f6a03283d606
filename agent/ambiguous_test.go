package agent_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/dispatch"
	"github.com/quiverhq/quiver/internal/pgtest"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/postgres"
)

// lostAnswerStore commits the first write of a model step and then
// answers it as a write cancelled during its round trip: the turn's
// context is cancelled and the error is the context's, though the step
// is stored (the ambiguous failure of a commit whose answer was lost).
type lostAnswerStore struct {
	agent.Repositories
	cancel context.CancelFunc
	lost   bool
}

func (s *lostAnswerStore) WriteTurn(ctx context.Context, orgID string, w store.TurnWrite) (store.TurnWritten, error) {
	got, err := s.Repositories.WriteTurn(ctx, orgID, w)
	if err != nil || w.Usage == nil || s.lost {
		return got, err
	}
	s.lost = true
	s.cancel()
	return store.TurnWritten{}, context.Canceled
}

// TestAmbiguousStepWriteRecordedOnce: a step's write that committed but
// answered as cancelled ends the turn interrupted, and the ending's write
// (which sends the step again, with the turn's final status) stores the
// step's reply and usage once, not twice. On SQLite and PostgreSQL.
func TestAmbiguousStepWriteRecordedOnce(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			e := newEnv(t, agent.Config{})
			var st agent.Repositories = e.st
			if backend == "postgres" {
				pg, err := postgres.Open(t.Context(), pgtest.URL(t))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { pg.Close() })
				st = pg
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ls := &lostAnswerStore{Repositories: st, cancel: cancel}
			runner := agent.New(agent.Config{Store: ls, Dispatcher: dispatch.New(dispatch.Config{Results: e.st}),
				Now: func() time.Time { return t0 }, Logger: quiet})
			m := llmtest.NewModel(llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("c1", "lookup", map[string]string{"text": "x"})}})
			out, err := runner.Run(ctx, e.start("c1", "go", m), nil)
			if err != nil || out.Stop != agent.StopCancelled {
				t.Fatalf("Run = %+v, %v; want the turn cancelled", out, err)
			}
			msgs, err := st.ListMessages(context.Background(), "o1", "c1", 0)
			if err != nil {
				t.Fatal(err)
			}
			var roles []string
			for _, m := range msgs {
				roles = append(roles, m.Role)
			}
			if got, want := strings.Join(roles, " "), "context user assistant tool_call"; got != want {
				t.Errorf("messages stored: %s; want %s", got, want)
			}
			rec, err := st.GetTurn(context.Background(), "o1", out.TurnID)
			if err != nil || rec.Status != store.TurnInterrupted || rec.Steps != 1 {
				t.Errorf("turn %+v, %v; want interrupted after 1 step", rec, err)
			}
			usage, err := st.(store.Usages).ListUsage(context.Background(), "o1", out.TurnID)
			if err != nil || len(usage) != 1 {
				t.Errorf("usage %+v, %v; want 1 record", usage, err)
			}
		})
	}
}
