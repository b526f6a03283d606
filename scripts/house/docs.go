package main

import (
	"fmt"
	"go/ast"
	"go/token"
	"path/filepath"
	"strings"
)

// docCount is the doc share of a set of files.
type docCount struct {
	documented int
	total      int
	// missing names each undocumented name as "file:line Name".
	missing []string
}

// add is c and o together.
func (c docCount) add(o docCount) docCount {
	return docCount{documented: c.documented + o.documented, total: c.total + o.total, missing: append(c.missing, o.missing...)}
}

// percent is the documented share; an empty count is fully documented.
func (c docCount) percent() float64 {
	if c.total == 0 {
		return 100
	}
	return 100 * float64(c.documented) / float64(c.total)
}

// countDocs applies the doc share rule of the package comment to files,
// which fset positions.
func countDocs(fset *token.FileSet, files []*ast.File) docCount {
	var c docCount
	note := func(id *ast.Ident, docs ...*ast.CommentGroup) {
		c.total++
		for _, d := range docs {
			if d != nil && strings.TrimSpace(d.Text()) != "" {
				c.documented++
				return
			}
		}
		p := fset.Position(id.Pos())
		c.missing = append(c.missing, fmt.Sprintf("%s:%d %s", filepath.Base(p.Filename), p.Line, id.Name))
	}
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if countedFunc(d) {
					note(d.Name, d.Doc)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							note(s.Name, s.Doc, d.Doc)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								note(n, s.Doc, d.Doc)
							}
						}
					}
				}
			}
		}
	}
	return c
}

// countedFunc reports whether fd is a counted function or method.
func countedFunc(fd *ast.FuncDecl) bool {
	if !fd.Name.IsExported() {
		return false
	}
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return true
	}
	return ast.IsExported(recvTypeName(fd.Recv.List[0].Type))
}
