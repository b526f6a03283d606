package gemini

import (
	"context"
	"encoding/json"
	"errors"
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

const testKey = "test-key"

func newTestModel(t testing.TB, baseURL string) *Model {
	t.Helper()
	m, err := New(context.Background(), Config{APIKey: testKey, BaseURL: baseURL, Model: "gemini-2.5-flash"})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return m
}

func TestSuite(t *testing.T) {
	llmtest.RunSuite(t, llmtest.Gemini{}, func(t *testing.T, baseURL string) llm.Model {
		return newTestModel(t, baseURL)
	})
}

func TestNew(t *testing.T) {
	t.Setenv("GEMINI_API_KEY", "")
	t.Setenv("GOOGLE_API_KEY", "")
	if _, err := New(context.Background(), Config{APIKey: testKey}); err == nil {
		t.Error("New accepted a config without a model")
	}
	if _, err := New(context.Background(), Config{Model: "gemini-2.5-flash"}); err == nil {
		t.Error("New accepted a config without a key")
	}
	m := newTestModel(t, "")
	if m.Ref() != "gemini:gemini-2.5-flash" {
		t.Errorf("Ref = %q", m.Ref())
	}
	if c := m.Capabilities(); !c.Tools || !c.ParallelTools || !c.Vision {
		t.Errorf("zero Caps gave %+v, want the Gemini defaults", c)
	}
	given := turn.Capabilities{Tools: true}
	m2, err := New(context.Background(), Config{APIKey: testKey, Model: "x", Caps: given})
	if err != nil || m2.Capabilities() != given {
		t.Errorf("Caps %+v, %v; want as given", m2.Capabilities(), err)
	}
}

// TestRequestWire checks what reaches the wire for images, tool results
// (errors included) and tool schemas.
func TestRequestWire(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Gemini{}, llmtest.Reply{Text: []string{"ok"}})
	req := llm.Request{
		System: "sys",
		Messages: []llm.Message{
			{Role: llm.User, Text: "what is this?", Images: []llm.Image{{MIME: "image/png", Data: []byte{0x89, 'P', 'N', 'G'}}}},
			{Role: llm.Assistant, ToolCalls: []llm.ToolCall{llmtest.Call("c1", "read_file", map[string]any{"path": "a"}), {ID: "c2", Name: "read_file"}}},
			{Role: llm.Tool, Results: []llm.ToolResult{
				{CallID: "c1", Name: "read_file", Content: "alpha", Images: []llm.Image{{MIME: "image/png", Data: []byte{1}}, {MIME: "image/jpeg", Data: []byte{2}}}},
				{CallID: "c2", Name: "read_file", Content: "no such file", IsError: true},
			}},
			{Role: llm.Assistant}, // nothing to send: left out
		},
		Tools:     []llm.ToolDef{llmtest.SampleTool()},
		MaxTokens: 64,
	}
	if _, err := llm.Collect(newTestModel(t, srv.URL).Stream(context.Background(), req), nil); err != nil {
		t.Fatalf("Stream: %v", err)
	}
	var wire struct {
		Contents          []map[string]any `json:"contents"`
		SystemInstruction map[string]any   `json:"systemInstruction"`
		Tools             []map[string]any `json:"tools"`
		GenerationConfig  map[string]any   `json:"generationConfig"`
	}
	if err := json.Unmarshal(srv.Seen()[0].Raw, &wire); err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{
		{"role": "user", "parts": []any{
			map[string]any{"inlineData": map[string]any{"mimeType": "image/png", "data": "iVBORw=="}},
			map[string]any{"text": "what is this?"},
		}},
		{"role": "model", "parts": []any{
			map[string]any{"functionCall": map[string]any{"id": "c1", "name": "read_file", "args": map[string]any{"path": "a"}}},
			map[string]any{"functionCall": map[string]any{"id": "c2", "name": "read_file"}}, // no arguments: args left out
		}},
		{"role": "user", "parts": []any{
			map[string]any{"functionResponse": map[string]any{"id": "c1", "name": "read_file", "response": map[string]any{"output": "alpha"},
				"parts": []any{ // a result's images: a multimodal function response
					map[string]any{"inlineData": map[string]any{"mimeType": "image/png", "data": "AQ=="}},
					map[string]any{"inlineData": map[string]any{"mimeType": "image/jpeg", "data": "Ag=="}},
				}}},
			map[string]any{"functionResponse": map[string]any{"id": "c2", "name": "read_file", "response": map[string]any{"error": "no such file"}}},
		}},
	}
	if diff := cmp.Diff(want, wire.Contents); diff != "" {
		t.Errorf("contents (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(req.Messages[2].Results, srv.Seen()[0].Req.Messages[2].Results); diff != "" {
		t.Errorf("results as the fake server decodes them (-sent +decoded):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"role": "user", "parts": []any{map[string]any{"text": "sys"}}}, wire.SystemInstruction); diff != "" {
		t.Errorf("systemInstruction (-want +got):\n%s", diff)
	}
	if wire.GenerationConfig["maxOutputTokens"] != 64.0 {
		t.Errorf("generationConfig %v", wire.GenerationConfig)
	}
	wantTools := `[{"functionDeclarations":[{"description":"Reads a file.","name":"read_file","parameters":{"properties":{"limit":{"type":"INTEGER"},"path":{"description":"file path","type":"STRING"},"tags":{"items":{"type":"STRING"},"type":"ARRAY"}},"required":["path"],"type":"OBJECT"}}]}]`
	if got, _ := json.Marshal(wire.Tools); string(got) != wantTools {
		t.Errorf("tools\n got %s\nwant %s", got, wantTools)
	}
}

func TestRequestRefusals(t *testing.T) {
	m := newTestModel(t, "http://127.0.0.1:1") // never reached
	tests := []struct {
		name string
		req  llm.Request
		kind llm.ErrorKind
	}{
		{"unsupported tool", llm.Request{Tools: []llm.ToolDef{{Name: "t", Parameters: json.RawMessage(`{"anyOf":[]}`)}}}, llm.ErrUnsupportedTool},
		{"arguments not an object", llm.Request{Messages: []llm.Message{{Role: llm.Assistant, ToolCalls: []llm.ToolCall{{ID: "c", Name: "t", Args: json.RawMessage(`[1]`)}}}}}, llm.ErrBadRequest},
		{"unknown role", llm.Request{Messages: []llm.Message{{Role: "system", Text: "x"}}}, llm.ErrBadRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := llm.Collect(m.Stream(context.Background(), tc.req), nil)
			if e, ok := llm.AsError(err); !ok || e.Kind != tc.kind {
				t.Errorf("err = %v, want kind %s", err, tc.kind)
			}
		})
	}
}

// sseServer answers every request with the given SSE events, each flushed.
func sseServer(t *testing.T, events ...string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range events {
			w.Write([]byte("data: " + ev + "\r\n\r\n"))
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestStreamEvents(t *testing.T) {
	text := func(s string) string {
		return `{"candidates":[{"content":{"role":"model","parts":[{"text":"` + s + `"}]}}]}`
	}
	finish := func(reason string) string {
		return `{"candidates":[{"content":{"role":"model","parts":[{"text":""}]},"finishReason":"` + reason + `"}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":3}}`
	}
	tests := []struct {
		name   string
		events []string
		want   llm.Response
		kind   llm.ErrorKind // when an error is expected
	}{
		{"stop", []string{text("a"), finish("STOP")}, llm.Response{Text: "a", Stop: llm.StopEnd, Usage: llm.Usage{InputTokens: 10, OutputTokens: 3}}, ""},
		{"max tokens", []string{text("a"), finish("MAX_TOKENS")}, llm.Response{Text: "a", Stop: llm.StopLength, Usage: llm.Usage{InputTokens: 10, OutputTokens: 3}}, ""},
		{"safety", []string{finish("SAFETY")}, llm.Response{Stop: llm.StopFiltered, Usage: llm.Usage{InputTokens: 10, OutputTokens: 3}}, ""},
		{"recitation", []string{text("a"), finish("RECITATION")}, llm.Response{Text: "a", Stop: llm.StopFiltered, Usage: llm.Usage{InputTokens: 10, OutputTokens: 3}}, ""},
		{"blocklist", []string{finish("BLOCKLIST")}, llm.Response{Stop: llm.StopFiltered, Usage: llm.Usage{InputTokens: 10, OutputTokens: 3}}, ""},
		{"prohibited content", []string{finish("PROHIBITED_CONTENT")}, llm.Response{Stop: llm.StopFiltered, Usage: llm.Usage{InputTokens: 10, OutputTokens: 3}}, ""},
		{"prompt blocked", []string{`{"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":4}}`}, llm.Response{Stop: llm.StopFiltered, Usage: llm.Usage{InputTokens: 4}}, ""},
		{
			"usage after the finish, thoughts skipped and counted",
			[]string{
				`{"candidates":[{"content":{"role":"model","parts":[{"text":"hmm","thought":true},{"text":"b"}]}}],"usageMetadata":{"promptTokenCount":10}}`,
				`{"candidates":[{"content":{"role":"model","parts":[{"text":"c"}]},"finishReason":"STOP"}]}`,
				`{"usageMetadata":{"promptTokenCount":100,"cachedContentTokenCount":60,"candidatesTokenCount":5,"thoughtsTokenCount":7}}`,
			},
			llm.Response{Text: "bc", Stop: llm.StopEnd, Usage: llm.Usage{InputTokens: 100, CachedInputTokens: 60, OutputTokens: 12}}, "",
		},
		{
			"calls without ids are numbered, ids kept",
			[]string{
				`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"f","args":{"x":1}}},{"functionCall":{"id":"g-7","name":"g"}}]}}]}`,
				`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"f","args":{"x":2}}}]},"finishReason":"STOP"}]}`,
			},
			llm.Response{Stop: llm.StopToolCalls, ToolCalls: []llm.ToolCall{
				{ID: "call_1", Name: "f", Args: json.RawMessage(`{"x":1}`)},
				{ID: "g-7", Name: "g", Args: json.RawMessage(`{}`)},
				{ID: "call_3", Name: "f", Args: json.RawMessage(`{"x":2}`)},
			}}, "",
		},
		{
			"a given id equal to an earlier call's is made unique",
			[]string{
				`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"f"}},{"functionCall":{"id":"call_1","name":"g"}},{"functionCall":{"id":"call_1","name":"h"}}]},"finishReason":"STOP"}]}`,
			},
			llm.Response{Stop: llm.StopToolCalls, ToolCalls: []llm.ToolCall{
				{ID: "call_1", Name: "f", Args: json.RawMessage(`{}`)},
				{ID: "call_1_2", Name: "g", Args: json.RawMessage(`{}`)},
				{ID: "call_1_3", Name: "h", Args: json.RawMessage(`{}`)},
			}}, "",
		},
		{"no finish reason", []string{text("a"), `{"usageMetadata":{"promptTokenCount":1}}`}, llm.Response{}, llm.ErrServer},
		{"malformed function call", []string{finish("MALFORMED_FUNCTION_CALL")}, llm.Response{}, llm.ErrServer},
		{"malformed JSON", []string{text("a"), `{"candidates":[{"content":`}, llm.Response{}, llm.ErrServer},
		{"error event", []string{text("a"), `{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}`}, llm.Response{}, llm.ErrOverloaded},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var dones int
			got, err := llm.Collect(newTestModel(t, sseServer(t, tc.events...)).Stream(context.Background(), llm.Request{}), func(ev llm.Event) {
				if ev.Kind == llm.EventDone {
					dones++
				}
			})
			if tc.kind != "" {
				if e, ok := llm.AsError(err); !ok || e.Kind != tc.kind {
					t.Fatalf("err = %v, want kind %s", err, tc.kind)
				}
				if dones != 0 {
					t.Errorf("EventDone before the error")
				}
				return
			}
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
			if dones != 1 {
				t.Errorf("%d EventDone, want 1", dones)
			}
		})
	}
}

// errorServer answers with status and body.
func errorServer(t *testing.T, status int, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		want   llm.Error
	}{
		{
			"quota with RetryInfo", 429,
			`{"error":{"code":429,"message":"You exceeded your current quota.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.5s"}]}}`,
			llm.Error{Kind: llm.ErrRateLimit, Status: 429, RetryAfter: 1500 * time.Millisecond},
		},
		{
			"bad key is a 400", 400,
			`{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com"}]}}`,
			llm.Error{Kind: llm.ErrAuth, Status: 400},
		},
		{"permission denied", 403, `{"error":{"code":403,"message":"denied","status":"PERMISSION_DENIED"}}`, llm.Error{Kind: llm.ErrAuth, Status: 403}},
		{"too long", 400, `{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}`, llm.Error{Kind: llm.ErrContextLength, Status: 400}},
		{"bad request", 400, `{"error":{"code":400,"message":"* GenerateContentRequest.contents: contents is not specified","status":"INVALID_ARGUMENT"}}`, llm.Error{Kind: llm.ErrBadRequest, Status: 400}},
		{"internal", 500, `{"error":{"code":500,"message":"An internal error has occurred.","status":"INTERNAL"}}`, llm.Error{Kind: llm.ErrServer, Status: 500}},
		{"unavailable", 503, `{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}`, llm.Error{Kind: llm.ErrOverloaded, Status: 503}},
		{"status without code", 429, `{"error":{"message":"slow down","status":"RESOURCE_EXHAUSTED"}}`, llm.Error{Kind: llm.ErrRateLimit, Status: 429}},
		{"plain text body", 502, `Bad Gateway`, llm.Error{Kind: llm.ErrServer, Status: 502}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := llm.Collect(newTestModel(t, errorServer(t, tc.status, tc.body)).Stream(context.Background(), llm.Request{}), nil)
			e, ok := llm.AsError(err)
			if !ok {
				t.Fatalf("err = %v (%T), want *llm.Error", err, err)
			}
			if e.Kind != tc.want.Kind || e.Status != tc.want.Status || e.RetryAfter != tc.want.RetryAfter {
				t.Errorf("error %+v, want %+v", e, tc.want)
			}
		})
	}
}

