package config_test

import (
	"strings"
	"testing"

	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/internal/config"
)

// FuzzParseEmbeddingRef: any value either is refused with an error naming
// it, or gives none (off), the local embedder, or a provider:model with
// no whitespace.
func FuzzParseEmbeddingRef(f *testing.F) {
	for _, s := range []string{"", "off", "local:ngram-512", "openai:text-embedding-3-small", "ollama:nomic-embed-text:v1.5", "x", ":m", "openai: a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		ref, err := config.ParseEmbeddingRef(v)
		if err != nil {
			return
		}
		switch provider, name, ok := strings.Cut(ref, ":"); {
		case ref == "" || ref == embed.LocalRef:
		case !ok || provider == "" || name == "" || strings.ContainsAny(ref, " \t\r\n"):
			t.Errorf("ParseEmbeddingRef(%q) = %q", v, ref)
		}
	})
}
