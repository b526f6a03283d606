package postgres

import (
	"testing"
	"unicode/utf8"

	"github.com/quiverhq/quiver/internal/pgtest"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/storetest"
)

// TestMemoryRetrieval measures recall@5 and MRR on the labelled set
// (storetest.MemoryRetrieval) with PostgreSQL's full-text rank: hybrid
// retrieval beats full text and the local embedder alone on one measure
// and is worse on neither.
func TestMemoryRetrieval(t *testing.T) {
	r := storetest.MemoryRetrieval(t, openTest(t, pgtest.URL(t)))
	t.Logf("%d queries: full text %v; local embedder %v; hybrid %v", r.Queries, r.FullText, r.Vector, r.Hybrid)
	storetest.WantHybridBetter(t, r)
}

// FuzzSearchMemories: any search text is a bag of words, never tsquery
// syntax: PostgreSQL answers it without an error.
func FuzzSearchMemories(f *testing.F) {
	for _, s := range []string{`a & b`, `'`, `\`, `a:*`, `!x`, `<->`, "\x00", "Hà Nội"} {
		f.Add(s)
	}
	s := openTest(f, pgtest.URL(f))
	f.Fuzz(func(t *testing.T, q string) {
		_, err := s.SearchMemories(t.Context(), store.MemorySearch{OrgID: "fuzz", OwnerID: "u", Text: q})
		if err != nil && utf8.RuneCountInString(q) <= store.MaxMemoryQueryRunes {
			t.Errorf("SearchMemories(%q): %v", q, err)
		}
	})
}

// TestMemoryVectorsFollowAnotherReplica: a replica keeping vectors
// between searches sees what another replica on the same database
// changed.
func TestMemoryVectorsFollowAnotherReplica(t *testing.T) {
	url := pgtest.URL(t)
	storetest.MemoryVectorsFollowChanges(t, openTest(t, url), openTest(t, url))
}
