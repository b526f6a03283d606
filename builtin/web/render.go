package web

import (
	"fmt"
	"strings"
)

// Render writes an outcome as the model reads it: a numbered list, one
// result per entry (title, then URL and snippet indented, with the date
// when known), and a last line in brackets saying which engine served it
// and why earlier ones did not. Without results it says so.
func Render(q Query, o Outcome) string {
	var sb strings.Builder
	if len(o.Results) == 0 {
		fmt.Fprintf(&sb, "No %s results for %q.", category(q), q.Text)
	}
	for i, r := range o.Results {
		if i > 0 {
			sb.WriteByte('\n')
		}
		fmt.Fprintf(&sb, "%d. %s", i+1, r.Title)
		if r.URL != "" {
			sb.WriteString("\n   " + r.URL)
		}
		snippet := r.Snippet
		if !r.Published.IsZero() {
			snippet = strings.TrimSpace(r.Published.Format("2006-01-02") + " · " + snippet)
			snippet = strings.TrimSuffix(snippet, " ·")
		}
		if snippet != "" {
			sb.WriteString("\n   " + snippet)
		}
	}
	if t := o.Trailer(); t != "" {
		sb.WriteString("\n[" + t + "]")
	}
	return sb.String()
}
