// Command house prints Quiver's house figures: the size of each package,
// the biggest functions, how many exported names carry a doc comment, and
// whether the import graph keeps transport out of the domain. Run it from
// the module root:
//
//	go run ./scripts/house          # print the figures
//	go run ./scripts/house -check   # and exit 1 when a rule is broken
//	go run ./scripts/house -undocumented  # also list every name missing a doc
//
// The packages are those of `go list ./...`, with the files the current
// build selects; test files (*_test.go), testdata and generated files
// ("Code generated ... DO NOT EDIT.") are left out of every figure.
//
// Lines are physical lines of a file, blank lines and comments included
// (what wc -l says). A function's size runs from its func keyword to its
// closing brace; its doc comment does not count.
//
// Doc share rule. These exported names count, each once:
//   - a function without a receiver whose name is exported;
//   - a method whose name is exported, on a receiver type whose name is
//     exported (methods of unexported types are not API);
//   - a type whose name is exported;
//   - every exported name of a const or var declaration.
//
// Struct fields and interface methods are not counted. A function or method
// is documented when it has a doc comment. A type, const or var name is
// documented when its own spec has a doc comment or when the declaration
// holding it has one: in a grouped block, "// Ways a turn stops." above
// const ( ... ) documents every name in the block. Trailing line comments
// do not count.
//
// Import rule. Transport packages are httpapi and webui (and packages below
// them) and github.com/danielgtaylor/huma/v2 (and below). Domain packages
// are every package of the module except cmd/..., internal/cli,
// internal/app, internal/browsertest, httpapi, webui and scripts/.... A
// domain package must not depend on a transport package, directly or
// through another package. Go already forbids import cycles; the longest
// chain of in-module imports is printed for information.
//
// Layer rule. Quiver is put together in layers, outermost first: cmd/...
// (the command line's main), internal/cli (its parser), internal/app (the
// composition root and the commands), then every other package. A package
// may import a layer after its own, never one before it: internal/cli
// imports internal/app, not the reverse, and no other package imports
// either.
//
// With -check the command exits 1 when the overall doc share is under 80%,
// a domain package depends on a transport package, a package imports an
// outer layer, or (which Go itself refuses to build) the imports form a
// cycle; it exits 2 when it cannot read the packages.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// minDocShare is the lowest overall doc share -check accepts, in percent.
const minDocShare = 80.0

// topFuncs is how many of the biggest functions are printed.
const topFuncs = 15

func main() {
	check := flag.Bool("check", false, "exit 1 when the doc share is under 80%, a domain package imports a transport package, a package imports an outer layer or the imports form a cycle")
	undoc := flag.Bool("undocumented", false, "list every exported name without a doc comment")
	flag.Parse()
	pkgs, err := listPackages()
	if err != nil {
		fmt.Fprintln(os.Stderr, "house:", err)
		os.Exit(2)
	}
	r, err := measure(pkgs)
	if err != nil {
		fmt.Fprintln(os.Stderr, "house:", err)
		os.Exit(2)
	}
	r.print(os.Stdout, *undoc)
	if *check {
		if problems := r.problems(); len(problems) > 0 {
			for _, p := range problems {
				fmt.Fprintln(os.Stderr, "house -check:", p)
			}
			os.Exit(1)
		}
	}
}

// pkg is what the figures need of one package from go list.
type pkg struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	CgoFiles   []string
	Imports    []string
	Deps       []string
	Module     *struct{ Path, Dir string }
	Error      *struct{ Err string }
}

