package main

import (
	"sort"
	"strings"
)

// humaPath is the import path of huma, the HTTP API framework; it and the
// packages below it are transport.
const humaPath = "github.com/danielgtaylor/huma/v2"

// graph is the module's import graph, by module-relative package name.
type graph struct {
	module string
	// imports holds each package's direct imports, in-module ones relative,
	// others by their full path.
	imports map[string][]string
	// deps holds each package's transitive dependencies, named like imports.
	deps map[string][]string
}

// newGraph builds the graph of pkgs, whose module is module.
func newGraph(module string, pkgs []pkg) graph {
	g := graph{module: module, imports: map[string][]string{}, deps: map[string][]string{}}
	for _, p := range pkgs {
		name := g.rel(p.ImportPath)
		for _, i := range p.Imports {
			g.imports[name] = append(g.imports[name], g.rel(i))
		}
		for _, d := range p.Deps {
			g.deps[name] = append(g.deps[name], g.rel(d))
		}
		if _, ok := g.imports[name]; !ok {
			g.imports[name] = nil
		}
	}
	return g
}

// rel names an import path as the graph does.
func (g graph) rel(path string) string {
	if path == g.module {
		return "."
	}
	return strings.TrimPrefix(path, g.module+"/")
}

// inModule reports whether name (as the graph names it) is a package of
// the module.
func (g graph) inModule(name string) bool {
	_, ok := g.imports[name]
	return ok
}

// under reports whether name is dir or a package below it.
func under(name, dir string) bool {
	return name == dir || strings.HasPrefix(name, dir+"/")
}

// isTransport reports whether name is a transport package.
func (g graph) isTransport(name string) bool {
	if !g.inModule(name) {
		return under(name, humaPath)
	}
	return under(name, "httpapi") || under(name, "webui")
}

// isDomain reports whether the module's package name is a domain package.
func isDomain(name string) bool {
	for _, dir := range []string{"cmd", "internal/cli", "internal/app", "internal/browsertest", "httpapi", "webui", "scripts"} {
		if under(name, dir) {
			return false
		}
	}
	return true
}

// composition is the order in which Quiver is put together, outermost
// first: cmd/... runs the command line (internal/cli), which runs the
// commands of the composition root (internal/app), which builds every
// other package. A package may import the layers after its own, never one
// before it; a package in no layer comes after them all.
var composition = []string{"cmd", "internal/cli", "internal/app"}

// layer is the index in composition of the layer name belongs to, or
// len(composition) for a package in none.
func layer(name string) int {
	for i, dir := range composition {
		if under(name, dir) {
			return i
		}
	}
	return len(composition)
}

// layering lists every in-module import that reaches back to an outer
// layer of the composition ("internal/app -> internal/cli", "agent ->
// internal/app"), as "importer -> imported".
func (g graph) layering() []string {
	var out []string
	for _, name := range g.names() {
		for _, i := range g.imports[name] {
			if g.inModule(i) && layer(i) < layer(name) {
				out = append(out, name+" -> "+i)
			}
		}
	}
	return out
}

// violations lists every domain package that depends on a transport
// package, with the shortest import chain that brings it in.
func (g graph) violations() []string {
	var out []string
	for _, name := range g.names() {
		if !isDomain(name) {
			continue
		}
		for _, d := range g.deps[name] {
			if !g.isTransport(d) {
				continue
			}
			// A transport package reached through another one is
			// reported once, at the first.
			c := g.path(name, d)
			if c == nil { // through a package outside the module
				c = []string{name, "…", d}
			}
			if !g.throughTransport(c) {
				out = append(out, chainString(c))
			}
		}
	}
	return out
}

// throughTransport reports whether chain passes a transport package
// before its end.
func (g graph) throughTransport(chain []string) bool {
	for _, n := range chain[1 : len(chain)-1] {
		if g.isTransport(n) {
			return true
		}
	}
	return false
}

// path is a shortest import chain from one package to another, both
// included; nil when to is not reached.
func (g graph) path(from, to string) []string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if n == to {
			var chain []string
			for ; n != ""; n = prev[n] {
				chain = append([]string{n}, chain...)
			}
			return chain
		}
		for _, i := range g.imports[n] {
			if _, seen := prev[i]; !seen {
				prev[i] = n
				queue = append(queue, i)
			}
		}
	}
	return nil
}

// names lists the module's packages in order.
func (g graph) names() []string {
	var out []string
	for n := range g.imports {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// longest returns the longest chain of in-module imports, or the cycle
// that makes the graph cyclic (Go rejects those, so it is only a guard).
func (g graph) longest() (chain []string, cycle []string) {
	w := walk{g: g, state: map[string]int{}, best: map[string][]string{}}
	for _, n := range g.names() {
		if c := w.visit(n); c != nil {
			return nil, c
		}
		if len(w.best[n]) > len(chain) {
			chain = w.best[n]
		}
	}
	return chain, nil
}

// States of a package in a walk.
const (
	unseen = iota
	open   // on the walk's stack
	done   // its longest chain is known
)

// walk is a depth-first walk of a graph that records, for each package,
// the longest chain of in-module imports starting there.
type walk struct {
	g     graph
	state map[string]int
	best  map[string][]string
	stack []string
}

// visit walks n and returns the cycle through n's stack, if one is found.
func (w *walk) visit(n string) []string {
	switch w.state[n] {
	case open:
		return w.cycleTo(n)
	case done:
		return nil
	}
	w.state[n] = open
	w.stack = append(w.stack, n)
	long := []string{n}
	for _, i := range w.g.imports[n] {
		if !w.g.inModule(i) {
			continue
		}
		if c := w.visit(i); c != nil {
			return c
		}
		if len(w.best[i])+1 > len(long) {
			long = append([]string{n}, w.best[i]...)
		}
	}
	w.stack = w.stack[:len(w.stack)-1]
	w.state[n], w.best[n] = done, long
	return nil
}

// cycleTo is the stack from n's open visit back to n.
func (w *walk) cycleTo(n string) []string {
	for i, s := range w.stack {
		if s == n {
			return append(append([]string{}, w.stack[i:]...), n)
		}
	}
	return []string{n, n}
}

// chainString is a chain as "a -> b -> c".
func chainString(c []string) string { return strings.Join(c, " -> ") }
