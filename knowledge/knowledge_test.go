package knowledge_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/knowledge"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
)

func open(t testing.TB) store.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func newIndex(t testing.TB, e embed.Embedder) *knowledge.Index {
	n := 0
	return &knowledge.Index{Store: open(t), Embedders: embed.Fixed{E: e}, Batch: 2,
		NewID: func(p string) string { n++; return fmt.Sprintf("%s%d", p, n) }}
}

func TestOneBadFileLeavesTheRestIndexed(t *testing.T) {
	ctx := t.Context()
	x := newIndex(t, embed.Local{})
	files := []knowledge.File{
		{Name: "a.md", MediaType: "text/markdown", Data: []byte("# Holidays\n\nThe office closes on the first of May.")},
		{Name: "blob.bin", MediaType: "application/octet-stream", Data: []byte{0, 1, 2, 3, 0xff, 0, 7}},
		{Name: "b.txt", MediaType: "text/plain", Data: []byte(strings.Repeat("Expense reports are due on Fridays. ", 200))},
	}
	var seen []store.KnowledgeDocument
	for _, f := range files {
		d, err := x.Add(ctx, "o1", "helper", f, func(d store.KnowledgeDocument) { seen = append(seen, d) })
		if err != nil {
			t.Fatalf("Add(%s): %v", f.Name, err)
		}
		switch {
		case f.Name == "blob.bin" && (d.Status != store.KnowledgeFailed || !strings.Contains(d.Reason, "binary")):
			t.Errorf("blob.bin = %s %q, want failed saying binary", d.Status, d.Reason)
		case f.Name != "blob.bin" && d.Status != store.KnowledgeReady:
			t.Errorf("%s = %s %q, want ready", f.Name, d.Status, d.Reason)
		}
	}
	progressed := false
	for _, d := range seen {
		if d.Status == store.KnowledgeIndexing && d.Total > 1 && d.Chunks > 0 && d.Chunks < d.Total {
			progressed = true
		}
	}
	if !progressed {
		t.Errorf("no progress between batches was reported: %+v", seen)
	}
	hits, err := x.Search(ctx, "o1", "helper", "when does the office close", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || hits[0].Name != "a.md" {
		t.Errorf("search = %+v, want a.md first", hits)
	}
	if hits, _ := x.Search(ctx, "o2", "helper", "office", 0); len(hits) != 0 {
		t.Errorf("another organisation found %+v", hits)
	}
	if hits, _ := x.Search(ctx, "o1", "sales", "office", 0); len(hits) != 0 {
		t.Errorf("another agent found %+v", hits)
	}
}

func TestTooLargeIsRefusedBeforeWriting(t *testing.T) {
	x := newIndex(t, embed.Local{})
	_, err := x.Add(t.Context(), "o1", "helper", knowledge.File{Name: "big.txt", MediaType: "text/plain",
		Data: make([]byte, store.MaxKnowledgeFileBytes+1)}, nil)
	if !errors.Is(err, store.ErrKnowledgeQuota) {
		t.Fatalf("err = %v, want ErrKnowledgeQuota", err)
	}
	if ds, _ := x.Store.ListKnowledgeDocuments(t.Context(), "o1", "helper"); len(ds) != 0 {
		t.Errorf("stored %d documents", len(ds))
	}
}

// otherModel is the local embedder under another name: vectors of the
// same dimension that the store must not mix with the local model's.
type otherModel struct{ embed.Local }

func (otherModel) Model() embed.Model {
	return embed.Model{Ref: "other:model", Dims: embed.Local{}.Model().Dims}
}

func TestChangingTheModelReindexes(t *testing.T) {
	ctx := t.Context()
	x := newIndex(t, embed.Local{})
	if _, err := x.Add(ctx, "o1", "helper", knowledge.File{Name: "a.txt", MediaType: "text/plain", Data: []byte("Penguins live in Antarctica.")}, nil); err != nil {
		t.Fatal(err)
	}
	x.Embedders = embed.Fixed{E: otherModel{}}
	if vs, _ := x.Store.KnowledgeVectors(ctx, "o1", "helper", otherModel{}.Model().String()); len(vs) != 0 {
		t.Fatalf("vectors of the new model before a re-index: %d", len(vs))
	}
	n, err := x.Reindex(ctx, "o1", "helper")
	if err != nil || n != 1 {
		t.Fatalf("Reindex = %d, %v; want 1", n, err)
	}
	if vs, _ := x.Store.KnowledgeVectors(ctx, "o1", "helper", otherModel{}.Model().String()); len(vs) != 1 {
		t.Errorf("vectors of the new model after a re-index: %d", len(vs))
	}
	if vs, _ := x.Store.KnowledgeVectors(ctx, "o1", "helper", embed.Local{}.Model().String()); len(vs) != 0 {
		t.Errorf("vectors of the old model remain: %d", len(vs))
	}
	x.Embedders = nil
	if _, err := x.Reindex(ctx, "o1", "helper"); err == nil {
		t.Error("a re-index without a model did not fail")
	}
}
