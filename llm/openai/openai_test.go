package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
	"github.com/quiverhq/quiver/turn"
)

func newModel(t testing.TB, baseURL string) *Model {
	t.Helper()
	m, err := New(Config{APIKey: "test-key", BaseURL: baseURL, Model: "gpt-test", Caps: turn.Capabilities{Tools: true}})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestSuite(t *testing.T) {
	llmtest.RunSuite(t, llmtest.OpenAI{}, func(t *testing.T, baseURL string) llm.Model { return newModel(t, baseURL) })
}

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantRef string
		wantErr bool
	}{
		{"defaults", Config{Model: "gpt-4.1-mini"}, "openai:gpt-4.1-mini", false},
		{"ollama without a key", Config{Provider: "ollama", BaseURL: "http://localhost:11434/v1", Model: "qwen3:8b"}, "ollama:qwen3:8b", false},
		{"no model", Config{APIKey: "k"}, "", true},
		{"base URL without scheme", Config{Model: "m", BaseURL: "localhost:11434"}, "", true},
		{"base URL of another scheme", Config{Model: "m", BaseURL: "ftp://example.com"}, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := New(tc.cfg)
			if (err != nil) != tc.wantErr {
				t.Fatalf("New: err = %v, want error %v", err, tc.wantErr)
			}
			if err == nil && m.Ref() != tc.wantRef {
				t.Errorf("Ref = %q, want %q", m.Ref(), tc.wantRef)
			}
		})
	}
}

func TestCheckTool(t *testing.T) {
	tests := []struct {
		name   string
		def    llm.ToolDef
		refuse bool
	}{
		{"object schema", llmtest.SampleTool(), false},
		{"object without properties", llm.ToolDef{Name: "now", Parameters: json.RawMessage(`{"type":"object"}`)}, false},
		{"string schema", llm.ToolDef{Name: "echo", Parameters: json.RawMessage(`{"type":"string"}`)}, true},
		{"no type", llm.ToolDef{Name: "echo", Parameters: json.RawMessage(`{"properties":{}}`)}, true},
		{"nullable object", llm.ToolDef{Name: "echo", Parameters: json.RawMessage(`{"type":["object","null"]}`)}, true},
		{"no schema", llm.ToolDef{Name: "echo"}, true},
		{"array as schema", llm.ToolDef{Name: "echo", Parameters: json.RawMessage(`[]`)}, true},
		{"dotted name", llm.ToolDef{Name: "fs.read", Parameters: json.RawMessage(`{"type":"object"}`)}, true},
		{"empty name", llm.ToolDef{Parameters: json.RawMessage(`{"type":"object"}`)}, true},
		{"65-character name", llm.ToolDef{Name: strings.Repeat("a", 65), Parameters: json.RawMessage(`{"type":"object"}`)}, true},
		{"64-character name", llm.ToolDef{Name: strings.Repeat("a", 64), Parameters: json.RawMessage(`{"type":"object"}`)}, false},
	}
	m := newModel(t, "http://127.0.0.1:1")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := m.CheckTool(tc.def)
			if (err != nil) != tc.refuse {
				t.Fatalf("CheckTool = %v, want refusal %v", err, tc.refuse)
			}
			if e, ok := llm.AsError(err); err != nil && (!ok || e.Kind != llm.ErrUnsupportedTool) {
				t.Errorf("refusal %v is not an ErrUnsupportedTool *llm.Error", err)
			}
		})
	}
}

// wireRequest sends req to the fake server and returns the request body
// as the server received it, decoded as generic JSON, and as llmtest
// decoded it.
func wireRequest(t *testing.T, cfg Config, req llm.Request) (map[string]any, llmtest.Seen) {
	t.Helper()
	srv := llmtest.Start(t, llmtest.OpenAI{}, llmtest.Reply{Text: []string{"ok"}})
	cfg.BaseURL, cfg.Model = srv.URL+"/v1", "gpt-test"
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := llm.Collect(m.Stream(context.Background(), req), nil); err != nil {
		t.Fatalf("Stream: %v", err)
	}
	seen := srv.Seen()
	if len(seen) != 1 {
		t.Fatalf("%d requests", len(seen))
	}
	var body map[string]any
	if err := json.Unmarshal(seen[0].Raw, &body); err != nil {
		t.Fatal(err)
	}
	return body, seen[0]
}

