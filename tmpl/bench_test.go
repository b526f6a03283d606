package tmpl_test

import (
	"strings"
	"testing"

	"github.com/quiverhq/quiver/tmpl"
)

// BenchmarkRenderWorstCase renders templates at the size limit made of
// nothing but directives, on one line and on many: parsing must stay linear
// in the template's size (a quadratic scan took ~200 ms here).
func BenchmarkRenderWorstCase(b *testing.B) {
	for _, tc := range []struct{ name, unit string }{
		{"stray-one-line", "{{/if}}"},
		{"stray-lines", "{{/if}}\n"},
		{"blocks-one-line", "{{if tool:a}}{{/if}}"},
	} {
		src := tmpl.Author(strings.Repeat(tc.unit, tmpl.MaxTemplateBytes/len(tc.unit)))
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := tmpl.Render(src, tmpl.Env{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
