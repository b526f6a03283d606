package config

import (
	"fmt"
	"strings"

	"github.com/quiverhq/quiver/embed"
)

// EmbeddingOff is the embedding_model value that configures none.
const EmbeddingOff = "off"

// EmbeddingRef is the embedding model the configuration names: its
// embedding_model, embed.LocalRef when that is empty, and "" when it is
// "off" (none).
func (c Config) EmbeddingRef() string {
	ref, _ := ParseEmbeddingRef(c.EmbeddingModel)
	return ref
}

// ParseEmbeddingRef validates an embedding_model value and returns the
// model it names: "" (the default) is embed.LocalRef, "off" is none
// (""), anything else must be "provider:model" with a provider name as
// providers: takes.
func ParseEmbeddingRef(v string) (string, error) {
	switch v = strings.TrimSpace(v); v {
	case "":
		return embed.LocalRef, nil
	case EmbeddingOff:
		return "", nil
	}
	provider, name, ok := strings.Cut(v, ":")
	if !ok || name == "" || !providerName.MatchString(provider) || strings.ContainsAny(name, " \t\r\n") {
		return "", fmt.Errorf("%q: use provider:model (such as openai:text-embedding-3-small), %s, or %s", v, embed.LocalRef, EmbeddingOff)
	}
	return v, nil
}
