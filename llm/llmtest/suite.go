package llmtest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/quiverhq/quiver/llm"
)

// NewModelFunc builds the adapter under test pointed at a fake server's
// base URL, with the API key "test-key".
type NewModelFunc func(t *testing.T, baseURL string) llm.Model

// RunSuite runs the behaviour every adapter must have, against its fake.
func RunSuite(t *testing.T, fake Fake, newModel NewModelFunc) {
	t.Run("Text", func(t *testing.T) { suiteText(t, fake, newModel) })
	t.Run("ToolCalls", func(t *testing.T) { suiteToolCalls(t, fake, newModel) })
	t.Run("NamelessCall", func(t *testing.T) { suiteNameless(t, fake, newModel) })
	t.Run("RequestRoundTrip", func(t *testing.T) { suiteRequest(t, fake, newModel) })
	t.Run("Errors", func(t *testing.T) { suiteErrors(t, fake, newModel) })
	t.Run("Truncated", func(t *testing.T) { suiteTruncated(t, fake, newModel) })
	t.Run("Cancelled", func(t *testing.T) { suiteCancelled(t, fake, newModel) })
	t.Run("CheckTool", func(t *testing.T) {
		if err := newModel(t, "http://127.0.0.1:1").CheckTool(SampleTool()); err != nil {
			t.Errorf("CheckTool refused an ordinary tool: %v", err)
		}
	})
}

// SampleTool is an ordinary declaration every provider takes.
func SampleTool() llm.ToolDef {
	return llm.ToolDef{
		Name:        "read_file",
		Description: "Reads a file.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"file path"},"limit":{"type":"integer"},"tags":{"type":"array","items":{"type":"string"}}},"required":["path"],"additionalProperties":false}`),
	}
}

func simpleRequest() llm.Request {
	return llm.Request{System: "Be brief.", Messages: []llm.Message{{Role: llm.User, Text: "hi"}}, Tools: []llm.ToolDef{SampleTool()}, CacheKey: "agent-a"}
}

func suiteText(t *testing.T, fake Fake, newModel NewModelFunc) {
	usage := llm.Usage{InputTokens: 120, CachedInputTokens: 100, OutputTokens: 7}
	srv := Start(t, fake, Reply{Text: []string{"Hel", "lo, ", "world"}, Usage: usage})
	var texts int
	resp, err := llm.Collect(newModel(t, srv.URL).Stream(context.Background(), simpleRequest()), func(ev llm.Event) {
		if ev.Kind == llm.EventText {
			texts++
		}
	})
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if resp.Text != "Hello, world" || resp.Stop != llm.StopEnd || len(resp.ToolCalls) != 0 {
		t.Errorf("response %+v", resp)
	}
	if texts < 2 {
		t.Errorf("%d text events: the reply was not streamed", texts)
	}
	if resp.Usage.InputTokens != usage.InputTokens || resp.Usage.OutputTokens != usage.OutputTokens || resp.Usage.CachedInputTokens != usage.CachedInputTokens {
		t.Errorf("usage %+v, want %+v", resp.Usage, usage)
	}
}

func suiteToolCalls(t *testing.T, fake Fake, newModel NewModelFunc) {
	calls := []llm.ToolCall{
		Call("call_1", "read_file", map[string]any{"path": "a/b.txt", "limit": 20, "tags": []string{"x", "y"}}),
		Call("call_2", "read_file", map[string]any{"path": "ünïcode \"quoted\".md"}),
	}
	srv := Start(t, fake, Reply{Text: []string{"Let me look."}, ToolCalls: calls, Usage: llm.Usage{InputTokens: 5, OutputTokens: 9}})
	var starts []string
	resp, err := llm.Collect(newModel(t, srv.URL).Stream(context.Background(), simpleRequest()), func(ev llm.Event) {
		if ev.Kind == llm.EventToolCallStart {
			starts = append(starts, ev.ToolCall.Name)
		}
	})
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if resp.Stop != llm.StopToolCalls || len(resp.ToolCalls) != 2 {
		t.Fatalf("response %+v", resp)
	}
	for i, c := range resp.ToolCalls {
		if c.Name != calls[i].Name || c.ID == "" || !sameJSON(c.Args, calls[i].Args) {
			t.Errorf("call %d = %s %s %s, want %s %s", i, c.ID, c.Name, c.Args, calls[i].Name, calls[i].Args)
		}
	}
	if len(starts) != 2 {
		t.Errorf("tool call starts %v, want one per call", starts)
	}
}

