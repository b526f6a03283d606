package providers

import (
	"context"
	"fmt"
	"strings"

	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/llm/gemini"
	"github.com/quiverhq/quiver/llm/openai"
)

// OpenEmbedder returns the embedding model ref names ("provider:model",
// as an agent's model is named), batched with retries (embed.Batched),
// sending nothing. "local:ngram-512" (embed.LocalRef) is the built-in
// local embedder, which needs no provider. Gemini's models use Gemini's
// embeddings API; Anthropic has none, so naming it is an error; every
// other provider (OpenAI, Ollama under /v1, vLLM, llama.cpp, LM Studio)
// uses the OpenAI-compatible /embeddings. dims asks for shortened
// vectors where the model supports it; 0 takes the model's own. Errors a
// person fixes by connecting a provider are *ConnectError.
func (s *Set) OpenEmbedder(ctx context.Context, ref string, dims int) (embed.Embedder, error) {
	if ref == embed.LocalRef {
		return embed.Local{}, nil
	}
	provider, name, ok := strings.Cut(ref, ":")
	if !ok || provider == "" || name == "" {
		return nil, fmt.Errorf("embedding model %q: want provider:model, or %s", ref, embed.LocalRef)
	}
	c := s.Connection(provider)
	var (
		e   embed.Embedder
		err error
	)
	switch provider {
	case "local":
		return nil, fmt.Errorf("embedding model %q: the only local embedder is %s", ref, embed.LocalRef)
	case "anthropic":
		return nil, fmt.Errorf("embedding model %q: Anthropic has no embeddings API; use an OpenAI-compatible, Gemini or Ollama model, or %s", ref, embed.LocalRef)
	case "gemini":
		if c.Key == "" {
			return nil, &ConnectError{Msg: ref + " needs GEMINI_API_KEY; or use " + embed.LocalRef}
		}
		e, err = gemini.NewEmbedder(ctx, gemini.EmbedConfig{Config: gemini.Config{APIKey: c.Key, BaseURL: c.BaseURL, Model: name, HTTPClient: s.cfg.HTTPClient}, Dims: dims})
	case ollama:
		e, err = openai.NewEmbedder(openai.EmbedConfig{Config: openai.Config{Provider: ollama, BaseURL: strings.TrimSuffix(c.BaseURL, "/") + "/v1", Model: name, HTTPClient: s.cfg.HTTPClient}, Dims: dims})
	default:
		if c.Key == "" && c.BaseURL == "" {
			return nil, &ConnectError{Msg: fmt.Sprintf("%s: provider %q is not configured; or use %s", ref, provider, embed.LocalRef)}
		}
		e, err = openai.NewEmbedder(openai.EmbedConfig{Config: openai.Config{Provider: provider, APIKey: c.Key, BaseURL: c.BaseURL, Model: name, HTTPClient: s.cfg.HTTPClient}, Dims: dims})
	}
	if err != nil {
		return nil, fmt.Errorf("embedding model %q: %w", ref, err)
	}
	return embed.Batched(e, embed.BatchConfig{}), nil
}
