package llmtest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/llm"
)

// OpenAI is a fake of OpenAI's Chat Completions endpoint, and so of the
// servers that copy it. It answers POST /chat/completions (with or without
// a /v1 prefix) with the scripted reply as a chat.completion.chunk SSE
// stream: a role chunk, content deltas, tool-call deltas (ID and name
// first, arguments in at least two pieces), a finish chunk, a usage chunk
// with no choices, then "data: [DONE]". Failures are OpenAI's error body
// {"error": {"message", "type", "param", "code"}} with the status and
// Retry-After.
//
// The wire types here are written from OpenAI's documentation, not taken
// from the SDK, so that an adapter's mistake in using the SDK shows.
type OpenAI struct{}

// Name implements Fake.
func (OpenAI) Name() string { return "openai" }

// Handler implements Fake. A request the real API would refuse (not a
// streaming request with usage, an undecodable body) fails the test.
func (OpenAI) Handler(t *testing.T, respond func(Seen) Reply) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || (r.URL.Path != "/chat/completions" && r.URL.Path != "/v1/chat/completions") {
			t.Errorf("openai fake: unexpected %s %s", r.Method, r.URL.Path)
			writeOpenAIError(w, Failure{Status: http.StatusNotFound, Kind: llm.ErrBadRequest, Message: "unknown URL " + r.URL.Path})
			return
		}
		body, err := io.ReadAll(r.Body)
		var wire oaRequest
		if err == nil {
			err = json.Unmarshal(body, &wire)
		}
		req, derr := wire.neutral()
		if err == nil && derr == nil {
			derr = oaToolCallViolation(wire.Messages)
		}
		if err = errors.Join(err, derr); err != nil {
			t.Errorf("openai fake: request body: %v\n%s", err, body)
			writeOpenAIError(w, Failure{Status: http.StatusBadRequest, Kind: llm.ErrBadRequest, Message: err.Error()})
			return
		}
		if !wire.Stream || wire.StreamOptions == nil || !wire.StreamOptions.IncludeUsage {
			t.Errorf("openai fake: request without stream: true and stream_options.include_usage: true")
		}
		reply := respond(Seen{Header: r.Header.Clone(), Req: req, Raw: body})
		if reply.Fail != nil {
			writeOpenAIError(w, *reply.Fail)
			return
		}
		streamOpenAI(w, wire.Model, reply)
	})
}

// oaRequest is the part of a Chat Completions request the fake reads.
type oaRequest struct {
	Model               string      `json:"model"`
	Messages            []oaMessage `json:"messages"`
	Tools               []oaTool    `json:"tools"`
	PromptCacheKey      string      `json:"prompt_cache_key"`
	MaxCompletionTokens int         `json:"max_completion_tokens"`
	MaxTokens           int         `json:"max_tokens"`
	Stream              bool        `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

type oaMessage struct {
	Role string `json:"role"`
	// Content is a string, null, or an array of parts.
	Content    json.RawMessage `json:"content"`
	ToolCalls  []oaToolCall    `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
}

type oaPart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL struct {
		URL string `json:"url"`
	} `json:"image_url"`
}

// oaToolCall is a call in a request's assistant message, and (with Index)
// a tool-call delta in a reply chunk.
type oaToolCall struct {
	Index    *int       `json:"index,omitempty"`
	ID       string     `json:"id,omitempty"`
	Type     string     `json:"type,omitempty"`
	Function oaFunction `json:"function"`
}

type oaFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type oaTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// neutral decodes the request back to llm form. Tool messages carry no
// tool name on the wire, so it comes from the call they answer; a result
// reads as an error when its content starts with "Error: ".
func (w oaRequest) neutral() (llm.Request, error) {
	req := llm.Request{CacheKey: w.PromptCacheKey, MaxTokens: w.MaxCompletionTokens}
	if req.MaxTokens == 0 {
		req.MaxTokens = w.MaxTokens
	}
	names := map[string]string{}
	for i, m := range w.Messages {
		if err := decodeOAMessage(&req, m, names); err != nil {
			return llm.Request{}, fmt.Errorf("message %d: %w", i, err)
		}
	}
	for _, t := range w.Tools {
		if t.Type != "function" {
			return llm.Request{}, fmt.Errorf("tool %q of type %q", t.Function.Name, t.Type)
		}
		req.Tools = append(req.Tools, llm.ToolDef{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
	return req, nil
}

func decodeOAMessage(req *llm.Request, m oaMessage, names map[string]string) error {
	text, images, err := oaContent(m.Content)
	if err != nil {
		return err
	}
	switch m.Role {
	case "system", "developer":
		req.System = joinText(req.System, text)
	case "user":
		if ok, err := decodeOAToolImages(req, m); ok || err != nil {
			return err
		}
		req.Messages = append(req.Messages, llm.Message{Role: llm.User, Text: text, Images: images})
	case "assistant":
		msg := llm.Message{Role: llm.Assistant, Text: text}
		for _, c := range m.ToolCalls {
			names[c.ID] = c.Function.Name
			msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: c.ID, Name: c.Function.Name, Args: json.RawMessage(c.Function.Arguments)})
		}
		req.Messages = append(req.Messages, msg)
	case "tool":
		res := llm.ToolResult{CallID: m.ToolCallID, Name: names[m.ToolCallID], Content: text}
		if rest, ok := strings.CutPrefix(text, "Error: "); ok {
			res.Content, res.IsError = rest, true
		}
		if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == llm.Tool {
			req.Messages[n-1].Results = append(req.Messages[n-1].Results, res)
		} else {
			req.Messages = append(req.Messages, llm.Message{Role: llm.Tool, Results: []llm.ToolResult{res}})
		}
	default:
		return fmt.Errorf("unknown role %q", m.Role)
	}
	return nil
}

// oaToolImagesHeader opens the user message right after tool messages
// that carries their results' images (Chat Completions takes text only in
// a tool message): then "Call <id> (<name>):" text parts, each followed
// by that result's image_url parts.
const oaToolImagesHeader = "Images from the tool results above (a tool message carries text only):"

// decodeOAToolImages puts such a message's images back on the results
// they belong to; false when m is not one.
func decodeOAToolImages(req *llm.Request, m oaMessage) (bool, error) {
	n := len(req.Messages)
	var parts []oaPart
	if n == 0 || req.Messages[n-1].Role != llm.Tool || json.Unmarshal(m.Content, &parts) != nil ||
		len(parts) == 0 || parts[0].Type != "text" || parts[0].Text != oaToolImagesHeader {
		return false, nil
	}
	results := req.Messages[n-1].Results
	cur := -1
	for _, p := range parts[1:] {
		switch p.Type {
		case "text":
			id, ok := strings.CutPrefix(p.Text, "Call ")
			id, _, ok2 := strings.Cut(id, " (")
			cur = slices.IndexFunc(results, func(r llm.ToolResult) bool { return r.CallID == id })
			if !ok || !ok2 || cur < 0 {
				return true, fmt.Errorf("tool images: %q names no result above", p.Text)
			}
		case "image_url":
			if cur < 0 {
				return true, fmt.Errorf("tool images: an image before any call line")
			}
			img, err := decodeDataURL(p.ImageURL.URL)
			if err != nil {
				return true, err
			}
			results[cur].Images = append(results[cur].Images, img)
		default:
			return true, fmt.Errorf("tool images: content part of type %q", p.Type)
		}
	}
	return true, nil
}

// oaToolCallViolation is what the real API refuses in the tool calls of
// a request's messages: an assistant message's call ids must be distinct,
// and the messages right after it must be one tool message per call id
// (in any order), answering no other.
func oaToolCallViolation(msgs []oaMessage) error {
	for i := 0; i < len(msgs); i++ {
		if msgs[i].Role != "assistant" || len(msgs[i].ToolCalls) == 0 {
			if msgs[i].Role == "tool" {
				return fmt.Errorf("messages.[%d].role: messages with role 'tool' must be a response to a preceding message with 'tool_calls'", i)
			}
			continue
		}
		open := map[string]bool{}
		for _, c := range msgs[i].ToolCalls {
			if open[c.ID] {
				return fmt.Errorf("messages.[%d].tool_calls: duplicate tool call id %q", i, c.ID)
			}
			open[c.ID] = true
		}
		for i+1 < len(msgs) && msgs[i+1].Role == "tool" {
			i++
			if !open[msgs[i].ToolCallID] {
				return fmt.Errorf("messages.[%d].tool_call_id: %q answers no open tool call", i, msgs[i].ToolCallID)
			}
			delete(open, msgs[i].ToolCallID)
		}
		if len(open) > 0 {
			return fmt.Errorf("an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'; %d were not", len(open))
		}
	}
	return nil
}

// oaContent reads a message's content: a string, null, or text and image
// parts (images as base64 data URLs).
func oaContent(raw json.RawMessage) (string, []llm.Image, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil, nil
	}
	var parts []oaPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", nil, fmt.Errorf("content: %w", err)
	}
	var text string
	var images []llm.Image
	for _, p := range parts {
		switch p.Type {
		case "text":
			text = joinText(text, p.Text)
		case "image_url":
			img, err := decodeDataURL(p.ImageURL.URL)
			if err != nil {
				return "", nil, err
			}
			images = append(images, img)
		default:
			return "", nil, fmt.Errorf("content part of type %q", p.Type)
		}
	}
	return text, images, nil
}

func joinText(a, b string) string {
	if a == "" {
		return b
	}
	return a + "\n\n" + b
}

func decodeDataURL(u string) (llm.Image, error) {
	rest, ok := strings.CutPrefix(u, "data:")
	mime, data, ok2 := strings.Cut(rest, ";base64,")
	if !ok || !ok2 {
		return llm.Image{}, fmt.Errorf("image URL %.40q is not a base64 data URL", u)
	}
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return llm.Image{}, fmt.Errorf("image data: %w", err)
	}
	return llm.Image{MIME: mime, Data: b}, nil
}

