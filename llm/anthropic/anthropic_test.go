package anthropic

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
	"github.com/quiverhq/quiver/turn"
)

func newTestModel(t *testing.T, baseURL string) llm.Model {
	t.Helper()
	m, err := New(Config{APIKey: "test-key", BaseURL: baseURL, Model: "claude-test"})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestSuite(t *testing.T) {
	llmtest.RunSuite(t, llmtest.Anthropic{}, newTestModel)
}

func TestNew(t *testing.T) {
	if _, err := New(Config{APIKey: "k"}); err == nil {
		t.Error("New without a model name succeeded")
	}
	m, err := New(Config{APIKey: "k", Model: "claude-sonnet-4-5"})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Ref(); got != "anthropic:claude-sonnet-4-5" {
		t.Errorf("Ref() = %q", got)
	}
	if want := (turn.Capabilities{Tools: true, ParallelTools: true, Vision: true, DeferredTools: true}); m.Capabilities() != want {
		t.Errorf("default capabilities %+v, want %+v", m.Capabilities(), want)
	}
	// Deferred tools only on the models that take them.
	for name, want := range map[string]bool{
		"claude-sonnet-4-5": true, "claude-opus-4-5-20251101": true, "claude-opus-4-6": true, "claude-sonnet-5": true,
		"claude-sonnet-4-20250514": false, "claude-3-5-haiku-latest": false, "claude-haiku-4-5": false, "claude-opus-4-1": false,
	} {
		if m, _ := New(Config{APIKey: "k", Model: name}); m.Capabilities().DeferredTools != want {
			t.Errorf("%s: deferred tools %v, want %v", name, !want, want)
		}
	}
	caps := turn.Capabilities{Tools: true}
	if m, _ := New(Config{Model: "x", Caps: caps}); m.Capabilities() != caps {
		t.Errorf("configured capabilities %+v, want %+v", m.Capabilities(), caps)
	}
}

// wireRequest sends req to a fake answering "ok" and returns the request
// body as the fake received it, decoded as generic JSON.
func wireRequest(t *testing.T, cfg Config, req llm.Request) map[string]any {
	t.Helper()
	srv := llmtest.Start(t, llmtest.Anthropic{}, llmtest.Reply{Text: []string{"ok"}})
	cfg.APIKey, cfg.BaseURL, cfg.Model = "test-key", srv.URL, "claude-test"
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := llm.Collect(m.Stream(context.Background(), req), nil); err != nil {
		t.Fatalf("Stream: %v", err)
	}
	seen := srv.Seen()
	if len(seen) != 1 {
		t.Fatalf("%d requests, want 1", len(seen))
	}
	var body map[string]any
	if err := json.Unmarshal(seen[0].Raw, &body); err != nil {
		t.Fatal(err)
	}
	if got := seen[0].Header.Get("X-Api-Key"); got != "test-key" {
		t.Errorf("x-api-key header %q", got)
	}
	return body
}

// wireJSON decodes a JSON literal for comparison with a wire body.
func wireJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return v
}

func TestCacheBreakpoints(t *testing.T) {
	second := llmtest.SampleTool()
	second.Name = "write_file"
	body := wireRequest(t, Config{}, llm.Request{
		System:   "You are terse.",
		Messages: []llm.Message{{Role: llm.User, Text: "hi"}},
		Tools:    []llm.ToolDef{llmtest.SampleTool(), second},
	})
	ephemeral := wireJSON(t, `{"type":"ephemeral"}`)
	tools := body["tools"].([]any)
	if got := tools[len(tools)-1].(map[string]any)["cache_control"]; !cmp.Equal(got, ephemeral) {
		t.Errorf("last tool's cache_control = %v, want %v", got, ephemeral)
	}
	if got, ok := tools[0].(map[string]any)["cache_control"]; ok {
		t.Errorf("first tool has cache_control %v: only the last tool is a breakpoint", got)
	}
	system := body["system"].([]any)
	want := wireJSON(t, `[{"type":"text","text":"You are terse.","cache_control":{"type":"ephemeral"}}]`)
	if diff := cmp.Diff(want, any(system)); diff != "" {
		t.Errorf("system blocks (-want +got):\n%s", diff)
	}
	if _, ok := body["cache_control"]; ok {
		t.Error("request-level cache_control set: the breakpoints are explicit")
	}
}

