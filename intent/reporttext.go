package intent

import (
	"fmt"
	"io"
	"strings"
)

// WriteText writes the report for people, as "quiver intent" prints it:
// the families opened, why each tool is declared and the matches.
func (out Report) WriteText(w io.Writer) {
	if len(out.Families) == 0 {
		if len(out.Tools) == 0 {
			fmt.Fprintln(w, "opens nothing: no tool would be declared")
		} else {
			fmt.Fprintf(w, "opens nothing: only the always-on helpers would be declared (%s)\n", strings.Join(out.Tools, ", "))
		}
		return
	}
	fmt.Fprintf(w, "opens: %s\n", strings.Join(out.Families, ", "))
	for _, d := range out.Declared {
		fmt.Fprintf(w, "  %-26s %s\n", d.Name, d.Reason)
	}
	for _, fam := range out.Unbuilt {
		fmt.Fprintf(w, "  (%s opens no tool: none of its tools ships yet)\n", fam)
	}
	fmt.Fprintln(w, "matches:")
	for _, m := range out.Matches {
		lang := ""
		if m.Lang != "" {
			lang = ", " + m.Lang
		}
		fmt.Fprintf(w, "  %s ← %q (%s%s)\n", m.Target, m.Trigger, m.Source, lang)
	}
}
