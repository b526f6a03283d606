package agent_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/dispatch"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
	"github.com/quiverhq/quiver/store"
)

// countingStore counts the runner's writes, each of which is one commit:
// every call of a writing method of the repositories a Runner takes.
type countingStore struct {
	agent.Repositories
	mu     sync.Mutex
	writes []string
}

func (s *countingStore) count(what string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes = append(s.writes, what)
}

func (s *countingStore) WriteTurn(ctx context.Context, orgID string, w store.TurnWrite) (store.TurnWritten, error) {
	var parts []string
	if w.Claim != nil {
		parts = append(parts, "claim")
	}
	if w.Turn != nil {
		parts = append(parts, "turn:"+w.Turn.Status)
	}
	for _, m := range w.Messages {
		parts = append(parts, m.Role)
	}
	if w.Usage != nil {
		parts = append(parts, "usage")
	}
	s.count("write " + strings.Join(parts, " "))
	return s.Repositories.WriteTurn(ctx, orgID, w)
}

func (s *countingStore) PutTurn(ctx context.Context, t store.Turn) error {
	s.count("put turn")
	return s.Repositories.PutTurn(ctx, t)
}

func (s *countingStore) AppendMessage(ctx context.Context, orgID string, m store.Message) (int64, error) {
	s.count("append " + m.Role)
	return s.Repositories.AppendMessage(ctx, orgID, m)
}

func (s *countingStore) AppendMessages(ctx context.Context, orgID string, ms []store.Message) ([]int64, error) {
	roles := make([]string, len(ms))
	for i, m := range ms {
		roles[i] = m.Role
	}
	s.count("append " + strings.Join(roles, " "))
	return s.Repositories.AppendMessages(ctx, orgID, ms)
}

// TestTurnCommits: a turn's start is one write (claim, turn, context and
// user message), a model step that calls tools one (its reply, usage and
// step count), the step's results one, and the last reply is written
// with the turn's end: two commits for an answer, four for one tool
// step, where every record used to be a commit of its own (seven and
// eleven). The transcript and the usage are what they were.
func TestTurnCommits(t *testing.T) {
	calc := llmtest.Call("c1", "calculate", map[string]string{"expression": "1+1"})
	for _, tc := range []struct {
		name    string
		replies []llmtest.Reply
		want    []string
	}{
		{"Answer", []llmtest.Reply{{Text: []string{"Hi."}}}, []string{
			"write claim turn:running context user",
			"write turn:done assistant usage",
		}},
		{"ToolStep", []llmtest.Reply{{ToolCalls: []llm.ToolCall{calc}}, {Text: []string{"2."}}}, []string{
			"write claim turn:running context user",
			"write turn:running assistant tool_call usage",
			"append tool",
			"write turn:done assistant usage",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, agent.Config{})
			cs := &countingStore{Repositories: e.st}
			runner := agent.New(agent.Config{Store: cs, Dispatcher: dispatch.New(dispatch.Config{Results: e.st}), Now: func() time.Time { return t0 }, Logger: quiet})
			out, err := runner.Run(context.Background(), e.start("c1", "go", llmtest.NewModel(tc.replies...)), nil)
			if err != nil || out.Stop != agent.StopAnswer {
				t.Fatalf("Run = %+v, %v", out, err)
			}
			if diff := cmp.Diff(tc.want, cs.writes); diff != "" {
				t.Errorf("writes (-want +got):\n%s", diff)
			}
			rec, err := e.st.GetTurn(context.Background(), "o1", out.TurnID)
			if err != nil || rec.Status != store.TurnDone || rec.Steps != len(tc.replies) || rec.EndedAt.IsZero() {
				t.Errorf("turn %+v, %v; want done after %d steps", rec, err, len(tc.replies))
			}
			usage, err := e.st.ListUsage(context.Background(), "o1", out.TurnID)
			if err != nil || len(usage) != len(tc.replies) {
				t.Errorf("usage %+v, %v; want %d records", usage, err, len(tc.replies))
			}
		})
	}
}

// TestTurnStartInAnotherUsersConversation: a turn in a conversation
// another user owns is refused and writes nothing: no turn, no message.
func TestTurnStartInAnotherUsersConversation(t *testing.T) {
	e := newEnv(t, agent.Config{})
	c := store.Conversation{ID: "c1", OrgID: "o1", UserID: "u2", Agent: "helper", CreatedAt: t0, UpdatedAt: t0}
	if err := e.st.PutConversation(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	s := e.start("c1", "go", llmtest.NewModel(llmtest.Reply{Text: []string{"Hi."}}))
	s.Facts.TurnID = "t1"
	_, err := e.runner.Run(context.Background(), s, nil)
	if err == nil || !strings.Contains(err.Error(), "belongs to another user") {
		t.Fatalf("Run error %v, want the conversation refused", err)
	}
	if _, err := e.st.GetTurn(context.Background(), "o1", "t1"); err == nil {
		t.Error("the refused turn was stored")
	}
	if got := e.transcript("c1"); got != "" {
		t.Errorf("messages stored in another user's conversation:\n%s", got)
	}
}
