package sqlite

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/storetest"
)

// TestMemoryRetrieval measures recall@5 and MRR on the labelled set
// (storetest.MemoryRetrieval): hybrid retrieval beats full text and the
// local embedder alone on one measure and is worse on neither.
func TestMemoryRetrieval(t *testing.T) {
	r := storetest.MemoryRetrieval(t, openTest(t, t.TempDir()))
	t.Logf("%d queries: full text %v; local embedder %v; hybrid %v", r.Queries, r.FullText, r.Vector, r.Hybrid)
	storetest.WantHybridBetter(t, r)
}

// FuzzSearchMemories: any search text is a bag of words, never FTS5
// syntax: SQLite answers it without an error.
func FuzzSearchMemories(f *testing.F) {
	for _, s := range []string{`"`, `a*`, `NEAR(a b)`, `a OR`, `terms:x`, `^a`, "\x00", "Hà Nội"} {
		f.Add(s)
	}
	s := openTest(f, f.TempDir())
	m := store.Memory{OrgID: "fuzz", ID: "m", OwnerID: "u", Text: `a "quoted" NEAR b*`, CreatedAt: time.Unix(1, 0),
		Model: "test/3", Vector: embed.Pack(embed.Vector{1, 0, 0})}
	if _, err := s.PutMemory(f.Context(), m, 0); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, q string) {
		_, err := s.SearchMemories(t.Context(), store.MemorySearch{OrgID: "fuzz", OwnerID: "u", Text: q})
		if err != nil && utf8.RuneCountInString(q) <= store.MaxMemoryQueryRunes {
			t.Errorf("SearchMemories(%q): %v", q, err)
		}
	})
}

// TestCheckEmptySeesMemoriesNotTheirIndex: a new store is empty though
// FTS5 keeps rows of its own (its config), and a memory makes it not
// empty by the memories table, not by the derived index.
func TestCheckEmptySeesMemoriesNotTheirIndex(t *testing.T) {
	s := openTest(t, t.TempDir())
	if err := s.CheckEmpty(t.Context()); err != nil {
		t.Fatalf("a new store: %v", err)
	}
	m := store.Memory{OrgID: "o", ID: "m", OwnerID: "u", Text: "a fact", CreatedAt: time.Unix(1, 0),
		Model: "test/3", Vector: embed.Pack(embed.Vector{1, 0, 0})}
	if _, err := s.PutMemory(t.Context(), m, 0); err != nil {
		t.Fatal(err)
	}
	err := s.CheckEmpty(t.Context())
	if !errors.Is(err, store.ErrNotEmpty) || !strings.Contains(err.Error(), "memories, memory_generations, memory_search_rows hold rows") {
		t.Errorf("CheckEmpty with a memory: %v", err)
	}
}

// TestMemoryVectorsFollowAnotherProcess: a store keeping vectors between
// searches sees what another store on the same database (another process:
// the CLI beside quiver serve) changed.
func TestMemoryVectorsFollowAnotherProcess(t *testing.T) {
	dir := t.TempDir()
	storetest.MemoryVectorsFollowChanges(t, openTest(t, dir), openTest(t, dir))
}
