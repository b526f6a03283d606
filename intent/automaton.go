package intent

import "sort"

// automaton is an Aho–Corasick automaton over the bytes of normalised
// patterns: one pass over a text finds every occurrence of every pattern.
// It is immutable once built and safe for concurrent use.
type automaton struct {
	nodes []acNode
}

type acNode struct {
	// edges are the goto transitions, sorted by byte.
	edges []acEdge
	fail  int32
	// out lists the patterns ending here, this node's own and those of
	// its failure chain (merged at build time).
	out []int32
}

type acEdge struct {
	b    byte
	next int32
}

func (n *acNode) next(b byte) int32 {
	i := sort.Search(len(n.edges), func(i int) bool { return n.edges[i].b >= b })
	if i < len(n.edges) && n.edges[i].b == b {
		return n.edges[i].next
	}
	return -1
}

// buildAutomaton builds the automaton of patterns; pattern i is reported
// as i.
func buildAutomaton(patterns []string) *automaton {
	a := &automaton{nodes: []acNode{{}}}
	for i, p := range patterns {
		cur := int32(0)
		for j := 0; j < len(p); j++ {
			nx := a.nodes[cur].next(p[j])
			if nx < 0 {
				nx = int32(len(a.nodes))
				a.nodes = append(a.nodes, acNode{})
				n := &a.nodes[cur]
				k := sort.Search(len(n.edges), func(k int) bool { return n.edges[k].b >= p[j] })
				n.edges = append(n.edges, acEdge{})
				copy(n.edges[k+1:], n.edges[k:])
				n.edges[k] = acEdge{b: p[j], next: nx}
			}
			cur = nx
		}
		a.nodes[cur].out = append(a.nodes[cur].out, int32(i))
	}
	// Breadth-first: failure links, and outputs merged along them.
	queue := make([]int32, 0, len(a.nodes))
	for _, e := range a.nodes[0].edges {
		a.nodes[e.next].fail = 0
		queue = append(queue, e.next)
	}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, e := range a.nodes[u].edges {
			f := a.nodes[u].fail
			for f > 0 && a.nodes[f].next(e.b) < 0 {
				f = a.nodes[f].fail
			}
			target := a.nodes[f].next(e.b)
			if target < 0 || target == e.next {
				target = 0
			}
			a.nodes[e.next].fail = target
			a.nodes[e.next].out = append(a.nodes[e.next].out, a.nodes[target].out...)
			queue = append(queue, e.next)
		}
	}
	return a
}

// hit is one occurrence: pattern index and byte span [start, end).
type hit struct {
	pattern    int32
	start, end int
}

// find calls fn for every occurrence of every pattern in text, in order of
// end position.
func (a *automaton) find(text string, lengths []int, fn func(hit)) {
	cur := int32(0)
	for i := 0; i < len(text); i++ {
		b := text[i]
		for {
			if nx := a.nodes[cur].next(b); nx >= 0 {
				cur = nx
				break
			}
			if cur == 0 {
				break
			}
			cur = a.nodes[cur].fail
		}
		for _, p := range a.nodes[cur].out {
			fn(hit{pattern: p, start: i + 1 - lengths[p], end: i + 1})
		}
	}
}
