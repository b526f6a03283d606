package retrieve_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/retrieve"
)

func ids(hits []retrieve.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

func TestFuse(t *testing.T) {
	text := []string{"a", "b", "c", "a"}
	vec := []string{"c", "d", "b"}
	got := ids(retrieve.Fuse(0, text, vec))
	// c: 1/63+1/61, b: 1/62+1/63, a: 1/61, d: 1/62.
	if want := []string{"c", "b", "a", "d"}; !slices.Equal(got, want) {
		t.Fatalf("Fuse = %v, want %v", got, want)
	}
	if got := ids(retrieve.Fuse(2, text, vec)); !slices.Equal(got, []string{"c", "b"}) {
		t.Fatalf("Fuse with limit 2 = %v", got)
	}
	if got := ids(retrieve.Fuse(0, []string{"x", "y"}, []string{"y", "x"})); !slices.Equal(got, []string{"x", "y"}) {
		t.Fatalf("a tie keeps first-seen order: %v", got)
	}
	if got := retrieve.Fuse(5); len(got) != 0 {
		t.Fatalf("no ranking gave %v", got)
	}
}

// TestNearestMatchesASort: the heap's answer is the first k of all
// candidates sorted by score, and vectors of another dimension or a bad
// stored form are skipped.
func TestNearestMatchesASort(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	unit := func(d int) embed.Vector {
		raw := make([]float32, d)
		for i := range raw {
			raw[i] = float32(r.NormFloat64())
		}
		v, _ := embed.Unit(raw)
		return v
	}
	q := unit(64)
	var cands []retrieve.Candidate
	for i := range 500 {
		cands = append(cands, retrieve.Candidate{ID: fmt.Sprint(i), Vector: embed.Pack(unit(64))})
	}
	cands = append(cands,
		retrieve.Candidate{ID: "other-model", Vector: embed.Pack(unit(32))},
		retrieve.Candidate{ID: "corrupt", Vector: embed.Packed{9, 9, 9, 9, 9, 9}},
		retrieve.Candidate{ID: "exact", Vector: embed.Pack(q)},
	)
	got := retrieve.Nearest(q, cands, 10)
	all := retrieve.Nearest(q, cands, len(cands))
	if len(all) != 501 {
		t.Fatalf("%d candidates compared, want the 501 of q's dimension", len(all))
	}
	if !sort.SliceIsSorted(all, func(i, j int) bool { return all[i].Score > all[j].Score }) {
		t.Fatal("not best first")
	}
	if !slices.Equal(ids(got), ids(all[:10])) || got[0].ID != "exact" {
		t.Fatalf("top 10 %v, want %v starting with exact", ids(got), ids(all[:10]))
	}
	if retrieve.Nearest(q, cands, 0) != nil {
		t.Fatal("k 0 answered")
	}
}

func BenchmarkNearest10000(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	unit := func() embed.Vector {
		raw := make([]float32, 512)
		for i := range raw {
			raw[i] = float32(r.NormFloat64())
		}
		v, _ := embed.Unit(raw)
		return v
	}
	cands := make([]retrieve.Candidate, 10000)
	for i := range cands {
		cands[i] = retrieve.Candidate{ID: fmt.Sprint(i), Vector: embed.Pack(unit())}
	}
	q := unit()
	for b.Loop() {
		retrieve.Nearest(q, cands, 5)
	}
}
