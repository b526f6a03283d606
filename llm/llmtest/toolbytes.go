package llmtest

import (
	"bytes"
	"context"
	"testing"

	"github.com/quiverhq/quiver/llm"
)

// NewCachedModelFunc opens an adapter's model for a fake server's base
// URL, with the adapter's tool cache when cached is true (a new cache
// per call) and without one when false.
type NewCachedModelFunc func(t *testing.T, baseURL string, cached bool) llm.Model

// SameBytesWithToolCache sends req three times through a model with a
// tool cache (the first call builds the declarations, the others reuse
// them) and once through a model without one, and fails unless every
// request body the fake received is byte for byte the uncached one: an
// adapter's tool cache must not change what is sent.
func SameBytesWithToolCache(t *testing.T, fake Fake, newModel NewCachedModelFunc, req llm.Request) {
	t.Helper()
	replies := make([]Reply, 4)
	for i := range replies {
		replies[i] = Reply{Text: []string{"ok"}}
	}
	srv := Start(t, fake, replies...)
	plain, cached := newModel(t, srv.URL, false), newModel(t, srv.URL, true)
	for _, m := range []llm.Model{plain, cached, cached, cached} {
		if _, err := llm.Collect(m.Stream(context.Background(), req), nil); err != nil {
			t.Fatalf("Stream: %v", err)
		}
	}
	seen := srv.Seen()
	if len(seen) != 4 {
		t.Fatalf("%d requests, want 4", len(seen))
	}
	for i, s := range seen[1:] {
		if !bytes.Equal(s.Raw, seen[0].Raw) {
			t.Errorf("request %d with the tool cache differs from the one without:\nwithout: %s\nwith:    %s", i+1, seen[0].Raw, s.Raw)
		}
	}
}

// SameChecksWithToolCache fails unless a model with a tool cache answers
// CheckTool for each of defs (twice: once checked, once kept) as the
// model without one does.
func SameChecksWithToolCache(t *testing.T, newModel NewCachedModelFunc, defs []llm.ToolDef) {
	t.Helper()
	plain, cached := newModel(t, "http://127.0.0.1:1", false), newModel(t, "http://127.0.0.1:1", true)
	for range 2 {
		for _, d := range defs {
			want, got := plain.CheckTool(d), cached.CheckTool(d)
			if (want == nil) != (got == nil) || (want != nil && want.Error() != got.Error()) {
				t.Errorf("CheckTool(%s): %v with the tool cache, %v without", d.Name, got, want)
			}
		}
	}
}
