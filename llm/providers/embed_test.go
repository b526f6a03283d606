package providers_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/llm/llmtest"
	"github.com/quiverhq/quiver/llm/providers"
)

func TestOpenEmbedder(t *testing.T) {
	vectors := func(s llmtest.EmbedSeen) llmtest.EmbedReply {
		out := make([][]float32, len(s.Texts))
		for i := range out {
			out[i] = []float32{1, 2, 3}
		}
		return llmtest.EmbedReply{Vectors: out}
	}
	oa := httptest.NewServer(llmtest.OpenAIEmbeddings(t, vectors))
	defer oa.Close()
	gm := httptest.NewServer(llmtest.GeminiEmbeddings(t, vectors))
	defer gm.Close()
	s := providers.New(providers.Config{Getenv: env{
		"OPENAI_API_KEY": "ok-1", "OPENAI_BASE_URL": oa.URL,
		"GOOGLE_API_KEY": "gk-1", "GEMINI_BASE_URL": gm.URL,
		"OLLAMA_HOST": oa.URL,
	}.get})
	for _, ref := range []string{"openai:text-embedding-3-small", "gemini:gemini-embedding-001", "ollama:nomic-embed-text", embed.LocalRef} {
		e, err := s.OpenEmbedder(context.Background(), ref, 0)
		if err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
		vs, err := e.Embed(context.Background(), []string{"hello", "world"}, embed.Document)
		if err != nil || len(vs) != 2 {
			t.Fatalf("%s: %d vectors, %v", ref, len(vs), err)
		}
		if m := e.Model(); m.Ref != ref || m.Dims != len(vs[0]) {
			t.Errorf("%s: model %v after an answer of %d dimensions", ref, m, len(vs[0]))
		}
	}
	for ref, want := range map[string]string{
		"anthropic:x": "no embeddings API",
		"local:other": "the only local embedder",
		"nomodel":     "want provider:model",
		"vllm:bge-m3": "not configured",
		"openai:":     "want provider:model",
	} {
		_, err := s.OpenEmbedder(context.Background(), ref, 0)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error saying %q", ref, err, want)
		}
	}
	var ce *providers.ConnectError
	if _, err := providers.New(providers.Config{Getenv: env{}.get}).OpenEmbedder(context.Background(), "gemini:g", 0); !errors.As(err, &ce) {
		t.Errorf("gemini without a key: %v, want a ConnectError", err)
	}
}
