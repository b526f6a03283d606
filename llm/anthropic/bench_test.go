package anthropic

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
)

// BenchmarkStream measures one streamed reply of 50 text deltas and 3
// tool calls from the fake server on loopback, end to end: request
// encoding, HTTP, SSE decoding and event assembly.
func BenchmarkStream(b *testing.B) {
	reply := llmtest.Reply{Usage: llm.Usage{InputTokens: 2000, CachedInputTokens: 1800, OutputTokens: 300}}
	for i := range 50 {
		reply.Text = append(reply.Text, fmt.Sprintf("word%d ", i))
	}
	for i := range 3 {
		reply.ToolCalls = append(reply.ToolCalls, llmtest.Call(fmt.Sprintf("toolu_%d", i), "read_file", map[string]any{"path": fmt.Sprintf("src/file%d.go", i), "limit": 200}))
	}
	srv := httptest.NewServer(llmtest.Anthropic{}.Handler(nil, func(llmtest.Seen) llmtest.Reply { return reply }))
	defer srv.Close()
	m, err := New(Config{APIKey: "test-key", BaseURL: srv.URL, Model: "claude-test"})
	if err != nil {
		b.Fatal(err)
	}
	req := llm.Request{System: "You are terse.", Messages: []llm.Message{{Role: llm.User, Text: "Read three files."}}, Tools: []llm.ToolDef{llmtest.SampleTool()}}
	b.ReportAllocs()
	for b.Loop() {
		resp, err := llm.Collect(m.Stream(context.Background(), req), nil)
		if err != nil || len(resp.ToolCalls) != 3 {
			b.Fatalf("reply %+v, %v", resp, err)
		}
	}
}
