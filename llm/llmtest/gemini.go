package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/llm"
)

// Gemini is the fake of Google's Gemini API (generativelanguage v1beta):
// POST /{version}/models/{model}:streamGenerateContent?alt=sse answered with
// "data: {GenerateContentResponse}" events, one flushed per text delta,
// function calls whole with their ids, the finish reason and usage last;
// failures as Google's error body with a RetryInfo detail and Retry-After.
// The key is taken from the x-goog-api-key header or the key parameter.
type Gemini struct{}

// Name implements Fake.
func (Gemini) Name() string { return "gemini" }

// Handler implements Fake.
func (Gemini) Handler(t *testing.T, respond func(Seen) Reply) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, ":streamGenerateContent") || r.URL.Query().Get("alt") != "sse" {
			t.Errorf("gemini fake: unexpected %s %s", r.Method, r.URL)
			geminiError(w, &Failure{Status: 404, Message: "not found"})
			return
		}
		if r.Header.Get("X-Goog-Api-Key") == "" && r.URL.Query().Get("key") == "" {
			geminiError(w, &Failure{Status: 401, Kind: llm.ErrAuth, Message: "Method doesn't allow unregistered callers. Please use an API key."})
			return
		}
		raw, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("gemini fake: read body: %v", err)
			return
		}
		req, err := decodeGeminiRequest(raw)
		if err != nil {
			t.Errorf("gemini fake: %v\n%s", err, raw)
			geminiError(w, &Failure{Status: 400, Kind: llm.ErrBadRequest, Message: err.Error()})
			return
		}
		reply := respond(Seen{Header: r.Header.Clone(), Req: req, Raw: raw})
		if reply.Fail != nil {
			geminiError(w, reply.Fail)
			return
		}
		geminiStream(w, reply)
	})
}

// Gemini's wire types, as much of them as the fake reads or writes.
type (
	geminiRequest struct {
		Contents          []geminiContent `json:"contents"`
		SystemInstruction *geminiContent  `json:"systemInstruction,omitempty"`
		Tools             []struct {
			FunctionDeclarations []struct {
				Name                 string          `json:"name"`
				Description          string          `json:"description"`
				Parameters           json.RawMessage `json:"parameters"`
				ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
			} `json:"functionDeclarations"`
		} `json:"tools"`
		GenerationConfig struct {
			MaxOutputTokens int `json:"maxOutputTokens"`
		} `json:"generationConfig"`
	}
	geminiContent struct {
		Role  string       `json:"role,omitempty"`
		Parts []geminiPart `json:"parts"`
	}
	geminiPart struct {
		Text             string          `json:"text,omitempty"`
		Thought          bool            `json:"thought,omitempty"`
		InlineData       *geminiBlob     `json:"inlineData,omitempty"`
		FunctionCall     *geminiCall     `json:"functionCall,omitempty"`
		FunctionResponse *geminiResponse `json:"functionResponse,omitempty"`
	}
	geminiBlob struct {
		MIMEType string `json:"mimeType"`
		Data     []byte `json:"data"`
	}
	geminiCall struct {
		ID   string          `json:"id,omitempty"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args,omitempty"`
	}
	geminiResponse struct {
		ID       string         `json:"id,omitempty"`
		Name     string         `json:"name"`
		Response map[string]any `json:"response"`
		// Parts are a multimodal function response's media: images of
		// the result as inlineData.
		Parts []struct {
			InlineData *geminiBlob `json:"inlineData"`
		} `json:"parts,omitempty"`
	}
)

