package openai

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"slices"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/llm"
)

// EmbedConfig configures an Embedder: Config's connection fields (APIKey,
// BaseURL, HTTPClient, Provider) and the model's name; Caps and Tools are
// not used.
type EmbedConfig struct {
	Config
	// Dims asks the model for vectors of this length (OpenAI's
	// text-embedding-3 models shorten theirs); 0 takes the model's own
	// and leaves the dimensions parameter out, which every server that
	// copies the endpoint accepts.
	Dims int
}

// Embedder embeds text through POST /embeddings: OpenAI's, and the same
// endpoint of Ollama, vLLM, llama.cpp's server and LM Studio. It is safe
// for concurrent use. Like Model, it never retries (embed.Batched does).
type Embedder struct {
	m    *Model // for its connection and its error classification
	emb  sdk.EmbeddingService
	dims int
}

var _ embed.Embedder = (*Embedder)(nil)

// NewEmbedder returns an Embedder for cfg. It fails as New does, and on a
// negative Dims; it sends nothing.
func NewEmbedder(cfg EmbedConfig) (*Embedder, error) {
	if cfg.Dims < 0 || cfg.Dims > embed.MaxDims {
		return nil, errors.New("openai: embedding dimensions out of range")
	}
	m, err := New(cfg.Config)
	if err != nil {
		return nil, err
	}
	opts := []option.RequestOption{
		option.WithBaseURL(m.cfg.BaseURL),
		option.WithHTTPClient(m.cfg.HTTPClient),
		option.WithMaxRetries(0),
	}
	if m.cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(m.cfg.APIKey))
	}
	return &Embedder{m: m, emb: sdk.NewEmbeddingService(opts...), dims: cfg.Dims}, nil
}

// Model returns "provider:model" and the configured dimension (0 when
// the model's own is taken and not yet seen).
func (e *Embedder) Model() embed.Model { return embed.Model{Ref: e.m.Ref(), Dims: e.dims} }

// Embed sends texts in one request. The kind is not sent: the endpoint
// has no such parameter.
func (e *Embedder) Embed(ctx context.Context, texts []string, _ embed.Kind) ([]embed.Vector, error) {
	if err := embed.Check(texts); err != nil {
		return nil, err
	}
	params := sdk.EmbeddingNewParams{
		Input:          sdk.EmbeddingNewParamsInputUnion{OfArrayOfStrings: texts},
		Model:          e.m.cfg.Model,
		EncodingFormat: sdk.EmbeddingNewParamsEncodingFormatFloat,
	}
	if e.dims > 0 {
		params.Dimensions = sdk.Int(int64(e.dims))
	}
	var res *http.Response
	out, err := e.emb.New(ctx, params, option.WithResponseInto(&res))
	if err != nil {
		return nil, e.m.classify(ctx, err, res)
	}
	data := slices.Clone(out.Data)
	slices.SortFunc(data, func(a, b sdk.Embedding) int { return cmp.Compare(a.Index, b.Index) })
	raw := make([][]float32, len(data))
	for i, d := range data {
		if d.Index != int64(i) {
			return nil, &llm.Error{Kind: llm.ErrServer, Msg: "embeddings answer with missing or repeated indexes"}
		}
		raw[i] = make([]float32, len(d.Embedding))
		for j, x := range d.Embedding {
			raw[i][j] = float32(x)
		}
	}
	vs, _, err := embed.CheckAnswer(raw, len(texts), e.dims)
	if err != nil {
		return nil, &llm.Error{Kind: llm.ErrServer, Msg: err.Error()}
	}
	return vs, nil
}