// oaFinish is the finish_reason for a stop reason; a reason the fake does
// not know is sent as it is, so a script can send an unknown one.
func oaFinish(s llm.StopReason) string {
	switch s {
	case llm.StopEnd:
		return "stop"
	case llm.StopFiltered:
		return "content_filter"
	}
	return string(s) // tool_calls, length, or anything else
}

// oaErrorBody is OpenAI's error body for a failure of that kind.
func oaErrorBody(f Failure) map[string]any {
	typ, code, param := "invalid_request_error", any(nil), any(nil)
	switch f.Kind {
	case llm.ErrRateLimit:
		typ, code = "requests", "rate_limit_exceeded"
	case llm.ErrAuth:
		code = "invalid_api_key"
	case llm.ErrContextLength:
		code, param = "context_length_exceeded", "messages"
	case llm.ErrServer, llm.ErrOverloaded:
		typ = "server_error"
	}
	msg := f.Message
	if msg == "" {
		msg = "scripted failure: " + string(f.Kind)
	}
	return map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": param, "code": code}}
}

// writeOpenAIError answers with f. A network failure is a connection
// closed before any answer.
func writeOpenAIError(w http.ResponseWriter, f Failure) {
	if f.Kind == llm.ErrNetwork {
		panic(http.ErrAbortHandler)
	}
	if f.RetryAfter != "" {
		w.Header().Set("Retry-After", f.RetryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(f.Status)
	_ = json.NewEncoder(w).Encode(oaErrorBody(f))
}

// oaStream writes chat.completion.chunk events, flushing each.
type oaStream struct {
	w     http.ResponseWriter
	f     http.Flusher
	model string
	buf   bytes.Buffer
}

func streamOpenAI(w http.ResponseWriter, model string, r Reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	f, _ := w.(http.Flusher)
	s := &oaStream{w: w, f: f, model: model}
	s.choice(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil)
	if r.Truncate && len(r.Text) == 0 {
		panic(http.ErrAbortHandler)
	}
	for i, d := range r.Text {
		s.choice(map[string]any{"content": d}, nil)
		if r.Truncate && i == 0 {
			// Close the connection mid-stream: no finish, no [DONE].
			panic(http.ErrAbortHandler)
		}
	}
	for i, c := range r.ToolCalls {
		s.toolCall(i, c)
	}
	finish := oaFinish(r.StopReason())
	s.choice(map[string]any{}, &finish)
	s.usage(r.Usage)
	s.data([]byte("[DONE]"))
}

// toolCall streams a call as OpenAI does: ID, name and empty arguments
// first, then the arguments in pieces.
func (s *oaStream) toolCall(i int, c llm.ToolCall) {
	first := oaToolCall{Index: &i, ID: c.ID, Type: "function", Function: oaFunction{Name: c.Name}}
	s.choice(map[string]any{"tool_calls": []oaToolCall{first}}, nil)
	for _, piece := range splitArgs(string(c.Args)) {
		d := oaToolCall{Index: &i, Function: oaFunction{Arguments: piece}}
		s.choice(map[string]any{"tool_calls": []oaToolCall{d}}, nil)
	}
}

// splitArgs cuts arguments into three pieces or so (at least two when
// there are two characters), on character boundaries but anywhere else,
// escapes included, as token boundaries fall.
func splitArgs(args string) []string {
	rs := []rune(args)
	size := max(1, (len(rs)+2)/3)
	var out []string
	for len(rs) > 0 {
		n := min(size, len(rs))
		out = append(out, string(rs[:n]))
		rs = rs[n:]
	}
	return out
}

func (s *oaStream) choice(delta map[string]any, finish *string) {
	s.chunk([]any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}}, nil)
}

func (s *oaStream) usage(u llm.Usage) {
	s.chunk([]any{}, map[string]any{
		"prompt_tokens":             u.InputTokens,
		"completion_tokens":         u.OutputTokens,
		"total_tokens":              u.InputTokens + u.OutputTokens,
		"prompt_tokens_details":     map[string]any{"cached_tokens": u.CachedInputTokens, "audio_tokens": 0},
		"completion_tokens_details": map[string]any{"reasoning_tokens": 0, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
	})
}

// chunk writes one chunk; usage is null except on the last one, as with
// stream_options.include_usage.
func (s *oaStream) chunk(choices []any, usage any) {
	b, err := json.Marshal(map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1700000000,
		"model": s.model, "service_tier": "default", "system_fingerprint": "fp_fake",
		"choices": choices, "usage": usage,
	})
	if err != nil {
		panic(fmt.Sprintf("openai fake: %v", err))
	}
	s.data(b)
}

func (s *oaStream) data(b []byte) {
	s.buf.Reset()
	s.buf.WriteString("data: ")
	s.buf.Write(b)
	s.buf.WriteString("\n\n")
	_, _ = s.w.Write(s.buf.Bytes())
	if s.f != nil {
		s.f.Flush()
	}
}