// decodeGeminiRequest reads a generateContent body back into neutral form.
func decodeGeminiRequest(raw []byte) (llm.Request, error) {
	var in geminiRequest
	if err := json.Unmarshal(raw, &in); err != nil {
		return llm.Request{}, fmt.Errorf("decode request: %w", err)
	}
	out := llm.Request{MaxTokens: in.GenerationConfig.MaxOutputTokens}
	if in.SystemInstruction != nil {
		out.System = geminiText(in.SystemInstruction.Parts)
	}
	var lastCalls []llm.ToolCall
	for i, c := range in.Contents {
		m, err := decodeGeminiContent(c, lastCalls)
		if err != nil {
			return llm.Request{}, fmt.Errorf("contents[%d]: %w", i, err)
		}
		if m.Role == llm.Assistant {
			lastCalls = m.ToolCalls
		}
		out.Messages = append(out.Messages, m)
	}
	for _, t := range in.Tools {
		for _, d := range t.FunctionDeclarations {
			params := d.Parameters
			if params == nil {
				params = d.ParametersJSONSchema
			}
			out.Tools = append(out.Tools, llm.ToolDef{Name: d.Name, Description: d.Description, Parameters: params})
		}
	}
	return out, nil
}

func decodeGeminiContent(c geminiContent, lastCalls []llm.ToolCall) (llm.Message, error) {
	switch c.Role {
	case "model":
		return decodeGeminiModel(c.Parts)
	case "user", "":
		if len(c.Parts) > 0 && c.Parts[0].FunctionResponse != nil {
			return decodeGeminiResults(c.Parts, lastCalls)
		}
		m := llm.Message{Role: llm.User, Text: geminiText(c.Parts)}
		for _, p := range c.Parts {
			if p.InlineData != nil {
				m.Images = append(m.Images, llm.Image{MIME: p.InlineData.MIMEType, Data: p.InlineData.Data})
			}
		}
		return m, nil
	}
	return llm.Message{}, fmt.Errorf("unknown role %q", c.Role)
}

func decodeGeminiModel(parts []geminiPart) (llm.Message, error) {
	m := llm.Message{Role: llm.Assistant, Text: geminiText(parts)}
	for _, p := range parts {
		if p.FunctionCall == nil {
			continue
		}
		args := p.FunctionCall.Args
		if args == nil {
			args = json.RawMessage(`{}`)
		}
		if !bytes.HasPrefix(bytes.TrimSpace(args), []byte("{")) {
			return llm.Message{}, fmt.Errorf("functionCall %s: args %s is not an object", p.FunctionCall.Name, args)
		}
		m.ToolCalls = append(m.ToolCalls, llm.ToolCall{ID: p.FunctionCall.ID, Name: p.FunctionCall.Name, Args: args})
	}
	return m, nil
}

// decodeGeminiResults reads functionResponse parts; a response without an
// id answers the first unanswered call of that name.
func decodeGeminiResults(parts []geminiPart, calls []llm.ToolCall) (llm.Message, error) {
	m := llm.Message{Role: llm.Tool}
	used := make([]bool, len(calls))
	for _, p := range parts {
		fr := p.FunctionResponse
		if fr == nil {
			return llm.Message{}, fmt.Errorf("functionResponse mixed with other parts")
		}
		res := llm.ToolResult{CallID: fr.ID, Name: fr.Name}
		if res.CallID == "" {
			for i, c := range calls {
				if !used[i] && c.Name == fr.Name {
					res.CallID, used[i] = c.ID, true
					break
				}
			}
		}
		content, isErr := fr.Response["output"], false
		if e, ok := fr.Response["error"]; ok {
			content, isErr = e, true
		}
		res.Content, res.IsError = geminiAnyText(content), isErr
		for j, fp := range fr.Parts {
			if fp.InlineData == nil {
				return llm.Message{}, fmt.Errorf("functionResponse %s: parts[%d] has no inlineData", fr.Name, j)
			}
			res.Images = append(res.Images, llm.Image{MIME: fp.InlineData.MIMEType, Data: fp.InlineData.Data})
		}
		m.Results = append(m.Results, res)
	}
	return m, nil
}

