package httpapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/llm"
)

// inspectDraftRoutes serves the inspector of an agent with a draft
// message and no conversation.
func (s *server) inspectDraftRoutes() {
	register(s, huma.Operation{
		OperationID: "inspect-agent-draft", Method: http.MethodGet, Path: "/api/agents/{name}/inspect", Tags: []string{"agents"},
		Summary: "The request a draft message would send to an agent",
		Description: "As GET /api/conversations/{id}/inspect for a new turn, in a new conversation of the caller's " +
			"that is not created: the turn engine's own Inspect with no conversation. Nothing runs and nothing is " +
			"written; a draft has no turn_id.",
	}, signedIn, s.inspectDraft)
}

type inspectDraftInput struct {
	Name    string `path:"name" doc:"The agent's name."`
	Message string `query:"message" maxLength:"20000" doc:"The draft message."`
}

func (s *server) inspectDraft(ctx context.Context, in *inspectDraftInput) (*inspectOutput, error) {
	a := authFrom(ctx)
	ins, err := s.eng.InspectDraft(ctx, a.Caller, in.Name, in.Message)
	if err != nil {
		return nil, err
	}
	return &inspectOutput{Body: ins}, nil
}

// replayWire is a replay as the API shows it: never nil lists.
func replayWire(r *agent.Replay) ([]ModelMessage, int, []ModelCall, int) {
	msgs, calls := []ModelMessage{}, []ModelCall{}
	if r == nil {
		return msgs, 0, calls, 0
	}
	for _, m := range r.Messages {
		msgs = append(msgs, messageWire(m))
	}
	for _, c := range r.Calls {
		kept := c.Kept
		if kept == nil {
			kept = []int{}
		}
		calls = append(calls, ModelCall{Kept: kept, From: c.From, End: c.End, Cut: c.Cut})
	}
	return msgs, r.TurnStart, calls, r.Omitted
}

// messageWire is one message of the model's view on the wire.
func messageWire(m llm.Message) ModelMessage {
	out := ModelMessage{Role: string(m.Role), Text: m.Text, Images: len(m.Images)}
	for _, c := range m.ToolCalls {
		args := c.Args
		if len(args) == 0 {
			args = []byte("{}")
		}
		out.ToolCalls = append(out.ToolCalls, ModelToolCall{ID: c.ID, Name: c.Name, Arguments: args})
	}
	for _, r := range m.Results {
		out.Results = append(out.Results, ModelToolReply{CallID: r.CallID, Name: r.Name, Content: r.Content, IsError: r.IsError})
	}
	return out
}