func TestRequestWire(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\nfake")
	req := llm.Request{
		System: "Be brief.",
		Messages: []llm.Message{
			{Role: llm.User, Text: "What is this?", Images: []llm.Image{{MIME: "image/png", Data: png}}},
			{Role: llm.Assistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "now"}}},
			{Role: llm.Tool, Results: []llm.ToolResult{{CallID: "c1", Name: "now", Content: "clock unavailable", IsError: true}}},
		},
		Tools:     []llm.ToolDef{{Name: "now", Description: "Tells the time.", Parameters: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)}},
		CacheKey:  "agent-7",
		MaxTokens: 512,
	}
	body, seen := wireRequest(t, Config{APIKey: "test-key"}, req)
	want := map[string]any{
		"model":                 "gpt-test",
		"stream":                true,
		"stream_options":        map[string]any{"include_usage": true},
		"prompt_cache_key":      "agent-7",
		"max_completion_tokens": 512.0,
		"messages": []any{
			map[string]any{"role": "system", "content": "Be brief."},
			map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "text", "text": "What is this?"},
				map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64,iVBORw0KGgpmYWtl"}},
			}},
			map[string]any{"role": "assistant", "tool_calls": []any{
				map[string]any{"id": "c1", "type": "function", "function": map[string]any{"name": "now", "arguments": "{}"}},
			}},
			map[string]any{"role": "tool", "tool_call_id": "c1", "content": "Error: clock unavailable"},
		},
		"tools": []any{map[string]any{"type": "function", "function": map[string]any{
			"name": "now", "description": "Tells the time.",
			"parameters": map[string]any{"type": "object", "properties": map[string]any{}, "additionalProperties": false},
		}}},
	}
	if diff := cmp.Diff(want, body); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
	if !strings.Contains(string(seen.Raw), `"parameters":{"type":"object","properties":{},"additionalProperties":false}`) {
		t.Errorf("parameters not sent byte for byte as declared:\n%s", seen.Raw)
	}
	if diff := cmp.Diff(req.Messages[0].Images, seen.Req.Messages[0].Images); diff != "" {
		t.Errorf("image as decoded from its data URL (-sent +decoded):\n%s", diff)
	}
	if got := seen.Header.Get("Authorization"); got != "Bearer test-key" {
		t.Errorf("Authorization = %q", got)
	}
}

// TestToolResultImagesWire: Chat Completions takes text only in a tool
// message, so a result's images follow the tool messages in one user
// message, each result's images after a line naming its call.
func TestToolResultImagesWire(t *testing.T) {
	req := llm.Request{Messages: []llm.Message{
		{Role: llm.User, Text: "check"},
		{Role: llm.Assistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "inspect", Args: json.RawMessage(`{}`)}, {ID: "c2", Name: "now", Args: json.RawMessage(`{}`)}, {ID: "c3", Name: "inspect", Args: json.RawMessage(`{}`)}}},
		{Role: llm.Tool, Results: []llm.ToolResult{
			{CallID: "c1", Name: "inspect", Content: "page 1", Images: []llm.Image{{MIME: "image/png", Data: []byte{1}}, {MIME: "image/png", Data: []byte{2}}}},
			{CallID: "c2", Name: "now", Content: "noon"},
			{CallID: "c3", Name: "inspect", Content: "page 2", Images: []llm.Image{{MIME: "image/jpeg", Data: []byte{3}}}},
		}},
	}}
	body, seen := wireRequest(t, Config{}, req)
	want := []any{
		map[string]any{"role": "user", "content": "check"},
		map[string]any{"role": "assistant", "tool_calls": []any{
			map[string]any{"id": "c1", "type": "function", "function": map[string]any{"name": "inspect", "arguments": "{}"}},
			map[string]any{"id": "c2", "type": "function", "function": map[string]any{"name": "now", "arguments": "{}"}},
			map[string]any{"id": "c3", "type": "function", "function": map[string]any{"name": "inspect", "arguments": "{}"}},
		}},
		map[string]any{"role": "tool", "tool_call_id": "c1", "content": "page 1"},
		map[string]any{"role": "tool", "tool_call_id": "c2", "content": "noon"},
		map[string]any{"role": "tool", "tool_call_id": "c3", "content": "page 2"},
		map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "text", "text": ToolImagesHeader},
			map[string]any{"type": "text", "text": "Call c1 (inspect):"},
			map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64,AQ=="}},
			map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64,Ag=="}},
			map[string]any{"type": "text", "text": "Call c3 (inspect):"},
			map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/jpeg;base64,Aw=="}},
		}},
	}
	if diff := cmp.Diff(want, body["messages"]); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(req.Messages, seen.Req.Messages); diff != "" {
		t.Errorf("as the fake server decodes it (-sent +decoded):\n%s", diff)
	}
}

