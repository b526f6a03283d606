package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/store"
)

// TestNewEngineInspectDraft: an agent inspected with a draft message and
// no conversation goes through the engine's own Inspect: one model call
// of the context message and the draft, no turn id, nothing written; an
// agent the organisation lacks is the engine's input error.
func TestNewEngineInspectDraft(t *testing.T) {
	ctx := context.Background()
	api, st := newTurnEngine(t, httpapi.CatalogSizes{})
	ins, err := api.InspectDraft(ctx, ana, "helper", "what is 2+2?")
	if err != nil {
		t.Fatal(err)
	}
	if ins.TurnID != "" || ins.Agent != "helper" || ins.Steps != 0 || len(ins.Tools) == 0 {
		t.Errorf("draft: turn %q, agent %q, %d steps, %d tools", ins.TurnID, ins.Agent, ins.Steps, len(ins.Tools))
	}
	want := []httpapi.ModelMessage{{Role: "user", Text: ins.Context}, {Role: "user", Text: "what is 2+2?"}}
	if d := cmp.Diff(want, ins.Messages); d != "" {
		t.Errorf("messages (-want +got):\n%s", d)
	}
	if len(ins.Calls) != 1 || ins.Calls[0].End != 2 || ins.Calls[0].From != 0 || len(ins.Calls[0].Kept) != 0 || ins.Calls[0].Cut != *ins.History {
		t.Errorf("calls %+v (history %+v)", ins.Calls, ins.History)
	}
	if convs, err := st.ListConversations(ctx, "acme", "ana", 10); err != nil || len(convs) != 0 {
		t.Errorf("the draft wrote conversations %v (%v)", convs, err)
	}
	_, err = api.InspectDraft(ctx, ana, "ghost", "hi")
	var ie *engine.InputError
	if !errors.As(err, &ie) || ie.Msg != `no agent named "ghost"` {
		t.Errorf("unknown agent: %v", err)
	}
}

// TestNewEngineInspectStoredTurn: a stored turn is inspected call by
// call, as its model calls were sent, earlier tool results included; a
// draft in the same conversation has no turn id.
func TestNewEngineInspectStoredTurn(t *testing.T) {
	ctx := context.Background()
	api, st := newTurnEngine(t, httpapi.CatalogSizes{})
	if err := st.PutConversation(ctx, store.Conversation{ID: "conv_a", OrgID: "acme", UserID: "ana", Agent: "helper", CreatedAt: start, UpdatedAt: start}); err != nil {
		t.Fatal(err)
	}
	for _, m := range []store.Message{
		{Role: "context", Content: "it is Monday"},
		{Role: "user", Content: "what is 2+2?"},
		{Role: "assistant", Content: "Let me work it out."},
		{Role: "tool_call", ToolName: "calculate", ToolCallID: "call_1", Content: `{"expression":"2+2"}`},
		{Role: "tool", ToolName: "calculate", ToolCallID: "call_1", Content: "4"},
		{Role: "assistant", Content: "2 + 2 = 4."},
	} {
		m.ConversationID, m.TurnID, m.CreatedAt = "conv_a", "t1", start
		if _, err := st.AppendMessage(ctx, "acme", m); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.PutTurn(ctx, store.Turn{ID: "t1", OrgID: "acme", UserID: "ana", ConversationID: "conv_a", Agent: "helper", Model: "openai:m",
		Tools: []string{"calculate"}, Status: store.TurnDone, Steps: 2, StartedAt: start}); err != nil {
		t.Fatal(err)
	}
	ins, err := api.Inspect(ctx, ana, "conv_a", "t1", "")
	if err != nil {
		t.Fatal(err)
	}
	want := []httpapi.ModelMessage{
		{Role: "user", Text: "it is Monday"},
		{Role: "user", Text: "what is 2+2?"},
		{Role: "assistant", Text: "Let me work it out.", ToolCalls: []httpapi.ModelToolCall{{ID: "call_1", Name: "calculate", Arguments: json.RawMessage(`{"expression":"2+2"}`)}}},
		{Role: "tool", Results: []httpapi.ModelToolReply{{CallID: "call_1", Name: "calculate", Content: "4"}}},
		{Role: "assistant", Text: "2 + 2 = 4."},
	}
	if d := cmp.Diff(want, ins.Messages); d != "" {
		t.Errorf("messages (-want +got):\n%s", d)
	}
	type span struct{ From, End int }
	var got []span
	for _, c := range ins.Calls {
		got = append(got, span{c.From, c.End})
	}
	if d := cmp.Diff([]span{{0, 2}, {0, 4}}, got); ins.TurnID != "t1" || ins.Steps != 2 || d != "" {
		t.Errorf("turn %q, %d steps, calls (-want +got):\n%s", ins.TurnID, ins.Steps, d)
	}
	draft, err := api.Inspect(ctx, ana, "conv_a", "", "and 3+3?")
	if err != nil {
		t.Fatal(err)
	}
	// The earlier turn's context message is not sent again.
	if n := len(draft.Messages); draft.TurnID != "" || n != 6 || draft.Messages[n-1].Text != "and 3+3?" || draft.Calls[0].End != n {
		t.Errorf("a draft in the conversation: turn %q, %d messages, calls %+v", draft.TurnID, n, draft.Calls)
	}
}

// TestInspectDraftEndpoint: GET /api/agents/{name}/inspect needs a
// sign-in, serves any member for an agent of their organisation, and
// refuses another organisation's agent.
func TestInspectDraftEndpoint(t *testing.T) {
	f := newFixture(t, nil)
	var ins httpapi.Inspection
	f.ok(f.do(f.bob, "GET", "/api/agents/helper/inspect?message=hello", nil), http.StatusOK, &ins)
	if ins.Agent != "helper" || ins.TurnID != "" || !strings.HasSuffix(ins.Context, ": hello") || !strings.HasPrefix(ins.Context, "caller bob") {
		t.Errorf("inspection %+v", ins)
	}
	wantError(t, f.do(nil, "GET", "/api/agents/helper/inspect?message=hello", nil), http.StatusUnauthorized, "unauthorized")
	wantError(t, f.do(f.dave, "GET", "/api/agents/only-a/inspect?message=hello", nil), http.StatusBadRequest, "invalid_request")
	wantError(t, f.do(f.bob, "GET", "/api/agents/helper/inspect?message="+strings.Repeat("x", 20001), nil), http.StatusBadRequest, "invalid_request")
}
