package tmpl

import (
	"regexp"
	"slices"
	"testing"
)

// The regular expressions the scanners replace, as the reference of
// FuzzScannersMatchTheExpressions: macroRef finds {key} macro references;
// directive finds {{if …}}, {{else …}} and {{/if …}}, case-insensitively,
// with whitespace inside the braces (also between / and if).
var (
	macroRef  = regexp.MustCompile(`\{([a-z][a-z0-9_]*)\}`)
	directive = regexp.MustCompile(`(?i)\{\{\s*(/\s*if\b[^{}]*?|if\b[^{}]*?|else\b[^{}]*?)\s*\}\}`)
)

// scanAll collects the matches of a scanner as FindAllStringSubmatchIndex
// does: each search starts where the last match ended.
func scanAll(s string, next func(string, int) ([4]int, bool)) [][]int {
	var out [][]int
	for from := 0; ; {
		m, ok := next(s, from)
		if !ok {
			return out
		}
		out = append(out, m[:])
		from = m[1]
	}
}

// FuzzScannersMatchTheExpressions: the hand-written scanners find what
// the regular expressions they replace find, for any text.
func FuzzScannersMatchTheExpressions(f *testing.F) {
	for _, s := range []string{
		"", "{web_search_tool} and {Not_a_macro} {a1_} {x", "{{web_search_tool}}", "{{{a}}}",
		"{{if tool:x}}yes{{else}}no{{/if}}", "{{ IF capability:web_search }}a{{ / If }}", "{{elſe}}", "{{ELSE x}}",
		"{{iffy}}", "{{if}}", "{{if\v}}", "{{if\t\n}}", "{{/ if x }}", "{{if {x}}", "{{if x} }}", "{{if x}",
		"{{ifé}}", "{{else_}}", "{{/iff}}", "{{{{if a}}}}", "{{\fif\f}}", "{{if a}}{{if b}}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := scanAll(s, nextMacroRef), macroRef.FindAllStringSubmatchIndex(s, -1); !equalMatches(got, want) {
			t.Fatalf("macros in %q: scanner %v, expression %v", s, got, want)
		}
		if got, want := scanAll(s, nextDirective), directive.FindAllStringSubmatchIndex(s, -1); !equalMatches(got, want) {
			t.Fatalf("directives in %q: scanner %v, expression %v", s, got, want)
		}
	})
}

func equalMatches(a, b [][]int) bool {
	return slices.EqualFunc(a, b, func(x, y []int) bool { return slices.Equal(x, y) })
}
