package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"

	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/openai"
	"github.com/quiverhq/quiver/llm/providers"
	"github.com/quiverhq/quiver/turn"
)

// Baseline is the least a tool layer could do for the pinned turn, run as
// a process of its own ("quiver bench baseline"): for POST /turn
// {"message"} it makes the same two model calls as a Quiver turn, through
// the same adapter (llm/openai, with a tool cache as quiver serve's
// models have) and HTTP client (providers.NewHTTPClient),
// with the same system prompt, messages and tool definitions (replayed
// from the first request Quiver sent), answers the tool call with a fixed
// result, and streams the answer's text back as server-sent events shaped
// like Quiver's ({"type":"text"}, then {"type":"done"}). It stores
// nothing, authenticates no one and selects no tools.
type Baseline struct {
	model *openai.Model
	req   llm.Request
}

// NewBaseline returns a baseline calling the Chat Completions server at
// baseURL, replaying first (a Chat Completions request body).
func NewBaseline(baseURL string, first []byte) (*Baseline, error) {
	var wire struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Function llm.ToolDef `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(first, &wire); err != nil {
		return nil, fmt.Errorf("baseline: the request to replay: %w", err)
	}
	var req llm.Request
	for _, m := range wire.Messages {
		switch m.Role {
		case "system", "developer":
			req.System = m.Content
		case "user":
			req.Messages = append(req.Messages, llm.Message{Role: llm.User, Text: m.Content})
		default:
			return nil, fmt.Errorf("baseline: the request to replay has a %q message", m.Role)
		}
	}
	if len(req.Messages) == 0 {
		return nil, errors.New("baseline: the request to replay has no user message")
	}
	for _, t := range wire.Tools {
		req.Tools = append(req.Tools, t.Function)
	}
	model, err := openai.New(openai.Config{APIKey: "bench-key", BaseURL: baseURL, Model: wire.Model,
		Caps: turn.Capabilities{Tools: true}, HTTPClient: providers.NewHTTPClient(), Tools: openai.NewToolCache(0)})
	if err != nil {
		return nil, err
	}
	return &Baseline{model: model, req: req}, nil
}

// Serve answers POST /turn on ln until ctx ends.
func (b *Baseline) Serve(ctx context.Context, ln net.Listener) error {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /turn", b.turn)
	srv := &http.Server{Handler: mux}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); err != http.ErrServerClosed {
		return fmt.Errorf("baseline: %w", err)
	}
	return nil
}

// turn is the baseline's whole turn: call, fixed tool result, call,
// stream the text.
func (b *Baseline) turn(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Message string `json:"message"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Message == "" {
		http.Error(w, "want {\"message\"}", http.StatusBadRequest)
		return
	}
	req := b.req
	req.Messages = append(append([]llm.Message(nil), b.req.Messages[:len(b.req.Messages)-1]...), llm.Message{Role: llm.User, Text: in.Message})
	first, err := llm.Collect(b.model.Stream(r.Context(), req), nil)
	if err != nil || len(first.ToolCalls) == 0 {
		http.Error(w, fmt.Sprintf("first call: %v (%d tool calls)", err, len(first.ToolCalls)), http.StatusBadGateway)
		return
	}
	results := make([]llm.ToolResult, len(first.ToolCalls))
	for i, c := range first.ToolCalls {
		results[i] = llm.ToolResult{CallID: c.ID, Name: c.Name, Content: "42"}
	}
	req.Messages = append(req.Messages,
		llm.Message{Role: llm.Assistant, Text: first.Text, ToolCalls: first.ToolCalls},
		llm.Message{Role: llm.Tool, Results: results})
	w.Header().Set("Content-Type", "text/event-stream")
	f, _ := w.(http.Flusher)
	send := func(v any) {
		data, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", data)
		if f != nil {
			f.Flush()
		}
	}
	_, err = llm.Collect(b.model.Stream(r.Context(), req), func(ev llm.Event) {
		if ev.Kind == llm.EventText {
			send(map[string]string{"type": "text", "text": ev.Text})
		}
	})
	if err != nil {
		send(map[string]string{"type": "error", "error": err.Error()})
		return
	}
	send(map[string]string{"type": "done", "stop": "end"})
}
