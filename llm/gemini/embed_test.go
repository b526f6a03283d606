package gemini_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/gemini"
	"github.com/quiverhq/quiver/llm/llmtest"
)

func TestEmbedderAsksForRetrievalEmbeddings(t *testing.T) {
	var seen []llmtest.EmbedSeen
	var fail *llmtest.Failure
	srv := httptest.NewServer(llmtest.GeminiEmbeddings(t, func(s llmtest.EmbedSeen) llmtest.EmbedReply {
		seen = append(seen, s)
		if fail != nil {
			return llmtest.EmbedReply{Fail: fail}
		}
		out := make([][]float32, len(s.Texts))
		for i := range out {
			out[i] = []float32{0, float32(i + 1)}
		}
		return llmtest.EmbedReply{Vectors: out}
	}))
	defer srv.Close()
	e, err := gemini.NewEmbedder(context.Background(), gemini.EmbedConfig{Config: gemini.Config{APIKey: "AIza-secret", BaseURL: srv.URL, Model: "gemini-embedding-001"}, Dims: 2})
	if err != nil {
		t.Fatal(err)
	}
	vs, err := e.Embed(context.Background(), []string{"a note", "another"}, embed.Document)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 2 || vs[1][1] != 1 {
		t.Fatalf("vectors %v", vs)
	}
	if _, err := e.Embed(context.Background(), []string{"what did I note?"}, embed.Query); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seen[0].Task != "RETRIEVAL_DOCUMENT" || seen[1].Task != "RETRIEVAL_QUERY" || seen[0].Dims != 2 || seen[0].Model != "gemini-embedding-001" {
		t.Fatalf("requests %+v", seen)
	}
	if got := seen[0].Header.Get("x-goog-api-key"); got != "AIza-secret" {
		t.Fatalf("key header %q", got)
	}
	fail = &llmtest.Failure{Status: 429, RetryAfter: "5", Kind: llm.ErrRateLimit, Message: "quota"}
	_, err = e.Embed(context.Background(), []string{"x"}, embed.Query)
	if le, ok := llm.AsError(err); !ok || le.Kind != llm.ErrRateLimit || strings.Contains(err.Error(), "AIza-secret") {
		t.Fatalf("rate limit: %v", err)
	}
	if e.Model().Ref != "gemini:gemini-embedding-001" {
		t.Fatalf("ref %q", e.Model().Ref)
	}
}
