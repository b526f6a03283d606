package tmpl_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/tmpl"
)

var (
	macroLike = regexp.MustCompile(`\{[a-z][a-z0-9_]*\}`)
	dirLike   = regexp.MustCompile(`(?i)\{\{\s*(/?if|else)`)
)

// maxGrowth is the most one macro reference can add to the text.
func maxGrowth() int {
	n := 0
	for _, m := range tmpl.KnownMacros() {
		n = max(n, len(m.Prose), len(m.Tool)+2)
	}
	for k, v := range env.Macros {
		n = max(n, len(v)+2, len("the  tool, which is not available right now")+len(k))
	}
	return n
}

func FuzzRender(f *testing.F) {
	for _, s := range []string{
		"Intro\n{{if capability:self_teaching}}\nUse {memory_tool}.\n{{else}}\nNo.\n{{/if}}\nOutro",
		"{{if !tool:x}}{{if tool_family:web_search}}{web_search_tool}{{/if}}{{/if}}",
		"{{if a and b}}x{{/if}} {{else}} {{/if}}",
		"{{if tool:x}}unclosed {pin_tool}",
		`{"json": {"a": 1}} {unknown}`,
		"{{IF Capability:Tool_Use}}\r\n x \r\n{{/IF}}",
		"{{if}}{{else}}{{else}}{{/if}}",
		"{{#if x}}{{/if}}",
	} {
		f.Add(s)
	}
	growth := maxGrowth()
	f.Fuzz(func(t *testing.T, in string) {
		const prefix = "KEEP_PREFIX "
		res, err := tmpl.Render(tmpl.Author(prefix+in), env)
		if err != nil {
			return // size and depth limits
		}
		if !strings.HasPrefix(res.Text, prefix) {
			t.Fatalf("text before any directive was not kept: %q", res.Text)
		}
		refs := len(macroLike.FindAllStringIndex(in, -1))
		if limit := len(prefix) + len(in) + refs*growth; len(res.Text) > limit {
			t.Fatalf("output %d bytes, over input plus expansions %d", len(res.Text), limit)
		}
		if !dirLike.MatchString(in) && refs == 0 && res.Text != prefix+in {
			t.Fatalf("plain text changed: %q -> %q", in, res.Text)
		}
		for _, w := range res.Warnings {
			if strings.Contains(w, "\n") {
				t.Fatalf("multi-line warning %q", w)
			}
		}
	})
}