func TestErrorsNeverHoldTheKey(t *testing.T) {
	// A server that echoes the key back must not leak it through us.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(400)
		w.Write([]byte(`{"error":{"code":400,"message":"bad key ` + r.Header.Get("X-Goog-Api-Key") + `","status":"INVALID_ARGUMENT"}}`))
	}))
	defer srv.Close()
	_, err := llm.Collect(newTestModel(t, srv.URL).Stream(context.Background(), llm.Request{}), nil)
	if err == nil || strings.Contains(err.Error(), testKey) {
		t.Errorf("err = %v", err)
	}
}

func TestNetworkError(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there any more
	_, err := llm.Collect(newTestModel(t, url).Stream(context.Background(), llm.Request{}), nil)
	if e, ok := llm.AsError(err); !ok || e.Kind != llm.ErrNetwork {
		t.Errorf("err = %v, want kind %s", err, llm.ErrNetwork)
	}
}

// TestStopEarly checks that breaking out of the iteration ends the
// request: the server sees its client go away.
func TestStopEarly(t *testing.T) {
	gone := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte(`data: {"candidates":[{"content":{"role":"model","parts":[{"text":"a"}]}}]}` + "\r\n\r\n"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(gone)
	}))
	defer srv.Close()
	for ev, err := range newTestModel(t, srv.URL).Stream(context.Background(), llm.Request{}) {
		if err != nil || ev.Kind != llm.EventText {
			t.Fatalf("first event %+v, %v", ev, err)
		}
		break
	}
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("the request outlived the iteration")
	}
}

