package openai_test

import (
	"context"
	"math"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
	"github.com/quiverhq/quiver/llm/openai"
)

func TestEmbedderSendsTextsAndReadsVectorsInOrder(t *testing.T) {
	var seen llmtest.EmbedSeen
	srv := httptest.NewServer(llmtest.OpenAIEmbeddings(t, func(s llmtest.EmbedSeen) llmtest.EmbedReply {
		seen = s
		out := make([][]float32, len(s.Texts))
		for i := range s.Texts {
			out[i] = []float32{float32(i + 1), 0, 0, 3}
		}
		return llmtest.EmbedReply{Vectors: out}
	}))
	defer srv.Close()
	e, err := openai.NewEmbedder(openai.EmbedConfig{Config: openai.Config{APIKey: "sk-secret-123", BaseURL: srv.URL + "/v1", Model: "text-embedding-3-small"}, Dims: 4})
	if err != nil {
		t.Fatal(err)
	}
	vs, err := e.Embed(context.Background(), []string{"one", "two", "three"}, embed.Document)
	if err != nil {
		t.Fatal(err)
	}
	if seen.Model != "text-embedding-3-small" || strings.Join(seen.Texts, ",") != "one,two,three" || seen.Dims != 4 {
		t.Fatalf("request %+v", seen)
	}
	if got := seen.Header.Get("Authorization"); got != "Bearer sk-secret-123" {
		t.Fatalf("Authorization %q", got)
	}
	for i, v := range vs {
		want := float32(i+1) / float32(math.Sqrt(float64((i+1)*(i+1)+9)))
		if len(v) != 4 || math.Abs(float64(v[0]-want)) > 1e-6 {
			t.Fatalf("vector %d = %v, want unit length in order", i, v)
		}
	}
	if m := e.Model(); m.Ref != "openai:text-embedding-3-small" || m.Dims != 4 {
		t.Fatalf("model %v", m)
	}
}

func TestEmbedderErrors(t *testing.T) {
	var reply llmtest.EmbedReply
	srv := httptest.NewServer(llmtest.OpenAIEmbeddings(t, func(llmtest.EmbedSeen) llmtest.EmbedReply { return reply }))
	defer srv.Close()
	e, err := openai.NewEmbedder(openai.EmbedConfig{Config: openai.Config{APIKey: "sk-secret-123", BaseURL: srv.URL, Model: "nomic-embed-text", Provider: "ollama"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		reply llmtest.EmbedReply
		kind  llm.ErrorKind
	}{
		{"rate limited", llmtest.EmbedReply{Fail: &llmtest.Failure{Status: 429, RetryAfter: "7", Kind: llm.ErrRateLimit, Message: "slow down sk-secret-123"}}, llm.ErrRateLimit},
		{"bad key", llmtest.EmbedReply{Fail: &llmtest.Failure{Status: 401, Kind: llm.ErrAuth, Message: "bad key"}}, llm.ErrAuth},
		{"too few vectors", llmtest.EmbedReply{Vectors: [][]float32{{1}}}, llm.ErrServer},
		{"zero vector", llmtest.EmbedReply{Vectors: [][]float32{{0, 0}, {1, 0}}}, llm.ErrServer},
		{"two lengths", llmtest.EmbedReply{Vectors: [][]float32{{1, 0}, {1}}}, llm.ErrServer},
	} {
		t.Run(c.name, func(t *testing.T) {
			reply = c.reply
			_, err := e.Embed(context.Background(), []string{"a", "b"}, embed.Query)
			le, ok := llm.AsError(err)
			if !ok || le.Kind != c.kind {
				t.Fatalf("error %v, want kind %s", err, c.kind)
			}
			if strings.Contains(err.Error(), "sk-secret-123") {
				t.Fatalf("the key in %q", err)
			}
			if c.kind == llm.ErrRateLimit && le.RetryAfter.Seconds() != 7 {
				t.Fatalf("Retry-After %v", le.RetryAfter)
			}
		})
	}
	if _, err := e.Embed(context.Background(), []string{""}, embed.Query); err == nil {
		t.Fatal("an empty text was sent")
	}
	if e.Model().Ref != "ollama:nomic-embed-text" {
		t.Fatalf("ref %q", e.Model().Ref)
	}
}
