package llmtest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/quiverhq/quiver/llm"
)

// Anthropic is a fake of Anthropic's Messages API (POST /v1/messages with
// "stream": true). It checks the rules the real API enforces — the
// anthropic-version header, max_tokens, roles alternating from user, no
// empty text, tool results first in their message and answering exactly
// the previous message's calls — and answers a violation as the real API
// does, with a 400 invalid_request_error, failing the test too.
//
// Replies stream as the real server-sent events: message_start (usage
// split as Anthropic reports it: input_tokens excludes the cached tokens),
// ping, a text block, one tool_use block per call with its arguments in
// several input_json_delta pieces, message_delta, message_stop. A
// truncated reply ends after its first text delta, without message_stop.
// A Failure answers with the real error body for its kind (a context
// length failure is an invalid_request_error saying "prompt is too long"),
// and a Failure of kind ErrNetwork drops the connection unanswered.
type Anthropic struct{}

// Name returns "anthropic".
func (Anthropic) Name() string { return "anthropic" }

// Handler implements Fake. t may be nil (benchmarks): violations are then
// only answered with a 400.
func (Anthropic) Handler(t *testing.T, respond func(Seen) Reply) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
			anthropicError(w, http.StatusNotFound, "not_found_error", "no route "+r.Method+" "+r.URL.Path)
			return
		}
		raw, err := io.ReadAll(r.Body)
		if err != nil {
			anthropicError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
			return
		}
		var wire anthropicRequest
		if err := json.Unmarshal(raw, &wire); err != nil {
			anthropicViolation(t, w, "request body: "+err.Error())
			return
		}
		seen := Seen{Header: r.Header.Clone(), Req: wire.neutral(), Raw: raw}
		if msg := wire.violation(r.Header); msg != "" {
			respond(seen) // recorded, and its scripted reply spent, as before
			anthropicViolation(t, w, msg)
			return
		}
		anthropicReply(w, wire.Model, respond(seen))
	})
}

// anthropicRequest is the part of a Messages API request the fake reads.
type anthropicRequest struct {
	Model     string             `json:"model"`
	MaxTokens int                `json:"max_tokens"`
	Stream    bool               `json:"stream"`
	System    json.RawMessage    `json:"system"` // a string or text blocks
	Messages  []anthropicMessage `json:"messages"`
	Tools     []anthropicTool    `json:"tools"`
}

type anthropicMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"` // a string or blocks
}

type anthropicBlock struct {
	Type   string `json:"type"`
	Text   string `json:"text"`
	Source *struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
	} `json:"source"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"` // tool_result: a string or blocks
	IsError   bool            `json:"is_error"`
	ToolName  string          `json:"tool_name"` // tool_reference
}

type anthropicTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
	// DeferLoading keeps the tool out of the model's context until a
	// tool_reference block in a tool_result names it.
	DeferLoading bool            `json:"defer_loading"`
	CacheControl json.RawMessage `json:"cache_control"`
}

// anthropicBlocks reads content that is either a plain string or a list
// of blocks, as the API accepts both.
func anthropicBlocks(raw json.RawMessage) []anthropicBlock {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []anthropicBlock{{Type: "text", Text: s}}
	}
	var blocks []anthropicBlock
	_ = json.Unmarshal(raw, &blocks)
	return blocks
}

// anthropicImages decodes the base64 image blocks among blocks.
func anthropicImages(blocks []anthropicBlock) []llm.Image {
	var out []llm.Image
	for _, b := range blocks {
		if b.Type == "image" && b.Source != nil {
			data, _ := base64.StdEncoding.DecodeString(b.Source.Data)
			out = append(out, llm.Image{MIME: b.Source.MediaType, Data: data})
		}
	}
	return out
}

func anthropicText(blocks []anthropicBlock) string {
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n\n")
}

// neutral decodes the request back to the neutral form: system blocks to
// System, a user message's tool_result blocks to a Tool message (names
// taken from the previous assistant message's tool_use blocks, as the wire
// does not repeat them), its text and images to a User message.
func (q anthropicRequest) neutral() llm.Request {
	req := llm.Request{System: anthropicText(anthropicBlocks(q.System)), MaxTokens: q.MaxTokens}
	names := map[string]string{}
	for _, m := range q.Messages {
		blocks := anthropicBlocks(m.Content)
		if m.Role == "assistant" {
			msg := llm.Message{Role: llm.Assistant, Text: anthropicText(blocks)}
			for _, b := range blocks {
				if b.Type == "tool_use" {
					names[b.ID] = b.Name
					msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: b.ID, Name: b.Name, Args: b.Input})
				}
			}
			req.Messages = append(req.Messages, msg)
			continue
		}
		req.Messages = append(req.Messages, anthropicUser(blocks, names)...)
	}
	for _, t := range q.Tools {
		d := llm.ToolDef{Name: t.Name, Description: t.Description, Parameters: t.InputSchema}
		if t.DeferLoading {
			req.Deferred = append(req.Deferred, d)
		} else {
			req.Tools = append(req.Tools, d)
		}
	}
	return req
}