func TestNoSystemNoTools(t *testing.T) {
	body := wireRequest(t, Config{}, llm.Request{Messages: []llm.Message{{Role: llm.User, Text: "hi"}}})
	for _, field := range []string{"system", "tools"} {
		if v, ok := body[field]; ok {
			t.Errorf("%s = %v, want it left out", field, v)
		}
	}
}

func TestToolSchemaOnTheWire(t *testing.T) {
	tool := llmtest.SampleTool()
	tool.Parameters = json.RawMessage(`{"type":"object","properties":{"p":{"anyOf":[{"type":"string"},{"type":"null"}]}},"required":["p"],"additionalProperties":false,"$defs":{"x":{"type":"integer"}}}`)
	body := wireRequest(t, Config{}, llm.Request{Messages: []llm.Message{{Role: llm.User, Text: "hi"}}, Tools: []llm.ToolDef{tool}})
	got := body["tools"].([]any)[0].(map[string]any)
	if diff := cmp.Diff(wireJSON(t, string(tool.Parameters)), got["input_schema"]); diff != "" {
		t.Errorf("input_schema (-declared +sent):\n%s", diff)
	}
	if got["name"] != tool.Name || got["description"] != tool.Description {
		t.Errorf("tool %v", got)
	}
}

func TestMessagesOnTheWire(t *testing.T) {
	png := []byte{0x89, 'P', 'N', 'G', 0, 1, 2}
	tests := []struct {
		name string
		msgs []llm.Message
		want string
	}{
		{
			name: "context and user message merged",
			msgs: []llm.Message{{Role: llm.User, Text: "Context: Ana."}, {Role: llm.User, Text: "Hello"}},
			want: `[{"role":"user","content":[{"type":"text","text":"Context: Ana."},{"type":"text","text":"Hello"}]}]`,
		},
		{
			name: "tool results in one user message",
			msgs: []llm.Message{
				{Role: llm.User, Text: "Read both"},
				{Role: llm.Assistant, Text: "Reading.", ToolCalls: []llm.ToolCall{
					{ID: "c1", Name: "read_file", Args: json.RawMessage(`{"path":"a"}`)},
					{ID: "c2", Name: "read_file", Args: json.RawMessage(``)},
				}},
				{Role: llm.Tool, Results: []llm.ToolResult{
					{CallID: "c1", Name: "read_file", Content: "alpha"},
					{CallID: "c2", Name: "read_file", Content: "not found", IsError: true},
				}},
				{Role: llm.User, Text: "And then?"},
			},
			want: `[
				{"role":"user","content":[{"type":"text","text":"Read both"}]},
				{"role":"assistant","content":[
					{"type":"text","text":"Reading."},
					{"type":"tool_use","id":"c1","name":"read_file","input":{"path":"a"}},
					{"type":"tool_use","id":"c2","name":"read_file","input":{}}]},
				{"role":"user","content":[
					{"type":"tool_result","tool_use_id":"c1","content":[{"type":"text","text":"alpha"}]},
					{"type":"tool_result","tool_use_id":"c2","content":[{"type":"text","text":"not found"}],"is_error":true},
					{"type":"text","text":"And then?"}]}]`,
		},
		{
			name: "image as base64 before its text",
			msgs: []llm.Message{{Role: llm.User, Text: "What is this?", Images: []llm.Image{{MIME: "image/png", Data: png}}}},
			want: `[{"role":"user","content":[
				{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORwABAg=="}},
				{"type":"text","text":"What is this?"}]}]`,
		},
		{
			name: "tool result images as image blocks in its content",
			msgs: []llm.Message{{Role: llm.User, Text: "check"}, {Role: llm.Assistant, ToolCalls: []llm.ToolCall{{ID: "c", Name: "inspect", Args: json.RawMessage(`{}`)}}},
				{Role: llm.Tool, Results: []llm.ToolResult{{CallID: "c", Name: "inspect", Content: "1 page", Images: []llm.Image{{MIME: "image/png", Data: png}, {MIME: "image/jpeg", Data: []byte{1}}}}}}},
			want: `[
				{"role":"user","content":[{"type":"text","text":"check"}]},
				{"role":"assistant","content":[{"type":"tool_use","id":"c","name":"inspect","input":{}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"c","content":[
					{"type":"text","text":"1 page"},
					{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORwABAg=="}},
					{"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"AQ=="}}]}]}]`,
		},
		{
			name: "empty text left out",
			msgs: []llm.Message{{Role: llm.User, Text: "hi"}, {Role: llm.Assistant, ToolCalls: []llm.ToolCall{{ID: "c", Name: "t", Args: json.RawMessage(`{}`)}}}, {Role: llm.Tool, Results: []llm.ToolResult{{CallID: "c", Name: "t"}}}},
			want: `[
				{"role":"user","content":[{"type":"text","text":"hi"}]},
				{"role":"assistant","content":[{"type":"tool_use","id":"c","name":"t","input":{}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"c"}]}]`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := wireRequest(t, Config{}, llm.Request{Messages: tc.msgs})
			if diff := cmp.Diff(wireJSON(t, tc.want), body["messages"]); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMaxTokens(t *testing.T) {
	tests := []struct {
		name          string
		config, req   int
		wantMaxTokens float64
	}{
		{"default", 0, 0, DefaultMaxTokens},
		{"config", 1000, 0, 1000},
		{"request over config", 1000, 256, 256},
		{"request alone", 0, 300, 300},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := wireRequest(t, Config{MaxTokens: tc.config}, llm.Request{MaxTokens: tc.req, Messages: []llm.Message{{Role: llm.User, Text: "hi"}}})
			if got := body["max_tokens"]; got != tc.wantMaxTokens {
				t.Errorf("max_tokens = %v, want %v", got, tc.wantMaxTokens)
			}
			if body["stream"] != true || body["model"] != "claude-test" {
				t.Errorf("stream %v model %v", body["stream"], body["model"])
			}
		})
	}
}

func TestStopReasons(t *testing.T) {
	for _, stop := range []llm.StopReason{llm.StopEnd, llm.StopLength, llm.StopFiltered} {
		t.Run(string(stop), func(t *testing.T) {
			srv := llmtest.Start(t, llmtest.Anthropic{}, llmtest.Reply{Text: []string{"a"}, Stop: stop})
			resp, err := llm.Collect(newTestModel(t, srv.URL).Stream(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.User, Text: "hi"}}}), nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Stop != stop {
				t.Errorf("stop %q, want %q", resp.Stop, stop)
			}
		})
	}
}

