package gemini

import (
	"context"
	"errors"

	"google.golang.org/genai"

	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/llm"
)

// EmbedConfig configures an Embedder: Config's connection fields (APIKey,
// BaseURL, HTTPClient) and the model's name ("gemini-embedding-001");
// Caps and Tools are not used.
type EmbedConfig struct {
	Config
	// Dims asks for vectors of this length (Gemini truncates its own);
	// 0 takes the model's.
	Dims int
}

// Embedder embeds text through Gemini's batchEmbedContents, on the
// official SDK, asking for retrieval embeddings of documents or of
// queries by the texts' kind. It never retries (embed.Batched does). It
// is safe for concurrent use.
type Embedder struct {
	m    *Model // for its client and its error classification
	dims int
}

var _ embed.Embedder = (*Embedder)(nil)

// NewEmbedder returns an Embedder for cfg. It makes no request.
func NewEmbedder(ctx context.Context, cfg EmbedConfig) (*Embedder, error) {
	if cfg.Dims < 0 || cfg.Dims > embed.MaxDims {
		return nil, errors.New("gemini: embedding dimensions out of range")
	}
	m, err := New(ctx, cfg.Config)
	if err != nil {
		return nil, err
	}
	return &Embedder{m: m, dims: cfg.Dims}, nil
}

// Model returns "gemini:" and the model name, and the configured
// dimension (0 when the model's own is taken and not yet seen).
func (e *Embedder) Model() embed.Model { return embed.Model{Ref: e.m.Ref(), Dims: e.dims} }

// Embed sends texts in one request.
func (e *Embedder) Embed(ctx context.Context, texts []string, kind embed.Kind) ([]embed.Vector, error) {
	if err := embed.Check(texts); err != nil {
		return nil, err
	}
	contents := make([]*genai.Content, len(texts))
	for i, t := range texts {
		contents[i] = genai.NewContentFromText(t, genai.RoleUser)
	}
	config := &genai.EmbedContentConfig{TaskType: "RETRIEVAL_DOCUMENT"}
	if kind == embed.Query {
		config.TaskType = "RETRIEVAL_QUERY"
	}
	if e.dims > 0 {
		config.OutputDimensionality = genai.Ptr(int32(e.dims))
	}
	res, err := e.m.client.Models.EmbedContent(ctx, e.m.model, contents, config)
	if err != nil {
		return nil, e.m.streamError(ctx, err)
	}
	raw := make([][]float32, len(res.Embeddings))
	for i, emb := range res.Embeddings {
		if emb == nil {
			return nil, &llm.Error{Kind: llm.ErrServer, Msg: "embeddings answer with an empty entry"}
		}
		raw[i] = emb.Values
	}
	vs, _, err := embed.CheckAnswer(raw, len(texts), e.dims)
	if err != nil {
		return nil, &llm.Error{Kind: llm.ErrServer, Msg: err.Error()}
	}
	return vs, nil
}
