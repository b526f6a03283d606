package app

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/internal/config"
)

// TestEmbeddings: the runtime's one embed.Source gives the local embedder
// by default, none under embedding_model: off, and an error naming the
// missing key for a remote model nobody connected; the turn's backends
// say "embedding" exactly when there is one.
func TestEmbeddings(t *testing.T) {
	ctx := context.Background()
	env := Env{Now: func() time.Time { return time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC) }, Getenv: func(string) string { return "" }}
	env.defaults()
	for _, c := range []struct {
		name, model string
		want        string // the embedder's model ref; "" none
		wantErr     string
	}{
		{name: "default", want: embed.LocalRef},
		{name: "off", model: "off"},
		{name: "gemini without a key", model: "gemini:gemini-embedding-001", wantErr: "GEMINI_API_KEY"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := config.Config{EmbeddingModel: c.model}
			rt, err := openRuntime(ctx, t.TempDir(), cfg, env)
			if err != nil {
				t.Fatal(err)
			}
			defer rt.close()
			e, err := rt.embeddings.Embedder(ctx, "acme")
			switch {
			case c.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Errorf("Embedder = %v, %v; want an error naming %s", e, err, c.wantErr)
				}
			case err != nil:
				t.Fatal(err)
			case c.want == "" && e != nil:
				t.Errorf("Embedder = %v, want none", e.Model())
			case c.want != "" && (e == nil || e.Model().Ref != c.want):
				t.Errorf("Embedder = %v, want %s", e, c.want)
			}
			run, err := orgRuntimes{orgs: rt.orgs, embeddings: rt.embeddings}.Runtime(ctx, "acme")
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Contains(run.Backends, "embedding"); got != (c.want != "") {
				t.Errorf("backends %v: embedding %v, want %v", run.Backends, got, c.want != "")
			}
		})
	}
}