func anthropicUser(blocks []anthropicBlock, names map[string]string) []llm.Message {
	var out []llm.Message
	results := llm.Message{Role: llm.Tool}
	user := llm.Message{Role: llm.User, Text: anthropicText(blocks)}
	for _, b := range blocks {
		switch b.Type {
		case "tool_result":
			inner := anthropicBlocks(b.Content)
			r := llm.ToolResult{CallID: b.ToolUseID, Name: names[b.ToolUseID], Content: anthropicText(inner), IsError: b.IsError,
				Images: anthropicImages(inner)} // image blocks inside the tool_result
			for _, ib := range inner {
				if ib.Type == "tool_reference" {
					r.References = append(r.References, ib.ToolName)
				}
			}
			results.Results = append(results.Results, r)
		case "image":
			user.Images = append(user.Images, anthropicImages([]anthropicBlock{b})...)
		}
	}
	if len(results.Results) > 0 {
		out = append(out, results)
	}
	if user.Text != "" || len(user.Images) > 0 {
		out = append(out, user)
	}
	return out
}

// violation returns what the real API would refuse in the request, or "".
func (q anthropicRequest) violation(h http.Header) string {
	switch {
	case h.Get("anthropic-version") == "":
		return "anthropic-version: header is required"
	case q.Model == "":
		return "model: Field required"
	case q.MaxTokens <= 0:
		return "max_tokens: Field required"
	case !q.Stream:
		return "the fake only streams: stream must be true"
	case len(q.Messages) == 0:
		return "messages: at least one message is required"
	}
	if msg := q.deferralViolation(); msg != "" {
		return msg
	}
	var calls map[string]bool // the previous assistant message's tool_use ids
	for i, m := range q.Messages {
		want := "user"
		if i%2 == 1 {
			want = "assistant"
		}
		if m.Role != want {
			return fmt.Sprintf("messages.%d.role: roles must alternate user/assistant, starting with user; got %q", i, m.Role)
		}
		if msg := anthropicContentViolation(i, anthropicBlocks(m.Content), calls); msg != "" {
			return msg
		}
		calls = nil
		for j, b := range anthropicBlocks(m.Content) {
			if b.Type == "tool_use" {
				if calls[b.ID] {
					return fmt.Sprintf("messages.%d.content.%d: tool_use ids must be unique; %q is repeated", i, j, b.ID)
				}
				if calls == nil {
					calls = map[string]bool{}
				}
				calls[b.ID] = true
			}
		}
	}
	return ""
}

// deferralViolation is what the API refuses of deferred tools: every tool
// deferred, a breakpoint on a deferred tool, a tool_reference naming no
// deferred tool of the request.
func (q anthropicRequest) deferralViolation() string {
	deferred := map[string]bool{}
	for i, t := range q.Tools {
		if t.DeferLoading {
			deferred[t.Name] = true
			if len(t.CacheControl) > 0 && string(t.CacheControl) != "null" {
				return fmt.Sprintf("tools.%d: a deferred tool cannot carry cache_control", i)
			}
		}
	}
	if len(q.Tools) > 0 && len(deferred) == len(q.Tools) {
		return "tools: at least one tool must not be deferred"
	}
	for i, m := range q.Messages {
		for j, b := range anthropicBlocks(m.Content) {
			if b.Type != "tool_result" {
				continue
			}
			for _, ib := range anthropicBlocks(b.Content) {
				if ib.Type == "tool_reference" && !deferred[ib.ToolName] {
					return fmt.Sprintf("messages.%d.content.%d: tool_reference %q names no deferred tool", i, j, ib.ToolName)
				}
			}
		}
	}
	return ""
}

// anthropicContentViolation checks one message's blocks: no empty text,
// tool results first and each answering a call of the previous message,
// every such call answered.
func anthropicContentViolation(i int, blocks []anthropicBlock, calls map[string]bool) string {
	if len(blocks) == 0 {
		return fmt.Sprintf("messages.%d: content must not be empty", i)
	}
	answered := 0
	for j, b := range blocks {
		switch {
		case b.Type == "text" && b.Text == "":
			return fmt.Sprintf("messages.%d.content.%d: text content blocks must be non-empty", i, j)
		case b.Type == "tool_result" && j != answered:
			return fmt.Sprintf("messages.%d.content.%d: tool_result blocks must come first", i, j)
		case b.Type == "tool_result" && !calls[b.ToolUseID]:
			return fmt.Sprintf("messages.%d.content.%d: unexpected tool_use_id %q", i, j, b.ToolUseID)
		case b.Type == "tool_result":
			answered++
		case b.Type == "tool_use" && (len(b.Input) == 0 || b.Input[0] != '{'):
			return fmt.Sprintf("messages.%d.content.%d.input: Input should be an object", i, j)
		}
	}
	if answered != len(calls) {
		return fmt.Sprintf("messages.%d: %d tool_use blocks without a tool_result", i, len(calls)-answered)
	}
	return ""
}

