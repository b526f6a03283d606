// Package embed turns text into vectors for retrieval: the Embedder that
// providers' adapters implement (llm/openai, llm/gemini), the built-in
// local embedder that needs no network and no weights, batching with
// retries, and the compact form vectors are stored in.
//
// Every vector carries the model that made it (Model: its ref and
// dimension), so an index built by one model is never searched with
// another's vectors: a change of model re-indexes.
package embed

import (
	"context"
	"fmt"
	"unicode/utf8"
)

// Limits on what one Embed call takes. Callers chunk long text first.
const (
	// MaxTexts is how many texts one Embed call takes (OpenAI's limit
	// per request is 2,048 inputs).
	MaxTexts = 2048
	// MaxTextBytes bounds one text, about 8,000 tokens of English.
	MaxTextBytes = 32 << 10
)

// Kind says what a text is for: some models embed a search query
// differently from the documents it searches.
type Kind int

// Kinds of text.
const (
	// Document is text stored to be found (a memory, a chunk).
	Document Kind = iota
	// Query is text searched with.
	Query
)

// Model names an embedding model: its ref ("openai:text-embedding-3-small",
// "local:ngram-512") and the length of its vectors.
type Model struct {
	Ref  string `json:"ref"`
	Dims int    `json:"dims"`
}

// String returns the ref and dimension, "ref/dims".
func (m Model) String() string { return fmt.Sprintf("%s/%d", m.Ref, m.Dims) }

// Embedder embeds text. Implementations are safe for concurrent use.
type Embedder interface {
	// Model is the model's ref and dimension. A remote model whose
	// dimension is not configured reports 0 until an answer shows it.
	Model() Model
	// Embed returns one unit-length vector per text, in order, all of
	// the model's dimension. Texts must pass Check. Errors from a
	// provider are *llm.Error, so Batched can tell which to retry.
	Embed(ctx context.Context, texts []string, kind Kind) ([]Vector, error)
}

// Check validates texts for an Embed call: at least one and at most
// MaxTexts, each non-empty valid UTF-8 of at most MaxTextBytes.
func Check(texts []string) error {
	switch {
	case len(texts) == 0:
		return fmt.Errorf("embed: no text")
	case len(texts) > MaxTexts:
		return fmt.Errorf("embed: %d texts, over the limit of %d per call", len(texts), MaxTexts)
	}
	for i, t := range texts {
		switch {
		case t == "":
			return fmt.Errorf("embed: text %d is empty", i)
		case len(t) > MaxTextBytes:
			return fmt.Errorf("embed: text %d is %d bytes, over the limit of %d", i, len(t), MaxTextBytes)
		case !utf8.ValidString(t):
			return fmt.Errorf("embed: text %d is not valid UTF-8", i)
		}
	}
	return nil
}

// CheckAnswer validates what a provider answered for n texts: n vectors
// of one length (dims when it is not 0), none of them zero. It returns
// the vectors made unit length, and their dimension.
func CheckAnswer(raw [][]float32, n, dims int) ([]Vector, int, error) {
	if len(raw) != n {
		return nil, 0, fmt.Errorf("embed: the provider answered %d vectors for %d texts", len(raw), n)
	}
	out := make([]Vector, n)
	for i, r := range raw {
		if dims == 0 {
			dims = len(r)
		}
		if len(r) != dims || dims == 0 || dims > MaxDims {
			return nil, 0, fmt.Errorf("embed: vector %d has %d dimensions, want %d", i, len(r), dims)
		}
		v, ok := Unit(r)
		if !ok {
			return nil, 0, fmt.Errorf("embed: vector %d is zero or not finite", i)
		}
		out[i] = v
	}
	return out, dims, nil
}

// Source gives an organisation the embedding model its settings (or the
// deployment's configuration) name. A nil Embedder with a nil error means
// none is configured: the tools that need one are not declared, and
// whatever indexes text keeps it searchable by full text only.
// Implementations are safe for concurrent use.
type Source interface {
	Embedder(ctx context.Context, orgID string) (Embedder, error)
}

// Fixed is a Source giving every organisation E (nil: none).
type Fixed struct{ E Embedder }

// Embedder implements Source.
func (f Fixed) Embedder(context.Context, string) (Embedder, error) { return f.E, nil }