func TestCancelMidStream(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte(`data: {"candidates":[{"content":{"role":"model","parts":[{"text":"a"}]}}]}` + "\r\n\r\n"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var err error
	for _, e := range newTestModel(t, srv.URL).Stream(ctx, llm.Request{}) {
		if e != nil {
			err = e
			break
		}
		cancel()
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

// BenchmarkStream measures one streamed reply of 50 text deltas and 3
// calls from the fake server on loopback, through the SDK and the adapter.
func BenchmarkStream(b *testing.B) {
	reply := llmtest.Reply{
		Text: make([]string, 50),
		ToolCalls: []llm.ToolCall{
			llmtest.Call("c1", "read_file", map[string]any{"path": "a.txt"}),
			llmtest.Call("c2", "read_file", map[string]any{"path": "b.txt", "limit": 10}),
			llmtest.Call("c3", "read_file", map[string]any{"path": "c.txt", "tags": []string{"x"}}),
		},
		Usage: llm.Usage{InputTokens: 1000, CachedInputTokens: 800, OutputTokens: 120},
	}
	for i := range reply.Text {
		reply.Text[i] = "word "
	}
	replies := make(chan llmtest.Reply, 1)
	// The fake reports only protocol mistakes to its T, and Collect's
	// checks below would fail on those anyway.
	h := llmtest.Gemini{}.Handler(&testing.T{}, func(llmtest.Seen) llmtest.Reply { return <-replies })
	srv := httptest.NewServer(h)
	defer srv.Close()
	m := newTestModel(b, srv.URL)
	req := llm.Request{System: "Be brief.", Messages: []llm.Message{{Role: llm.User, Text: "hi"}}, Tools: []llm.ToolDef{llmtest.SampleTool()}}
	b.ReportAllocs()
	for b.Loop() {
		replies <- reply
		resp, err := llm.Collect(m.Stream(context.Background(), req), nil)
		if err != nil || len(resp.ToolCalls) != 3 {
			b.Fatalf("Collect: %v, %+v", err, resp)
		}
	}
}

// TestThoughtSignatureRoundTrip: the signature Gemini attaches to a function
// call comes out on the call and goes back with it in the next request.
func TestThoughtSignatureRoundTrip(t *testing.T) {
	url := sseServer(t,
		`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"read_file","args":{"path":"a"}},"thoughtSignature":"c2lnLTE="}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":1}}`)
	resp, err := llm.Collect(newTestModel(t, url).Stream(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.User, Text: "hi"}}}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 1 || string(resp.ToolCalls[0].Signature) != "sig-1" {
		t.Fatalf("calls %+v, want the signature sig-1", resp.ToolCalls)
	}
	srv := llmtest.Start(t, llmtest.Gemini{}, llmtest.Reply{Text: []string{"ok"}})
	req := llm.Request{Messages: []llm.Message{
		{Role: llm.User, Text: "hi"},
		{Role: llm.Assistant, ToolCalls: resp.ToolCalls},
		{Role: llm.Tool, Results: []llm.ToolResult{{CallID: resp.ToolCalls[0].ID, Name: "read_file", Content: "x"}}},
	}}
	if _, err := llm.Collect(newTestModel(t, srv.URL).Stream(context.Background(), req), nil); err != nil {
		t.Fatal(err)
	}
	if raw := string(srv.Seen()[0].Raw); !strings.Contains(raw, `"thoughtSignature":"c2lnLTE="`) {
		t.Errorf("signature not sent back: %s", raw)
	}
}
