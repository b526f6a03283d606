package openai

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
)

// BenchmarkStream measures one streamed call against the fake server on
// loopback: a reply of 50 text deltas and 3 tool calls, request encoding,
// SSE decoding and event assembly included.
func BenchmarkStream(b *testing.B) {
	reply := llmtest.Reply{Usage: llm.Usage{InputTokens: 1000, CachedInputTokens: 800, OutputTokens: 120}}
	for i := range 50 {
		reply.Text = append(reply.Text, fmt.Sprintf("word%d ", i))
	}
	for i := range 3 {
		reply.ToolCalls = append(reply.ToolCalls, llmtest.Call(fmt.Sprintf("call_%d", i), "read_file",
			map[string]any{"path": fmt.Sprintf("src/file%d.go", i), "limit": 200, "tags": []string{"a", "b"}}))
	}
	// The fake reports a malformed request through t.Errorf, and a
	// benchmark has no *testing.T; the zero T stands in (a report from it
	// panics the handler, which fails the call and so the benchmark).
	h := llmtest.OpenAI{}.Handler(new(testing.T), func(llmtest.Seen) llmtest.Reply { return reply })
	srv := httptest.NewServer(h)
	b.Cleanup(srv.Close)
	m := newModel(b, srv.URL)
	req := llm.Request{System: "Be brief.", Messages: []llm.Message{{Role: llm.User, Text: "hi"}}, Tools: []llm.ToolDef{llmtest.SampleTool()}, CacheKey: "bench"}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		resp, err := llm.Collect(m.Stream(context.Background(), req), nil)
		if err != nil || len(resp.ToolCalls) != 3 {
			b.Fatalf("Stream: %v, %d calls", err, len(resp.ToolCalls))
		}
	}
}