func TestRequestWireOmitsZeroes(t *testing.T) {
	body, seen := wireRequest(t, Config{}, llm.Request{Messages: []llm.Message{{Role: llm.User, Text: "hi"}}})
	for _, key := range []string{"prompt_cache_key", "max_completion_tokens", "max_tokens", "tools"} {
		if v, ok := body[key]; ok {
			t.Errorf("%s = %v sent for a zero value", key, v)
		}
	}
	if msgs := body["messages"].([]any); len(msgs) != 1 {
		t.Errorf("messages %v: a system message without a system prompt?", msgs)
	}
	if got := seen.Header.Get("Authorization"); got != "" {
		t.Errorf("Authorization %q sent without an API key", got)
	}
}

func TestUnknownRole(t *testing.T) {
	m := newModel(t, "http://127.0.0.1:1")
	_, err := llm.Collect(m.Stream(context.Background(), llm.Request{Messages: []llm.Message{{Role: "narrator", Text: "x"}}}), nil)
	if e, ok := llm.AsError(err); !ok || e.Kind != llm.ErrBadRequest {
		t.Errorf("err = %v, want ErrBadRequest", err)
	}
}

func TestInvalidParameters(t *testing.T) {
	m := newModel(t, "http://127.0.0.1:1") // nothing listens: a request sent would be ErrNetwork
	req := llm.Request{Messages: []llm.Message{{Role: llm.User, Text: "x"}}, Tools: []llm.ToolDef{{Name: "x", Parameters: json.RawMessage(`{"type":`)}}}
	_, err := llm.Collect(m.Stream(context.Background(), req), nil)
	if e, ok := llm.AsError(err); !ok || e.Kind != llm.ErrBadRequest {
		t.Errorf("err = %v, want ErrBadRequest before sending", err)
	}
}

func TestStopReasons(t *testing.T) {
	tests := []struct {
		stop  llm.StopReason
		calls bool
		want  llm.StopReason
	}{
		{llm.StopLength, false, llm.StopLength},
		{llm.StopFiltered, false, llm.StopFiltered},
		{"eos", false, llm.StopEnd},
		{"eos", true, llm.StopToolCalls},
		{llm.StopEnd, true, llm.StopToolCalls}, // "stop" with calls, as some servers send
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s calls=%v", tc.stop, tc.calls), func(t *testing.T) {
			reply := llmtest.Reply{Text: []string{"a", "b"}, Stop: tc.stop}
			if tc.calls {
				reply.ToolCalls = []llm.ToolCall{llmtest.Call("c1", "read_file", map[string]string{"path": "x"})}
			}
			srv := llmtest.Start(t, llmtest.OpenAI{}, reply)
			resp, err := llm.Collect(newModel(t, srv.URL).Stream(context.Background(), llm.Request{}), nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Stop != tc.want {
				t.Errorf("stop = %q, want %q", resp.Stop, tc.want)
			}
		})
	}
}

