package storetest

import (
	_ "embed" // the labelled set
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/retrieve"
	"github.com/quiverhq/quiver/store"
)

// retrievalSet is the labelled set MemoryRetrieval measures: memories in
// English, Vietnamese and five other languages, and queries, mostly
// paraphrases, each with the memories that answer it.
//
//go:embed testdata/memory_retrieval.json
var retrievalSet []byte

// RetrievalDepth is how many memories each search contributes to the
// fusion, and the depth MRR looks to.
const RetrievalDepth = 20

// RetrievalScores are one method's recall@5 and mean reciprocal rank over
// the labelled set's queries.
type RetrievalScores struct {
	Recall5 float64
	MRR     float64
}

func (s RetrievalScores) String() string {
	return fmt.Sprintf("recall@5 %.3f, MRR %.3f", s.Recall5, s.MRR)
}

// RetrievalReport is what MemoryRetrieval measures: full-text search
// alone (SearchMemories), the local embedder alone (MemoryVectors and
// retrieve.Nearest) and the two fused by reciprocal rank (retrieve.Fuse
// of the top RetrievalDepth of each, the vector ranking first so that it
// wins ties).
type RetrievalReport struct {
	Queries                  int
	FullText, Vector, Hybrid RetrievalScores
}

// MemoryRetrieval stores the labelled set in an organisation of its own
// (every other memory shared, the rest a person's, who searches), with
// embed.Local vectors, and measures each query's ranking by full text, by
// vector and by both fused.
func MemoryRetrieval(t *testing.T, s store.Memories) RetrievalReport {
	t.Helper()
	var set struct {
		Memories []struct{ ID, Text string }
		Queries  []struct {
			Text     string
			Relevant []string
		}
	}
	if err := json.Unmarshal(retrievalSet, &set); err != nil {
		t.Fatalf("the labelled set: %v", err)
	}
	ctx := t.Context()
	f := &fixture{prefix: newRunID(t) + "-retrieval"}
	org, owner := f.id("org"), f.id("ana")
	local := embed.Local{}
	for i, m := range set.Memories {
		mem := store.Memory{OrgID: org, ID: m.ID, OwnerID: owner, Text: m.Text, Model: local.Model().String(),
			Vector: localVector(t, m.Text), CreatedAt: time.Unix(1_700_000_000+int64(i), 0)}
		if i%2 == 1 {
			mem.OwnerID = ""
		}
		if _, err := s.PutMemory(ctx, mem, 0); err != nil {
			t.Fatal(err)
		}
	}
	cands, err := s.MemoryVectors(ctx, org, owner, local.Model().String())
	if err != nil || len(cands) != len(set.Memories) {
		t.Fatalf("MemoryVectors: %d, %v", len(cands), err)
	}
	var sum [3]RetrievalScores
	for _, q := range set.Queries {
		hits, err := s.SearchMemories(ctx, store.MemorySearch{OrgID: org, OwnerID: owner, Text: q.Text, Limit: RetrievalDepth})
		if err != nil {
			t.Fatal(err)
		}
		var text []string
		for _, h := range hits {
			text = append(text, h.ID)
		}
		qv, err := local.Embed(ctx, []string{q.Text}, embed.Query)
		if err != nil {
			t.Fatal(err)
		}
		var vector []string
		for _, h := range retrieve.Nearest(qv[0], cands, RetrievalDepth) {
			vector = append(vector, h.ID)
		}
		// The vector ranking first: an item each ranks alike (the vector
		// search's second, full text's second) goes to the vector
		// search's, the better of the two on this set alone.
		var hybrid []string
		for _, h := range retrieve.Fuse(RetrievalDepth, vector, text) {
			hybrid = append(hybrid, h.ID)
		}
		for i, ranking := range [][]string{text, vector, hybrid} {
			r, rr := score(ranking, q.Relevant)
			sum[i].Recall5 += r
			sum[i].MRR += rr
		}
	}
	n := float64(len(set.Queries))
	for i := range sum {
		sum[i].Recall5 /= n
		sum[i].MRR /= n
	}
	return RetrievalReport{Queries: len(set.Queries), FullText: sum[0], Vector: sum[1], Hybrid: sum[2]}
}

// score is a ranking's recall@5 (the share of the relevant items in its
// first five) and reciprocal rank (of its first relevant item; 0 for
// none).
func score(ranking, relevant []string) (recall5, rr float64) {
	rel := map[string]bool{}
	for _, id := range relevant {
		rel[id] = true
	}
	found := 0
	for i, id := range ranking {
		if !rel[id] {
			continue
		}
		if i < 5 {
			found++
		}
		if rr == 0 {
			rr = 1 / float64(i+1)
		}
	}
	return float64(found) / float64(len(relevant)), rr
}

// WantHybridBetter fails unless r's hybrid scores beat each single
// method on recall@5 or MRR and are worse than neither on the other.
func WantHybridBetter(t *testing.T, r RetrievalReport) {
	t.Helper()
	h := r.Hybrid
	for name, o := range map[string]RetrievalScores{"full text": r.FullText, "the local embedder": r.Vector} {
		better := h.Recall5 > o.Recall5 || h.MRR > o.MRR
		worse := h.Recall5 < o.Recall5 || h.MRR < o.MRR
		if !better || worse {
			t.Errorf("hybrid (%v) does not beat %s (%v)", h, name, o)
		}
	}
}
