package engine_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/quiverhq/quiver/builtin"
	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/intent"
)

// wordEmbedder embeds a text holding word as one axis and anything else
// as another, counting its calls; err, when set, answers every call.
type wordEmbedder struct {
	word string
	err  error

	mu    sync.Mutex
	calls int
}

func (w *wordEmbedder) Model() embed.Model { return embed.Model{Ref: "fake:word-" + w.word, Dims: 2} }

func (w *wordEmbedder) Embed(_ context.Context, texts []string, _ embed.Kind) ([]embed.Vector, error) {
	w.mu.Lock()
	w.calls++
	w.mu.Unlock()
	if w.err != nil {
		return nil, w.err
	}
	out := make([]embed.Vector, len(texts))
	for i, t := range texts {
		out[i] = embed.Vector{1, 0}
		if strings.Contains(t, w.word) {
			out[i] = embed.Vector{0, 1}
		}
	}
	return out, nil
}

func (w *wordEmbedder) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.calls
}

// TestSemanticStage: with the engine's semantic stage and an
// organisation's embedding model, a message the packs leave closed
// opens the family its exemplars are nearest, and the inspector says
// so (source semantic, with the similarity); without the stage (the
// default) the embedder is never called; an organisation without a
// model, or a model that fails, leaves the packs' answer and the turn
// goes on, with a warning.
func TestSemanticStage(t *testing.T) {
	ctx := context.Background()
	packs, err := intent.BuiltinPacks()
	if err != nil {
		t.Fatal(err)
	}
	sem, err := intent.NewSemantic([]intent.Exemplar{
		{Family: intent.Files, Text: "where did my zorblax go"},
		{Text: "hello"}, {Text: "how are you"},
	}, intent.SemanticOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rt := engine.StaticRuntime(engine.Runtime{Catalog: builtin.NewCatalog(builtin.CatalogDeps{}), Network: "public"})
	inspect := func(cfg engine.Config) engine.Inspection {
		t.Helper()
		cfg.Runtime, cfg.Detector = rt, intent.New(packs)
		r := request("ana", "", true)
		r.Message = "is the zorblax still there?"
		r.Deliberate = &intent.Settings{Enabled: true}
		ins, err := engine.New(cfg).Inspect(ctx, r, "")
		if err != nil {
			t.Fatal(err)
		}
		return ins
	}
	opened := func(ins engine.Inspection) bool {
		return slices.ContainsFunc(ins.Matches, func(m intent.Match) bool { return m.Target == intent.Files })
	}

	e := &wordEmbedder{word: "zorblax"}
	if ins := inspect(engine.Config{Embeddings: embed.Fixed{E: e}}); opened(ins) || e.count() != 0 {
		t.Errorf("no stage: files opened %v, %d Embed calls; want neither", opened(ins), e.count())
	}

	ins := inspect(engine.Config{Semantic: sem, Embeddings: embed.Fixed{E: e}})
	want := intent.Match{Target: intent.Files, Trigger: "similarity 1.00", Source: intent.SourceSemantic}
	if !slices.Contains(ins.Matches, want) {
		t.Fatalf("matches %+v, want %+v", ins.Matches, want)
	}
	i := slices.IndexFunc(ins.Declared, func(d intent.Declared) bool { return d.Name == "list_files" })
	if i < 0 || ins.Declared[i].Reason != "opened by: files (similarity 1.00, semantic)" {
		t.Errorf("declared %+v, want list_files opened by the semantic stage", ins.Declared)
	}

	if ins := inspect(engine.Config{Semantic: sem, Embeddings: embed.Fixed{}}); opened(ins) {
		t.Errorf("an organisation without an embedding model: files opened")
	}

	var logs bytes.Buffer
	bad := &wordEmbedder{word: "zorblax", err: errors.New("provider down")}
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	if ins := inspect(engine.Config{Semantic: sem, Embeddings: embed.Fixed{E: bad}, Logger: logger}); opened(ins) || bad.count() == 0 {
		t.Errorf("a failing model: files opened %v, %d calls", opened(ins), bad.count())
	}
	if !strings.Contains(logs.String(), "semantic stage skipped") || !strings.Contains(logs.String(), "provider down") {
		t.Errorf("log %q, want the skipped stage's warning", logs.String())
	}
}