// rawServer answers every request with status and body as they are.
func rawServer(t *testing.T, status int, header http.Header, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range header {
			w.Header()[k] = v
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

var sse = http.Header{"Content-Type": {"text/event-stream"}}

func chunk(choice string) string {
	return `data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[` + choice + `]}` + "\n\n"
}

func TestStreamEdgeCases(t *testing.T) {
	usage := `data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":null,"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}` + "\n\n"
	tests := []struct {
		name    string
		body    string
		want    llm.Response
		wantErr llm.ErrorKind
	}{
		{
			name: "usage chunk with null choices, as vLLM sends",
			body: chunk(`{"index":0,"delta":{"content":"hi"}}`) + chunk(`{"index":0,"delta":{},"finish_reason":"stop"}`) + usage + "data: [DONE]\n\n",
			want: llm.Response{Text: "hi", Stop: llm.StopEnd, Usage: llm.Usage{InputTokens: 3, OutputTokens: 2}},
		},
		{
			name: "calls sharing index 0 with their own IDs",
			body: chunk(`{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{\"x\":1}"}}]}}`) +
				chunk(`{"index":0,"delta":{"tool_calls":[{"index":0,"id":"b","function":{"name":"g","arguments":"{}"}}]},"finish_reason":"tool_calls"}`) + "data: [DONE]\n\n",
			want: llm.Response{Stop: llm.StopToolCalls, ToolCalls: []llm.ToolCall{{ID: "a", Name: "f", Args: []byte(`{"x":1}`)}, {ID: "b", Name: "g", Args: []byte(`{}`)}}},
		},
		{
			name: "a call without ID or arguments",
			body: chunk(`{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"f"}}]}}`) + chunk(`{"index":0,"delta":{},"finish_reason":"tool_calls"}`) + "data: [DONE]\n\n",
			want: llm.Response{Stop: llm.StopToolCalls, ToolCalls: []llm.ToolCall{{ID: "call_0", Name: "f", Args: []byte(`{}`)}}},
		},
		{
			name: "a made-up ID that a later call is given",
			body: chunk(`{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":"{}"}}]}}`) +
				chunk(`{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_0","function":{"name":"g","arguments":"{}"}}]},"finish_reason":"tool_calls"}`) + "data: [DONE]\n\n",
			want: llm.Response{Stop: llm.StopToolCalls, ToolCalls: []llm.ToolCall{{ID: "call_0", Name: "f", Args: []byte(`{}`)}, {ID: "call_0_2", Name: "g", Args: []byte(`{}`)}}},
		},
		{
			name: "a nameless call's made-up ID that another call was given",
			body: chunk(`{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}}`) +
				chunk(`{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_0","function":{"name":"g","arguments":"{}"}}]},"finish_reason":"tool_calls"}`) + "data: [DONE]\n\n",
			want: llm.Response{Stop: llm.StopToolCalls, ToolCalls: []llm.ToolCall{{ID: "call_0_2", Args: []byte(`{}`)}, {ID: "call_0", Name: "g", Args: []byte(`{}`)}}},
		},
		{
			name: "two calls given one ID",
			body: chunk(`{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{}"}},{"index":1,"id":"a","function":{"name":"g","arguments":"{}"}}]},"finish_reason":"tool_calls"}`) + "data: [DONE]\n\n",
			want: llm.Response{Stop: llm.StopToolCalls, ToolCalls: []llm.ToolCall{{ID: "a", Name: "f", Args: []byte(`{}`)}, {ID: "a_2", Name: "g", Args: []byte(`{}`)}}},
		},
		{
			name: "interleaved parallel calls and a repeated name",
			body: chunk(`{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":""}},{"index":1,"id":"b","function":{"name":"g","arguments":"[1"}}]}}`) +
				chunk(`{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"name":"g","arguments":",2]"}},{"index":0,"id":"a","function":{"arguments":"{}"}}]}}`) +
				chunk(`{"index":0,"delta":{},"finish_reason":"tool_calls"}`) + "data: [DONE]\n\n",
			want: llm.Response{Stop: llm.StopToolCalls, ToolCalls: []llm.ToolCall{{ID: "a", Name: "f", Args: []byte(`{}`)}, {ID: "b", Name: "g", Args: []byte(`[1,2]`)}}},
		},
		{
			name: "a refusal is text",
			body: chunk(`{"index":0,"delta":{"refusal":"I can't help with that."},"finish_reason":"stop"}`) + "data: [DONE]\n\n",
			want: llm.Response{Text: "I can't help with that.", Stop: llm.StopEnd},
		},
		{
			name:    "malformed chunk JSON",
			body:    chunk(`{"index":0,"delta":{"content":"hi"}}`) + "data: {\"id\":\"x\",\"choices\":[{\"delta\":\n\n",
			wantErr: llm.ErrServer,
		},
		{
			name:    "DONE without a finish reason",
			body:    chunk(`{"index":0,"delta":{"content":"hi"}}`) + "data: [DONE]\n\n",
			wantErr: llm.ErrServer,
		},
		{
			name:    "clean end of body without a finish reason",
			body:    chunk(`{"index":0,"delta":{"content":"hi"}}`),
			wantErr: llm.ErrServer,
		},
		{
			// The loop refuses it; the reply is not failed for it.
			name: "a call that never got a name",
			body: chunk(`{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"arguments":"{}"}}]},"finish_reason":"tool_calls"}`) + "data: [DONE]\n\n",
			want: llm.Response{Stop: llm.StopToolCalls, ToolCalls: []llm.ToolCall{{ID: "a", Args: []byte(`{}`)}}},
		},
		{
			name:    "error event mid-stream",
			body:    chunk(`{"index":0,"delta":{"content":"hi"}}`) + `data: {"error":{"message":"The server had an error","type":"server_error","code":null}}` + "\n\n",
			wantErr: llm.ErrServer,
		},
		{
			name:    "context-length error event",
			body:    `data: {"error":{"message":"too long","type":"invalid_request_error","code":"context_length_exceeded"}}` + "\n\n",
			wantErr: llm.ErrContextLength,
		},
		{
			name:    "not an event stream",
			body:    `{"hello":"world"}`,
			wantErr: llm.ErrServer,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			url := rawServer(t, 200, sse, tc.body)
			resp, err := llm.Collect(newModel(t, url).Stream(context.Background(), llm.Request{}), nil)
			if tc.wantErr != "" {
				if e, ok := llm.AsError(err); !ok || e.Kind != tc.wantErr {
					t.Fatalf("err = %v, want kind %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			if diff := cmp.Diff(tc.want, resp); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
		})
	}
}

func TestErrorBodies(t *testing.T) {
	tests := []struct {
		name   string
		status int
		header http.Header
		body   string
		want   llm.Error
	}{
		{
			name: "insufficient quota", status: 429,
			body: `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`,
			want: llm.Error{Kind: llm.ErrRateLimit, Status: 429, Msg: "You exceeded your current quota (insufficient_quota)"},
		},
		{
			name: "retry-after-ms wins", status: 429, header: http.Header{"Retry-After-Ms": {"1500"}, "Retry-After": {"2"}},
			body: `{"error":{"message":"slow down","type":"requests","param":null,"code":"rate_limit_exceeded"}}`,
			want: llm.Error{Kind: llm.ErrRateLimit, Status: 429, RetryAfter: 1500 * time.Millisecond, Msg: "slow down (rate_limit_exceeded)"},
		},
		{
			name: "key echoed back", status: 401,
			body: `{"error":{"message":"Incorrect API key provided: test-key. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
			want: llm.Error{Kind: llm.ErrAuth, Status: 401, Msg: "Incorrect API key provided: [redacted]. You can find your API key at https://platform.openai.com/account/api-keys. (invalid_api_key)"},
		},
		{
			name: "masked sk- key echoed back", status: 401,
			body: `{"error":{"message":"Incorrect API key provided: sk-proj-****abcd.","code":"invalid_api_key"}}`,
			want: llm.Error{Kind: llm.ErrAuth, Status: 401, Msg: "Incorrect API key provided: [redacted]. (invalid_api_key)"},
		},
		{
			name: "vLLM's top-level error", status: 400,
			body: `{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.","type":"BadRequestError","param":null,"code":400}`,
			want: llm.Error{Kind: llm.ErrContextLength, Status: 400, Msg: "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens."},
		},
		{
			name: "plain-text gateway error", status: 502, header: http.Header{"Content-Type": {"text/html"}},
			body: "<html>Bad Gateway</html>",
			want: llm.Error{Kind: llm.ErrServer, Status: 502, Msg: "<html>Bad Gateway</html>"},
		},
		{
			name: "empty body", status: 503, header: http.Header{"Retry-After": {"3"}},
			want: llm.Error{Kind: llm.ErrOverloaded, Status: 503, RetryAfter: 3 * time.Second, Msg: "Service Unavailable"},
		},
		{
			name: "string error", status: 404,
			body: `{"error":"model \"qwen9\" not found, try pulling it first"}`,
			want: llm.Error{Kind: llm.ErrBadRequest, Status: 404, Msg: `model "qwen9" not found, try pulling it first`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			url := rawServer(t, tc.status, tc.header, tc.body)
			_, err := llm.Collect(newModel(t, url).Stream(context.Background(), llm.Request{}), nil)
			e, ok := llm.AsError(err)
			if !ok {
				t.Fatalf("err = %v (%T), want *llm.Error", err, err)
			}
			if diff := cmp.Diff(tc.want, *e); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNetworkError(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	_, err := llm.Collect(newModel(t, url).Stream(context.Background(), llm.Request{}), nil)
	if e, ok := llm.AsError(err); !ok || e.Kind != llm.ErrNetwork || !e.Retryable() {
		t.Errorf("err = %v, want a retryable ErrNetwork", err)
	}
}

func TestDeadline(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Reading the body lets the server notice the client hang up.
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := llm.Collect(newModel(t, srv.URL).Stream(ctx, llm.Request{}), nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want context.DeadlineExceeded", err)
	}
}

// TestStopEarlyClosesStream checks that a consumer breaking out of the
// loop releases the connection: the server sees its request end.
func TestStopEarlyClosesStream(t *testing.T) {
	gone := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, chunk(`{"index":0,"delta":{"content":"one"}}`))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			close(gone)
		case <-time.After(10 * time.Second):
		}
	}))
	t.Cleanup(srv.Close)
	for ev, err := range newModel(t, srv.URL).Stream(context.Background(), llm.Request{}) {
		if err != nil || ev.Text != "one" {
			t.Fatalf("first event %+v, %v", ev, err)
		}
		break
	}
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("the server still holds the request after the consumer stopped")
	}
}
