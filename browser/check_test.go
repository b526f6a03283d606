package browser

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzDocument: Validate never panics, accepts only what a check may
// render, and an accepted SVG is wrapped without its XML prolog.
func FuzzDocument(f *testing.F) {
	for _, s := range []string{"<p>x</p>", `<?xml version="1.0"?><svg/>`, "<!DOCTYPE svg><svg></svg>", " ", "\xff"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, content string, svg bool) {
		d := Document{Kind: HTML, Content: content}
		if svg {
			d.Kind = SVG
		}
		if err := d.Validate(); err != nil {
			return
		}
		if !utf8.ValidString(content) || len(content) > MaxDocumentBytes || strings.TrimSpace(content) == "" {
			t.Fatalf("accepted %q", content)
		}
		w := wrap(d)
		if !svg && w != content {
			t.Fatal("HTML not rendered as written")
		}
		rest, ok := strings.CutPrefix(w, wrapHead)
		if svg && !ok {
			t.Fatalf("SVG wrapped as %q", w)
		}
		// A complete XML declaration is removed; an unterminated one is
		// left to the HTML parser (a bogus comment).
		if end := strings.Index(rest, ">"); svg && strings.HasPrefix(rest, "<?xml") && end > 0 && rest[end-1] == '?' {
			t.Fatalf("SVG kept its XML declaration: %q", w)
		}
	})
}

func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{{"short", 10, "short"}, {"ééééé", 7, "éé…"}, {"abcdef", 4, "a…"}} {
		if got := truncate(tc.in, tc.n); got != tc.want || len(got) > tc.n {
			t.Errorf("truncate(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}