func geminiText(parts []geminiPart) string {
	var texts []string
	for _, p := range parts {
		if p.Text != "" && !p.Thought {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n\n")
}

// geminiAnyText is a response value as text: strings as they are, anything
// else as JSON.
func geminiAnyText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// geminiStream writes reply as Gemini's SSE stream.
func geminiStream(w http.ResponseWriter, reply Reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	// Every chunk reports the usage so far, as Gemini does; only the last
	// holds the output count.
	prompt := geminiUsage(llm.Usage{InputTokens: reply.Usage.InputTokens, CachedInputTokens: reply.Usage.CachedInputTokens})
	for i, d := range reply.Text {
		writeGeminiChunk(w, geminiChunk([]map[string]any{{"text": d}}, "", prompt))
		if reply.Truncate && i == 0 {
			return
		}
	}
	if len(reply.ToolCalls) > 0 {
		parts := make([]map[string]any, len(reply.ToolCalls))
		for i, c := range reply.ToolCalls {
			parts[i] = map[string]any{"functionCall": map[string]any{"id": c.ID, "name": c.Name, "args": json.RawMessage(c.Args)}}
		}
		writeGeminiChunk(w, geminiChunk(parts, "", prompt))
	}
	final := geminiChunk([]map[string]any{{"text": ""}}, geminiFinish(reply.StopReason()), geminiUsage(reply.Usage))
	writeGeminiChunk(w, final)
}

func geminiChunk(parts []map[string]any, finish string, usage map[string]any) map[string]any {
	cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
	if finish != "" {
		cand["finishReason"] = finish
	}
	return map[string]any{"candidates": []any{cand}, "usageMetadata": usage, "modelVersion": "gemini-fake"}
}

func geminiUsage(u llm.Usage) map[string]any {
	m := map[string]any{"promptTokenCount": u.InputTokens, "totalTokenCount": u.InputTokens + u.OutputTokens}
	if u.CachedInputTokens > 0 {
		m["cachedContentTokenCount"] = u.CachedInputTokens
	}
	if u.OutputTokens > 0 {
		m["candidatesTokenCount"] = u.OutputTokens
	}
	return m
}

func geminiFinish(s llm.StopReason) string {
	switch s {
	case llm.StopLength:
		return "MAX_TOKENS"
	case llm.StopFiltered:
		return "SAFETY"
	}
	return "STOP"
}

func writeGeminiChunk(w http.ResponseWriter, v any) {
	b, _ := json.Marshal(v)
	fmt.Fprintf(w, "data: %s\r\n\r\n", b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// geminiError writes Google's error body for f.
func geminiError(w http.ResponseWriter, f *Failure) {
	status, msg := geminiStatus(f), f.Message
	if f.Kind == llm.ErrContextLength {
		msg = "The input token count (1048577) exceeds the maximum number of tokens allowed (1048576)."
	}
	var details []any
	if status == "RESOURCE_EXHAUSTED" {
		details = append(details, map[string]any{
			"@type":      "type.googleapis.com/google.rpc.QuotaFailure",
			"violations": []any{map[string]any{"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests"}},
		})
	}
	if f.RetryAfter != "" {
		w.Header().Set("Retry-After", f.RetryAfter)
		if secs, err := strconv.ParseFloat(f.RetryAfter, 64); err == nil {
			details = append(details, map[string]any{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": strconv.FormatFloat(secs, 'f', -1, 64) + "s"})
		}
	}
	body := map[string]any{"code": f.Status, "message": msg, "status": status}
	if details != nil {
		body["details"] = details
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(f.Status)
	b, _ := json.Marshal(map[string]any{"error": body})
	w.Write(b)
}

// geminiStatus is Google's status name for a failure.
func geminiStatus(f *Failure) string {
	switch f.Kind {
	case llm.ErrRateLimit:
		return "RESOURCE_EXHAUSTED"
	case llm.ErrAuth:
		if f.Status == http.StatusForbidden {
			return "PERMISSION_DENIED"
		}
		return "UNAUTHENTICATED"
	case llm.ErrContextLength, llm.ErrBadRequest:
		return "INVALID_ARGUMENT"
	case llm.ErrOverloaded:
		return "UNAVAILABLE"
	case llm.ErrServer:
		return "INTERNAL"
	}
	switch {
	case f.Status == http.StatusNotFound:
		return "NOT_FOUND"
	case f.Status >= 500:
		return "INTERNAL"
	}
	return "INVALID_ARGUMENT"
}