// suiteNameless checks that a call streamed without a name is passed on
// with an empty Name and an ID (for the loop to refuse), not failed, and
// that in a later request's history it is sent as llm.UnnamedCall.
func suiteNameless(t *testing.T, fake Fake, newModel NewModelFunc) {
	calls := []llm.ToolCall{Call("call_1", "", map[string]any{}), Call("call_2", "read_file", map[string]any{"path": "a"})}
	srv := Start(t, fake, Reply{ToolCalls: calls}, Reply{Text: []string{"ok"}})
	m := newModel(t, srv.URL)
	resp, err := llm.Collect(m.Stream(context.Background(), simpleRequest()), nil)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if len(resp.ToolCalls) != 2 || resp.ToolCalls[0].Name != "" || resp.ToolCalls[0].ID == "" || resp.ToolCalls[1].Name != "read_file" {
		t.Fatalf("calls %+v, want the nameless one with an ID, then read_file", resp.ToolCalls)
	}
	req := simpleRequest()
	results := make([]llm.ToolResult, len(resp.ToolCalls))
	for i, c := range resp.ToolCalls {
		results[i] = llm.ToolResult{CallID: c.ID, Name: c.Name, Content: "refused", IsError: true}
	}
	req.Messages = append(req.Messages, llm.Message{Role: llm.Assistant, ToolCalls: resp.ToolCalls}, llm.Message{Role: llm.Tool, Results: results})
	if _, err := llm.Collect(m.Stream(context.Background(), req), nil); err != nil {
		t.Fatalf("Stream with the nameless call in history: %v", err)
	}
	var sent []string
	for _, msg := range srv.Seen()[1].Req.Messages {
		for _, c := range msg.ToolCalls {
			sent = append(sent, c.Name)
		}
	}
	if diff := cmp.Diff([]string{llm.UnnamedCall, "read_file"}, sent); diff != "" {
		t.Errorf("call names sent back (-want +got):\n%s", diff)
	}
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return cmp.Equal(x, y)
}

// suiteRequest sends a conversation with every message kind and checks
// the fake decoded the same conversation back.
func suiteRequest(t *testing.T, fake Fake, newModel NewModelFunc) {
	srv := Start(t, fake, Reply{Text: []string{"ok"}})
	req := llm.Request{
		System: "You are terse.",
		Messages: []llm.Message{
			{Role: llm.User, Text: "Context: Ana, 09:00."},
			{Role: llm.User, Text: "Read a.txt and b.txt"},
			{Role: llm.Assistant, Text: "Reading.", ToolCalls: []llm.ToolCall{
				Call("c1", "read_file", map[string]any{"path": "a.txt"}),
				Call("c2", "read_file", map[string]any{"path": "b.txt"}),
			}},
			{Role: llm.Tool, Results: []llm.ToolResult{
				{CallID: "c1", Name: "read_file", Content: "alpha"},
				{CallID: "c2", Name: "read_file", Content: "not found", IsError: true},
			}},
		},
		Tools:     []llm.ToolDef{SampleTool()},
		CacheKey:  "agent-a",
		MaxTokens: 256,
	}
	if _, err := llm.Collect(newModel(t, srv.URL).Stream(context.Background(), req), nil); err != nil {
		t.Fatalf("Stream: %v", err)
	}
	seen := srv.Seen()
	if len(seen) != 1 {
		t.Fatalf("%d requests, want 1", len(seen))
	}
	got := seen[0].Req
	if got.System != req.System {
		t.Errorf("system %q", got.System)
	}
	if diff := cmp.Diff(normalise(req.Messages), normalise(got.Messages)); diff != "" {
		t.Errorf("messages as the provider saw them (-sent +decoded):\n%s", diff)
	}
	if len(got.Tools) != 1 || got.Tools[0].Name != "read_file" || got.Tools[0].Description != "Reads a file." {
		t.Errorf("tools %+v", got.Tools)
	}
	if auth := seen[0].Header.Get("Authorization") + seen[0].Header.Get("X-Api-Key") + seen[0].Header.Get("X-Goog-Api-Key"); !strings.Contains(auth, "test-key") {
		t.Errorf("no API key header sent")
	}
}