// listPackages runs go list on the module in the working directory.
func listPackages() ([]pkg, error) {
	cmd := exec.Command("go", "list", "-json=ImportPath,Dir,GoFiles,CgoFiles,Imports,Deps,Module,Error", "./...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return decodePackages(bytes.NewReader(out))
}

// decodePackages reads go list -json's stream of objects.
func decodePackages(r io.Reader) ([]pkg, error) {
	var pkgs []pkg
	dec := json.NewDecoder(r)
	for {
		var p pkg
		err := dec.Decode(&p)
		if errors.Is(err, io.EOF) {
			return pkgs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("decode go list: %w", err)
		}
		if p.Error != nil {
			return nil, fmt.Errorf("go list %s: %s", p.ImportPath, p.Error.Err)
		}
		pkgs = append(pkgs, p)
	}
}

// report holds every figure.
type report struct {
	module string
	lines  map[string]int // package (module-relative) → lines
	funcs  []funcSize
	docs   map[string]docCount // package → doc count
	graph  graph
}

// measure parses every package and builds the report.
func measure(pkgs []pkg) (*report, error) {
	if len(pkgs) == 0 || pkgs[0].Module == nil {
		return nil, errors.New("no packages in a module; run from the module root")
	}
	r := &report{module: pkgs[0].Module.Path, lines: map[string]int{}, docs: map[string]docCount{}}
	root := pkgs[0].Module.Dir
	for _, p := range pkgs {
		name := r.rel(p.ImportPath)
		fset := token.NewFileSet()
		files, err := parseFiles(fset, p.Dir, append(p.GoFiles, p.CgoFiles...))
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			r.lines[name] += fset.File(f.Pos()).LineCount()
			r.funcs = append(r.funcs, funcSizes(fset, f, root)...)
		}
		r.docs[name] = countDocs(fset, files)
	}
	sort.SliceStable(r.funcs, func(i, j int) bool { return r.funcs[i].lines > r.funcs[j].lines })
	r.graph = newGraph(r.module, pkgs)
	return r, nil
}

// rel is an import path relative to the module ("agent", "internal/app").
func (r *report) rel(path string) string {
	if path == r.module {
		return "."
	}
	return strings.TrimPrefix(path, r.module+"/")
}

// parseFiles parses the named files of dir with their comments, leaving
// out generated files.
func parseFiles(fset *token.FileSet, dir string, names []string) ([]*ast.File, error) {
	var files []*ast.File
	for _, n := range names {
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.ParseComments)
		if err != nil {
			return nil, fmt.Errorf("parse: %w", err)
		}
		if ast.IsGenerated(f) {
			continue
		}
		files = append(files, f)
	}
	return files, nil
}

// funcSize is one function's size and where it starts.
type funcSize struct {
	name  string // "Name" or "(*Recv).Name"
	pos   string // file:line, relative to the module root
	lines int
}

// funcSizes lists the size of every function and method declared in f.
func funcSizes(fset *token.FileSet, f *ast.File, root string) []funcSize {
	var out []funcSize
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		start, end := fset.Position(fd.Type.Func), fset.Position(fd.Body.Rbrace)
		file, err := filepath.Rel(root, start.Filename)
		if err != nil {
			file = start.Filename
		}
		out = append(out, funcSize{
			name:  funcName(fd),
			pos:   fmt.Sprintf("%s:%d", filepath.ToSlash(file), start.Line),
			lines: end.Line - start.Line + 1,
		})
	}
	return out
}

// funcName is a function's name, with its receiver for a method.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	star := ""
	if s, ok := t.(*ast.StarExpr); ok {
		star, t = "*", s.X
	}
	return fmt.Sprintf("(%s%s).%s", star, recvTypeName(t), fd.Name.Name)
}

// recvTypeName is the name of a receiver's type, without pointer or type
// parameters.
func recvTypeName(t ast.Expr) string {
	switch x := t.(type) {
	case *ast.StarExpr:
		return recvTypeName(x.X)
	case *ast.IndexExpr:
		return recvTypeName(x.X)
	case *ast.IndexListExpr:
		return recvTypeName(x.X)
	case *ast.ParenExpr:
		return recvTypeName(x.X)
	case *ast.Ident:
		return x.Name
	}
	return ""
}
