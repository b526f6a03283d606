package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
)

// The tool console runs one tool by hand, as the caller, through the same
// dispatcher a model's call goes through.
func (s *server) consoleRoutes() {
	tags := []string{"console"}
	register(s, huma.Operation{
		OperationID: "list-console-tools", Method: http.MethodGet, Path: "/api/console/tools", Tags: tags,
		Summary: "The tools the console can run for an agent, with their input schemas",
		Description: "The toolset the agent would get from the caller (before Deliberate Tool Mode narrows it), " +
			"in declaration order.",
		Errors: []int{http.StatusNotFound},
	}, signedIn, s.consoleTools)
	register(s, huma.Operation{
		OperationID: "run-console-tool", Method: http.MethodPost, Path: "/api/console/run", Tags: tags,
		Summary: "Run one tool by hand",
		Description: "Runs through the dispatcher with the caller's scope and limits, like a model's call. A tool's own " +
			"failure is a 200 with is_error; a tool outside the agent's toolset is a 400. Rate-limited per user, " +
			"sharing the bucket of messages (429 with Retry-After). Disabling the user cancels the run: 401 unauthorized.",
		Errors: []int{http.StatusNotFound, http.StatusTooManyRequests},
	}, signedIn, s.runConsoleTool)
}

type consoleToolsInput struct {
	Agent string `query:"agent" required:"true" minLength:"1" doc:"The agent's name."`
}

type consoleToolsOutput struct {
	Body struct {
		Tools []ConsoleTool `json:"tools"`
	}
}

func (s *server) consoleTools(ctx context.Context, in *consoleToolsInput) (*consoleToolsOutput, error) {
	a := authFrom(ctx)
	if _, err := s.orgAgent(ctx, a, in.Agent); err != nil {
		return nil, err
	}
	tools, err := s.eng.ConsoleTools(ctx, a.Caller, in.Agent)
	if err != nil {
		return nil, err
	}
	out := &consoleToolsOutput{}
	out.Body.Tools = tools
	if tools == nil {
		out.Body.Tools = []ConsoleTool{}
	}
	return out, nil
}

// toolArguments is a tool call's arguments as sent: a JSON object, kept
// as raw JSON so numbers reach the tool exactly as written.
type toolArguments json.RawMessage

// Schema documents (and makes huma validate) a JSON object.
func (toolArguments) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{
		Type: huma.TypeObject, AdditionalProperties: true,
		Description: "The tool's arguments, as the tool's input_schema describes them; absent means {}.",
	}
}

// UnmarshalJSON keeps the raw bytes; null, by convention, changes
// nothing.
func (t *toolArguments) UnmarshalJSON(b []byte) error {
	if !bytes.Equal(b, []byte("null")) {
		*t = append((*t)[:0], b...)
	}
	return nil
}

type runToolInput struct {
	Body struct {
		Agent     string        `json:"agent" minLength:"1" doc:"The agent whose toolset the tool must be in."`
		Tool      string        `json:"tool" minLength:"1" maxLength:"128" doc:"The tool's name."`
		Arguments toolArguments `json:"arguments,omitempty"`
	}
}

type toolRunOutput struct{ Body ToolRun }

func (s *server) runConsoleTool(ctx context.Context, in *runToolInput) (*toolRunOutput, error) {
	a := authFrom(ctx)
	if _, err := s.orgAgent(ctx, a, in.Body.Agent); err != nil {
		return nil, err
	}
	args := json.RawMessage(in.Body.Arguments)
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	if err := s.rateLimit(ctx, a); err != nil {
		return nil, err
	}
	// Tracked like a turn, so that disabling the user cancels it.
	runCtx, end, err := s.trackRun(ctx, a, s.consoleKey())
	if err != nil {
		return nil, err
	}
	defer end()
	run, err := s.eng.RunTool(runCtx, a.Caller, in.Body.Agent, in.Body.Tool, args)
	if errors.Is(context.Cause(runCtx), errCancelRequested) {
		// Only disabling the user cancels a console run: whatever the
		// tool answered, the caller may no longer see it.
		return nil, errDisabled()
	}
	if err != nil {
		return nil, err
	}
	return &toolRunOutput{Body: run}, nil
}
