package main

import (
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCountDocs runs the counter on testdata/fixture, whose names say
// whether each must count as documented (Doc…), undocumented (Undoc…) or
// not at all (Skip…, unexported).
func TestCountDocs(t *testing.T) {
	fset := token.NewFileSet()
	files, err := parseFiles(fset, "testdata/fixture", []string{"fixture.go"})
	if err != nil {
		t.Fatal(err)
	}
	c := countDocs(fset, files)
	var gotMissing []string
	for _, m := range c.missing {
		gotMissing = append(gotMissing, m[strings.Index(m, " ")+1:])
	}
	wantMissing := []string{
		"UndocFunc", "UndocMethod", "UndocCap", "UndocType", "UndocSpecVar",
		"UndocVar", "UndocGroupedType", "UndocEmptyComment",
	}
	if diff := cmp.Diff(wantMissing, gotMissing); diff != "" {
		t.Errorf("undocumented names (-want +got):\n%s", diff)
	}
	wantDoc := []string{
		"DocFunc", "DocType", "DocMethod", "DocList", "DocLen", "DocGroupA", "DocGroupB",
		"DocSpecVar", "DocPairA", "DocPairB", "DocGroupedType", "DocInterface",
	}
	if c.documented != len(wantDoc) || c.total != len(wantDoc)+len(wantMissing) {
		t.Errorf("documented %d of %d, want %d of %d", c.documented, c.total, len(wantDoc), len(wantDoc)+len(wantMissing))
	}
	if !strings.HasPrefix(c.missing[0], "fixture.go:9 ") {
		t.Errorf("first missing name at %q, want fixture.go:9", c.missing[0])
	}
}

// TestFixtureNamesAgree guards the fixture itself: every exported name the
// test lists appears in it, so a rename there cannot make the test vacuous.
func TestFixtureNamesAgree(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "fixture", "fixture.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"UndocFunc", "DocPairB", "SkipMethod", "skipConst", "UndocEmptyComment"} {
		if !strings.Contains(string(src), n) {
			t.Errorf("fixture lacks %s", n)
		}
	}
}

