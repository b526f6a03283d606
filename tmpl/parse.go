package tmpl

import (
	"errors"
	"fmt"
	"strings"
)

// Limits on templates. Templates come from admins but are still input.
const (
	// MaxTemplateBytes bounds an authored template.
	MaxTemplateBytes = 64 << 10
	// MaxRenderedBytes bounds a rendered template.
	MaxRenderedBytes = 256 << 10
	// MaxDepth bounds how deeply {{if}} blocks nest.
	MaxDepth = 32
)

// Template is a parsed authored text. It is immutable and safe for
// concurrent use; parse once, render per turn.
type Template struct {
	nodes    []node
	warnings []string
}

type node interface{ isNode() }

type textNode struct{ text string }

type blockNode struct {
	line    int
	src     string // the opening directive as written, for warnings
	cond    cond
	then    []node
	els     []node
	hasElse bool
	// bad, when set, drops the whole block (both branches) with this warning.
	bad string
}

func (textNode) isNode()   {}
func (*blockNode) isNode() {}

// Parse parses authored text. It fails only on limits (size, nesting
// depth); malformed blocks are not errors: they are dropped at render time
// with a warning, so one typo cannot take a whole prompt down.
func Parse(a Authored) (*Template, error) {
	src := a.text
	if len(src) > MaxTemplateBytes {
		return nil, fmt.Errorf("template is %d bytes, over the limit of %d", len(src), MaxTemplateBytes)
	}
	p := &parser{src: src}
	if err := p.run(); err != nil {
		return nil, err
	}
	return &Template{nodes: p.root, warnings: p.warnings}, nil
}

type parser struct {
	src      string
	root     []node
	stack    []*blockNode
	warnings []string
}

func (p *parser) run() error {
	if !strings.Contains(p.src, "{{") {
		// No directive can match (most fragments): skip the scan.
		p.text(p.src)
		return nil
	}
	pos, line, counted := 0, 1, 0
	for from := 0; ; {
		// A directive: {{if …}}, {{else …}} or {{/if …}}, case-insensitively,
		// with whitespace inside the braces (also between / and if).
		m, ok := nextDirective(p.src, from)
		if !ok {
			break
		}
		from = m[1]
		// Lines are counted as the scan goes, to keep parsing linear.
		line += strings.Count(p.src[counted:m[0]], "\n")
		counted = m[0]
		start, end := standalone(p.src, m[0], m[1])
		if start < pos { // shares a line with the previous directive
			start, end = m[0], m[1]
		}
		p.text(p.src[pos:start])
		// Warnings quote the directive on one line, however it was written.
		quoted := strings.Join(strings.Fields(p.src[m[0]:m[1]]), " ")
		if err := p.directive(p.src[m[2]:m[3]], quoted, line); err != nil {
			return err
		}
		pos = end
	}
	p.text(p.src[pos:])
	if len(p.stack) > 0 {
		b := p.stack[0]
		b.bad = fmt.Sprintf("line %d: %s has no closing {{/if}}; dropped it and everything after it", b.line, b.src)
	}
	return nil
}

// standalone widens a directive alone on its line (with only spaces or tabs
// around it) to the whole line and its newline, so it leaves no line behind.
// It looks only at the blanks next to the directive, so that a template of
// many directives on one long line is still parsed in linear time.
func standalone(s string, start, end int) (int, int) {
	ls := start
	for ls > 0 && blank(s[ls-1]) {
		ls--
	}
	if ls > 0 && s[ls-1] != '\n' {
		return start, end
	}
	le := end
	for le < len(s) && blank(s[le]) {
		le++
	}
	switch {
	case le == len(s):
		return ls, le
	case s[le] == '\n':
		return ls, le + 1
	}
	return start, end
}

func blank(c byte) bool { return c == ' ' || c == '\t' || c == '\r' }

func (p *parser) text(s string) {
	if s != "" {
		p.add(textNode{text: s})
	}
}

// add appends n to the innermost open branch.
func (p *parser) add(n node) {
	if len(p.stack) == 0 {
		p.root = append(p.root, n)
		return
	}
	b := p.stack[len(p.stack)-1]
	if b.hasElse {
		b.els = append(b.els, n)
	} else {
		b.then = append(b.then, n)
	}
}

var errTooDeep = errors.New("template nests {{if}} blocks deeper than 32")

func (p *parser) directive(body, src string, line int) error {
	lower := strings.ToLower(body)
	switch {
	case strings.HasPrefix(lower, "/"):
		p.close(strings.TrimSpace(strings.TrimSpace(body[1:])[2:]), src, line)
	case strings.HasPrefix(lower, "if"):
		if len(p.stack) >= MaxDepth {
			return fmt.Errorf("line %d: %w", line, errTooDeep)
		}
		b := &blockNode{line: line, src: src}
		c, err := parseCond(strings.TrimSpace(body[2:]))
		if err != nil {
			b.bad = fmt.Sprintf("line %d: %s: %v; block dropped", line, src, err)
		}
		b.cond = c
		p.add(b)
		p.stack = append(p.stack, b)
	default:
		p.elseBranch(strings.TrimSpace(body[4:]), src, line)
	}
	return nil
}

func (p *parser) elseBranch(rest, src string, line int) {
	if len(p.stack) == 0 {
		p.warn("line %d: stray %s outside any block; removed", line, src)
		return
	}
	b := p.stack[len(p.stack)-1]
	switch {
	case rest != "":
		p.spoil(b, fmt.Sprintf("line %d: %s: unexpected text after else; block dropped", line, src))
	case b.hasElse:
		p.spoil(b, fmt.Sprintf("line %d: second {{else}} in the block opened on line %d; block dropped", line, b.line))
	}
	b.hasElse = true
}

func (p *parser) close(rest, src string, line int) {
	if len(p.stack) == 0 {
		p.warn("line %d: stray %s outside any block; removed", line, src)
		return
	}
	b := p.stack[len(p.stack)-1]
	if rest != "" {
		p.spoil(b, fmt.Sprintf("line %d: %s: unexpected text after /if; block dropped", line, src))
	}
	p.stack = p.stack[:len(p.stack)-1]
}

// spoil marks a block malformed, keeping the first reason.
func (p *parser) spoil(b *blockNode, reason string) {
	if b.bad == "" {
		b.bad = reason
	}
}

func (p *parser) warn(format string, args ...any) {
	p.warnings = append(p.warnings, fmt.Sprintf(format, args...))
}