// normalise merges consecutive user messages (some providers join them)
// and canonicalises argument JSON, so equal conversations compare equal.
func normalise(ms []llm.Message) []llm.Message {
	var out []llm.Message
	for _, m := range ms {
		if n := len(out); n > 0 && m.Role == llm.User && out[n-1].Role == llm.User && len(m.Images) == 0 {
			out[n-1].Text += "\n\n" + m.Text
			continue
		}
		for i, c := range m.ToolCalls {
			var v any
			_ = json.Unmarshal(c.Args, &v)
			m.ToolCalls[i].Args, _ = json.Marshal(v)
		}
		out = append(out, m)
	}
	return out
}

func suiteErrors(t *testing.T, fake Fake, newModel NewModelFunc) {
	tests := []struct {
		name  string
		fail  Failure
		kind  llm.ErrorKind
		after time.Duration
	}{
		{"rate limit with Retry-After", Failure{Status: 429, RetryAfter: "7", Kind: llm.ErrRateLimit, Message: "slow down"}, llm.ErrRateLimit, 7 * time.Second},
		{"auth", Failure{Status: 401, Kind: llm.ErrAuth, Message: "invalid key"}, llm.ErrAuth, 0},
		{"context too long", Failure{Status: 400, Kind: llm.ErrContextLength, Message: "too many tokens"}, llm.ErrContextLength, 0},
		{"server error", Failure{Status: 500, Kind: llm.ErrServer, Message: "boom"}, llm.ErrServer, 0},
		{"overloaded", Failure{Status: 529, Kind: llm.ErrOverloaded, Message: "overloaded"}, llm.ErrOverloaded, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.fail.Status == 529 && fake.Name() != "anthropic" {
				tc.fail.Status = 503
			}
			srv := Start(t, fake, Reply{Fail: &tc.fail})
			_, err := llm.Collect(newModel(t, srv.URL).Stream(context.Background(), simpleRequest()), nil)
			e, ok := llm.AsError(err)
			if !ok {
				t.Fatalf("error %v (%T) is not an *llm.Error", err, err)
			}
			if e.Kind != tc.kind || e.Status != tc.fail.Status || e.RetryAfter != tc.after {
				t.Errorf("error %+v, want kind %s status %d retry-after %s", e, tc.kind, tc.fail.Status, tc.after)
			}
			if strings.Contains(e.Error(), "test-key") {
				t.Errorf("error leaks the key: %s", e)
			}
			if n := len(srv.Seen()); n != 1 {
				t.Errorf("%d requests: the adapter must not retry by itself (the loop does)", n)
			}
		})
	}
}

func suiteTruncated(t *testing.T, fake Fake, newModel NewModelFunc) {
	srv := Start(t, fake, Reply{Text: []string{"partial", " never"}, Truncate: true})
	_, err := llm.Collect(newModel(t, srv.URL).Stream(context.Background(), simpleRequest()), nil)
	if err == nil {
		t.Fatal("a truncated stream was taken as a whole reply")
	}
}

func suiteCancelled(t *testing.T, fake Fake, newModel NewModelFunc) {
	srv := Start(t, fake, Reply{Text: []string{"one", "two", "three"}})
	ctx, cancel := context.WithCancel(context.Background())
	var err error
	for _, e := range newModel(t, srv.URL).Stream(ctx, simpleRequest()) {
		if e != nil {
			err = e
			break
		}
		cancel()
	}
	cancel()
	if err == nil {
		// Some transports deliver the whole (small) body before the cancel
		// lands; what matters is that a cancel before the request fails.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err = llm.Collect(newModel(t, srv.URL).Stream(ctx, simpleRequest()), nil)
	}
	if err == nil || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled stream: err = %v, want context.Canceled", err)
	}
}
