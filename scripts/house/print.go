package main

import (
	"fmt"
	"io"
	"sort"
)

// print writes the figures to w; undoc adds every undocumented name.
func (r *report) print(w io.Writer, undoc bool) {
	r.printLines(w)
	r.printFuncs(w)
	r.printDocs(w, undoc)
	r.printGraph(w)
}

func (r *report) printLines(w io.Writer) {
	fmt.Fprintln(w, "== non-test Go lines per package (physical lines)")
	total := 0
	for _, name := range sortedKeys(r.lines) {
		fmt.Fprintf(w, "%7d  %s\n", r.lines[name], name)
		total += r.lines[name]
	}
	fmt.Fprintf(w, "%7d  total\n", total)
	fmt.Fprintf(w, "internal/app: %d lines\n", r.lines["internal/app"])
	fmt.Fprintf(w, "internal/cli: %d lines\n\n", r.lines["internal/cli"])
}

func (r *report) printFuncs(w io.Writer) {
	fmt.Fprintf(w, "== the %d biggest functions (lines, func keyword to closing brace)\n", topFuncs)
	for _, f := range r.funcs[:min(topFuncs, len(r.funcs))] {
		fmt.Fprintf(w, "%5d  %s  %s\n", f.lines, f.pos, f.name)
	}
	fmt.Fprintln(w)
}

func (r *report) printDocs(w io.Writer, undoc bool) {
	all := r.totalDocs()
	fmt.Fprintln(w, "== exported names with a doc comment")
	fmt.Fprintf(w, "overall: %d/%d (%.1f%%), at least %.0f%% wanted\n", all.documented, all.total, all.percent(), minDocShare)
	for _, name := range sortedKeys(r.docs) {
		c := r.docs[name]
		if c.total == 0 {
			continue
		}
		fmt.Fprintf(w, "%6.1f%%  %4d/%-4d  %s\n", c.percent(), c.documented, c.total, name)
	}
	if undoc {
		fmt.Fprintln(w, "undocumented:")
		for _, name := range sortedKeys(r.docs) {
			for _, m := range r.docs[name].missing {
				fmt.Fprintf(w, "  %s/%s\n", name, m)
			}
		}
	}
	fmt.Fprintln(w)
}

func (r *report) printGraph(w io.Writer) {
	fmt.Fprintln(w, "== import graph")
	v := r.graph.violations()
	fmt.Fprintf(w, "domain packages depending on a transport package: %d\n", len(v))
	for _, s := range v {
		fmt.Fprintln(w, "  "+s)
	}
	l := r.graph.layering()
	fmt.Fprintf(w, "imports of an outer layer (cmd -> internal/cli -> internal/app -> the rest): %d\n", len(l))
	for _, s := range l {
		fmt.Fprintln(w, "  "+s)
	}
	chain, cycle := r.graph.longest()
	if cycle != nil {
		fmt.Fprintln(w, "import cycle: "+chainString(cycle))
		return
	}
	fmt.Fprintln(w, "import cycles: none")
	fmt.Fprintf(w, "longest in-module import chain: %d packages: %s\n", len(chain), chainString(chain))
}

// totalDocs is the doc count of every package together.
func (r *report) totalDocs() docCount {
	var all docCount
	for _, c := range r.docs {
		all = all.add(c)
	}
	return all
}

// problems lists what -check refuses: a doc share under the minimum, a
// domain package depending on transport, an import of an outer layer of
// the composition, an import cycle.
func (r *report) problems() []string {
	var out []string
	if all := r.totalDocs(); all.percent() < minDocShare {
		out = append(out, fmt.Sprintf("doc share %.1f%% is under %.0f%%", all.percent(), minDocShare))
	}
	for _, v := range r.graph.violations() {
		out = append(out, "domain package depends on transport: "+v)
	}
	for _, l := range r.graph.layering() {
		out = append(out, "import of an outer layer: "+l)
	}
	if _, cycle := r.graph.longest(); cycle != nil {
		out = append(out, "import cycle: "+chainString(cycle))
	}
	return out
}

// sortedKeys lists m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
