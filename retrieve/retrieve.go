// Package retrieve ranks stored items for a query: the nearest vectors
// to the query's (brute force over the packed form), and the fusion of
// that ranking with full-text search's by reciprocal rank, so that an
// item either search finds well ranks high and one both find ranks
// higher.
package retrieve

import (
	"cmp"
	"container/heap"
	"slices"

	"github.com/quiverhq/quiver/embed"
)

// RRFK is reciprocal rank fusion's constant: an item at rank r (from 1)
// of a list scores 1/(RRFK+r). 60 is the value of Cormack, Clarke and
// Büttcher's paper, which later work keeps; it damps the difference
// between the first few ranks of one list.
const RRFK = 60

// Hit is an item of a ranking, with its score (higher is better).
type Hit struct {
	ID    string
	Score float64
}

// Fuse merges rankings (each a list of item IDs, best first; an ID
// repeated within a list counts at its first rank) by reciprocal rank
// fusion, and returns at most limit hits, best first; ties keep the
// order in which the IDs were first seen. limit <= 0 returns every hit.
func Fuse(limit int, rankings ...[]string) []Hit {
	score := map[string]float64{}
	var order []string
	for _, ids := range rankings {
		seen := map[string]bool{}
		rank := 0
		for _, id := range ids {
			if seen[id] {
				continue
			}
			seen[id] = true
			rank++
			if _, ok := score[id]; !ok {
				order = append(order, id)
			}
			score[id] += 1 / float64(RRFK+rank)
		}
	}
	hits := make([]Hit, len(order))
	for i, id := range order {
		hits[i] = Hit{ID: id, Score: score[id]}
	}
	slices.SortStableFunc(hits, func(a, b Hit) int { return cmp.Compare(b.Score, a.Score) })
	if limit > 0 && len(hits) > limit {
		hits = hits[:limit]
	}
	return hits
}

// Candidate is a stored item with its vector.
type Candidate struct {
	ID     string
	Vector embed.Packed
}

// Nearest returns the k candidates nearest q by cosine, best first (ties
// in the candidates' order), skipping candidates whose vector is not of
// q's dimension or does not pass Check: a vector of another model is
// never compared. It keeps k items at a time, whatever the number of
// candidates.
func Nearest(q embed.Vector, candidates []Candidate, k int) []Hit {
	if k <= 0 {
		return nil
	}
	h := &minHeap{}
	for i, c := range candidates {
		if c.Vector.Dims() != len(q) || c.Vector.Check() != nil {
			continue
		}
		e := entry{hit: Hit{ID: c.ID, Score: float64(c.Vector.Cosine(q))}, pos: i}
		switch {
		case h.Len() < k:
			heap.Push(h, e)
		case better(e, (*h)[0]):
			(*h)[0] = e
			heap.Fix(h, 0)
		}
	}
	out := make([]Hit, h.Len())
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = heap.Pop(h).(entry).hit
	}
	return out
}

// entry is a hit with its candidate's position, for ties.
type entry struct {
	hit Hit
	pos int
}

// better reports whether a ranks before b: a higher score, or the same
// score and an earlier candidate.
func better(a, b entry) bool {
	if a.hit.Score != b.hit.Score {
		return a.hit.Score > b.hit.Score
	}
	return a.pos < b.pos
}

// minHeap keeps the worst kept entry on top.
type minHeap []entry

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(i, j int) bool { return better(h[j], h[i]) }
func (h minHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)        { *h = append(*h, x.(entry)) }
func (h *minHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}
