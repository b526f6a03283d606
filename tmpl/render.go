package tmpl

import (
	"fmt"
	"slices"
	"strings"
)

// Env is what a render may know of the turn.
type Env struct {
	// Capabilities maps capability names to their state; absent is off.
	Capabilities map[string]bool
	// Tools holds the function names declared this turn.
	Tools map[string]bool
	// Families maps every family known to the catalog to whether some tool
	// of it is declared this turn. url_fetch and web_search are known even
	// when absent.
	Families map[string]bool
	// Macros maps macro keys to the function that serves them, overriding
	// the table's default (an MCP replacement) or adding a macro a tool
	// declares. The macro expands to that name only when it is declared.
	Macros map[string]string
}

// Result is a rendered template and the warnings met on the way, each once.
type Result struct {
	Text     string   `json:"text"`
	Warnings []string `json:"warnings"`
}

// Render renders the template against env in one linear pass: conditions
// first, then macros in the chosen text; expanded text is never re-parsed.
// It fails only when the output would exceed MaxRenderedBytes.
func (t *Template) Render(env Env) (Result, error) {
	r := renderer{env: env, warnings: slices.Clone(t.warnings)}
	r.nodes(t.nodes)
	if r.b.Len() > MaxRenderedBytes {
		return Result{}, fmt.Errorf("rendered template is %d bytes, over the limit of %d", r.b.Len(), MaxRenderedBytes)
	}
	return Result{Text: r.b.String(), Warnings: dedupe(r.warnings)}, nil
}

// Render parses and renders authored text in one call.
func Render(a Authored, env Env) (Result, error) {
	t, err := Parse(a)
	if err != nil {
		return Result{}, err
	}
	return t.Render(env)
}

type renderer struct {
	env      Env
	b        strings.Builder
	warnings []string
}

func (r *renderer) nodes(ns []node) {
	for _, n := range ns {
		if r.b.Len() > MaxRenderedBytes {
			return
		}
		switch n := n.(type) {
		case textNode:
			expand(&r.b, n.text, r.env)
		case *blockNode:
			r.block(n)
		}
	}
}

func (r *renderer) block(b *blockNode) {
	if b.bad != "" {
		r.warnings = append(r.warnings, b.bad)
		return
	}
	ok, warning := b.cond.eval(r.env)
	if warning != "" {
		r.warnings = append(r.warnings, warning)
	}
	if ok {
		r.nodes(b.then)
		r.malformed(b.els)
	} else {
		r.malformed(b.then)
		r.nodes(b.els)
	}
}

// malformed reports the malformed blocks of a branch not taken. They are
// dropped either way, but the author hears of the typo whatever this turn
// can do.
func (r *renderer) malformed(ns []node) {
	for _, n := range ns {
		b, ok := n.(*blockNode)
		switch {
		case !ok:
		case b.bad != "":
			r.warnings = append(r.warnings, b.bad)
		default:
			r.malformed(b.then)
			r.malformed(b.els)
		}
	}
}

func dedupe(ws []string) []string {
	out := []string{}
	seen := make(map[string]bool, len(ws))
	for _, w := range ws {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}
