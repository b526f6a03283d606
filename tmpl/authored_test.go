package tmpl_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// authoredSources are the only places allowed to mark text as authored:
// configuration loading, Quiver's shipped prompts and tool fragments, and the
// admin CLI that renders a template. Chat messages, model output, tool
// results and MCP descriptions must never become Authored, so a new call
// site needs a reason to be added here.
var authoredSources = []string{
	"internal/config/agent.go",
	"prompt/prompt.go",
	"internal/app/promptcmd.go",
	// quiver bench's assembly comparison: a constant agent prompt of its
	// own, as a configured agent's would be.
	"internal/bench/assembly.go",
}

func TestAuthorIsCalledOnlyFromAuthoredSources(t *testing.T) {
	root := filepath.Join("..")
	fset := token.NewFileSet()
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if ok && sel.Sel.Name == "Author" {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == "tmpl" {
					found = append(found, filepath.ToSlash(rel))
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) == 0 {
		t.Fatal("found no call of tmpl.Author: the walk is broken")
	}
	for _, f := range found {
		if !slices.Contains(authoredSources, f) {
			t.Errorf("%s calls tmpl.Author: only configuration, shipped prompts and admin tools may mark text as authored", f)
		}
	}
}