func TestCacheUsage(t *testing.T) {
	usage := llm.Usage{InputTokens: 1200, CachedInputTokens: 900, CacheWriteTokens: 250, OutputTokens: 42}
	srv := llmtest.Start(t, llmtest.Anthropic{}, llmtest.Reply{Text: []string{"ok"}, Usage: usage})
	var usages []llm.Usage
	resp, err := llm.Collect(newTestModel(t, srv.URL).Stream(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.User, Text: "hi"}}}), func(ev llm.Event) {
		if ev.Kind == llm.EventUsage {
			usages = append(usages, ev.Usage)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(usage, resp.Usage); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
	if len(usages) != 1 {
		t.Errorf("%d usage events, want one, at the end", len(usages))
	}
}

// TestToolResultImagesDecodeInTheFake: the fake server reads a
// tool_result's image blocks back onto the result.
func TestToolResultImagesDecodeInTheFake(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Anthropic{}, llmtest.Reply{Text: []string{"ok"}})
	m, err := New(Config{APIKey: "k", BaseURL: srv.URL, Model: "claude-test"})
	if err != nil {
		t.Fatal(err)
	}
	results := []llm.ToolResult{{CallID: "c", Name: "inspect", Content: "1 page", Images: []llm.Image{{MIME: "image/png", Data: []byte{1, 2}}}}}
	req := llm.Request{Messages: []llm.Message{{Role: llm.User, Text: "check"},
		{Role: llm.Assistant, ToolCalls: []llm.ToolCall{{ID: "c", Name: "inspect", Args: json.RawMessage(`{}`)}}},
		{Role: llm.Tool, Results: results}}}
	if _, err := llm.Collect(m.Stream(context.Background(), req), nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(results, srv.Seen()[0].Req.Messages[2].Results); diff != "" {
		t.Errorf("decoded results (-sent +decoded):\n%s", diff)
	}
}