func anthropicViolation(t *testing.T, w http.ResponseWriter, msg string) {
	if t != nil {
		t.Errorf("anthropic fake: request the real API refuses: %s", msg)
	}
	anthropicError(w, http.StatusBadRequest, "invalid_request_error", msg)
}

// anthropicError answers with the Messages API's error body.
func anthropicError(w http.ResponseWriter, status int, typ, msg string) {
	body, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("request-id", "req_fake")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// anthropicFailure answers a scripted failure with the error type the real
// API uses for its kind. A network failure drops the connection unanswered.
func anthropicFailure(w http.ResponseWriter, f *Failure) {
	if f.Kind == llm.ErrNetwork {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
				return
			}
		}
	}
	if f.RetryAfter != "" {
		w.Header().Set("Retry-After", f.RetryAfter)
	}
	typ, msg := "api_error", f.Message
	switch f.Kind {
	case llm.ErrRateLimit:
		typ = "rate_limit_error"
	case llm.ErrOverloaded:
		typ = "overloaded_error"
	case llm.ErrAuth:
		typ = "authentication_error"
		if f.Status == http.StatusForbidden {
			typ = "permission_error"
		}
	case llm.ErrContextLength:
		typ, msg = "invalid_request_error", "prompt is too long: "+f.Message
	case llm.ErrBadRequest:
		typ = "invalid_request_error"
	}
	status := f.Status
	if status == 0 {
		status = http.StatusInternalServerError
	}
	anthropicError(w, status, typ, msg)
}

// anthropicStop maps a neutral stop reason to the wire's.
func anthropicStop(s llm.StopReason) string {
	switch s {
	case llm.StopToolCalls:
		return "tool_use"
	case llm.StopLength:
		return "max_tokens"
	case llm.StopFiltered:
		return "refusal"
	}
	return "end_turn"
}

// anthropicReply streams r. Usage is split as Anthropic reports it:
// input_tokens excludes the tokens read from and written to the cache, so
// an adapter that adds them back gets r.Usage.InputTokens.
func anthropicReply(w http.ResponseWriter, model string, r Reply) {
	if r.Fail != nil {
		anthropicFailure(w, r.Fail)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("request-id", "req_fake")
	sse := anthropicSSE{w: w}
	u := r.Usage
	sse.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_fake", "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{
			"input_tokens":                u.InputTokens - u.CachedInputTokens - u.CacheWriteTokens,
			"cache_read_input_tokens":     u.CachedInputTokens,
			"cache_creation_input_tokens": u.CacheWriteTokens,
			"output_tokens":               1,
		},
	}})
	sse.event("ping", map[string]any{"type": "ping"})
	if r.Truncate && len(r.Text) == 0 {
		return
	}
	index := 0
	if len(r.Text) > 0 {
		if !anthropicTextBlock(&sse, index, r) {
			return // truncated: the connection closes without message_stop
		}
		index++
	}
	for _, c := range r.ToolCalls {
		anthropicToolBlock(&sse, index, c)
		index++
	}
	sse.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": anthropicStop(r.StopReason()), "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": u.OutputTokens},
	})
	sse.event("message_stop", map[string]any{"type": "message_stop"})
}

// anthropicTextBlock streams the text deltas as one block. It reports
// false when the reply is truncated after the first delta.
func anthropicTextBlock(sse *anthropicSSE, index int, r Reply) bool {
	sse.event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
		"content_block": map[string]any{"type": "text", "text": ""}})
	for i, d := range r.Text {
		sse.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
			"delta": map[string]any{"type": "text_delta", "text": d}})
		if r.Truncate && i == 0 {
			return false
		}
	}
	sse.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
	return true
}

// anthropicToolBlock streams a tool_use block: input {} at the start, as
// the real API sends it, then the arguments in pieces, the first empty.
func anthropicToolBlock(sse *anthropicSSE, index int, c llm.ToolCall) {
	sse.event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
		"content_block": map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": map[string]any{}}})
	for _, piece := range append([]string{""}, anthropicPieces(string(c.Args), 3)...) {
		sse.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": piece}})
	}
	sse.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
}

// anthropicPieces splits s into up to n non-empty pieces of about equal
// size, cutting only between characters (each piece travels as a JSON
// string, which cannot hold half a character).
func anthropicPieces(s string, n int) []string {
	var out []string
	size := max(len(s)/n, 1)
	for len(s) > 0 {
		cut := min(size, len(s))
		for cut < len(s) && !utf8.RuneStart(s[cut]) {
			cut++
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return out
}

// anthropicSSE writes server-sent events, flushing each so the client sees
// the stream as it is produced.
type anthropicSSE struct{ w http.ResponseWriter }

func (s *anthropicSSE) event(name string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		panic(fmt.Sprintf("anthropic fake: %v", err))
	}
	fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", name, b)
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
}