// TestFuncSizes: a function runs from its func keyword to its closing
// brace, and methods are named with their receiver.
func TestFuncSizes(t *testing.T) {
	fset := token.NewFileSet()
	files, err := parseFiles(fset, "testdata/fixture", []string{"fixture.go"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range funcSizes(fset, files[0], ".") {
		got[f.name] = f.pos + " " + strings.Repeat("|", f.lines)
	}
	want := map[string]string{
		"DocFunc":                "testdata/fixture/fixture.go:7 |",
		"(*DocList).DocLen":      "testdata/fixture/fixture.go:33 |",
		"(DocType).DocMethod":    "testdata/fixture/fixture.go:20 |",
		"(*DocType).UndocMethod": "",
	}
	for name, w := range want {
		if w == "" {
			if _, ok := got[name]; !ok {
				t.Errorf("%s not listed", name)
			}
			continue
		}
		if got[name] != w {
			t.Errorf("%s: got %q, want %q", name, got[name], w)
		}
	}
}

// graphOf builds a graph from "pkg: import import" lines of module m.
func graphOf(lines ...string) graph {
	var pkgs []pkg
	for _, l := range lines {
		name, imps, _ := strings.Cut(l, ":")
		p := pkg{ImportPath: "m/" + name}
		for _, i := range strings.Fields(imps) {
			if !strings.Contains(i, ".") {
				i = "m/" + i
			}
			p.Imports = append(p.Imports, i)
		}
		pkgs = append(pkgs, p)
	}
	// Deps are the transitive closure, as go list reports them.
	byPath := map[string][]string{}
	for _, p := range pkgs {
		byPath[p.ImportPath] = p.Imports
	}
	for i, p := range pkgs {
		seen := map[string]bool{}
		var add func(string)
		add = func(s string) {
			for _, d := range byPath[s] {
				if !seen[d] {
					seen[d] = true
					pkgs[i].Deps = append(pkgs[i].Deps, d)
					add(d)
				}
			}
		}
		add(p.ImportPath)
	}
	return newGraph("m", pkgs)
}

// TestViolations: a domain package reaching transport directly or through
// another package is reported with its chain; the transport packages and
// the composition root may import what they like.
func TestViolations(t *testing.T) {
	g := graphOf(
		"agent: tool",
		"tool: fmt",
		"store: httpapi",
		"intent: store",
		"llm: github.com/danielgtaylor/huma/v2/adapters/humago",
		"httpapi: agent github.com/danielgtaylor/huma/v2",
		"webui: httpapi",
		"internal/app: httpapi webui",
		"internal/cli: internal/app agent",
		"cmd/quiver: internal/cli internal/app",
		"scripts/house: webui",
	)
	want := []string{
		"intent -> store -> httpapi",
		"llm -> github.com/danielgtaylor/huma/v2/adapters/humago",
		"store -> httpapi",
	}
	if diff := cmp.Diff(want, g.violations()); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
	// go list reports a dependency reached through a package outside the
	// module, whose own imports the graph does not hold.
	g = graphOf("tool: example.com/x")
	g.deps["tool"] = append(g.deps["tool"], "github.com/danielgtaylor/huma/v2")
	if diff := cmp.Diff([]string{"tool -> … -> github.com/danielgtaylor/huma/v2"}, g.violations()); diff != "" {
		t.Errorf("violation through an outside package (-want +got):\n%s", diff)
	}
	if v := graphOf("agent: tool", "httpapi: agent").violations(); v != nil {
		t.Errorf("clean graph has violations %v", v)
	}
}

// TestLayering: cmd may import internal/cli and internal/app, and
// internal/cli internal/app; an import back to an outer layer (the
// composition root importing the parser, a domain package importing
// either) is reported, and packages outside the module are not layers.
func TestLayering(t *testing.T) {
	clean := graphOf(
		"cmd/quiver: internal/cli internal/app",
		"internal/cli: internal/app agent flag",
		"internal/app: agent httpapi",
		"httpapi: agent",
		"agent: tool",
		"tool: example.com/cmd",
	)
	if l := clean.layering(); l != nil {
		t.Errorf("clean graph breaks the layers: %v", l)
	}
	g := graphOf(
		"cmd/quiver: internal/cli",
		"internal/cli: internal/app",
		"internal/app: internal/cli agent",
		"agent: internal/app",
		"httpapi: internal/cli",
		"internal/cli/sub: cmd/quiver",
	)
	want := []string{
		"agent -> internal/app",
		"httpapi -> internal/cli",
		"internal/app -> internal/cli",
		"internal/cli/sub -> cmd/quiver",
	}
	if diff := cmp.Diff(want, g.layering()); diff != "" {
		t.Errorf("layering (-want +got):\n%s", diff)
	}
}

// TestLongest: the longest in-module chain is found, standard-library
// imports do not lengthen it, and a cycle is reported instead.
func TestLongest(t *testing.T) {
	chain, cycle := graphOf("a: b c", "b: d fmt", "c: d", "d: e", "e: net/http").longest()
	if diff := cmp.Diff([]string{"a", "b", "d", "e"}, chain); diff != "" || cycle != nil {
		t.Errorf("chain (-want +got):\n%s; cycle %v", diff, cycle)
	}
	_, cycle = graphOf("a: b", "b: c", "c: a").longest()
	if diff := cmp.Diff([]string{"a", "b", "c", "a"}, cycle); diff != "" {
		t.Errorf("cycle (-want +got):\n%s", diff)
	}
}

// TestProblems: -check refuses a doc share under 80% and a domain package
// depending on transport, and accepts exactly 80% on a clean graph.
func TestProblems(t *testing.T) {
	bad := &report{docs: map[string]docCount{"a": {documented: 79, total: 100}}, graph: graphOf("store: httpapi", "httpapi:")}
	if p := bad.problems(); len(p) != 2 {
		t.Errorf("problems = %q, want the doc share and the import", p)
	}
	ok := &report{docs: map[string]docCount{"a": {documented: 80, total: 100}}, graph: graphOf("httpapi: store", "store:")}
	if p := ok.problems(); p != nil {
		t.Errorf("problems = %q, want none", p)
	}
}
