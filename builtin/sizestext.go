package builtin

import (
	"fmt"
	"io"
	"strings"
)

// EmbeddingNote is what people are told of the memory tools' embedding
// model wherever they choose it ("quiver tools", the Settings page).
const EmbeddingNote = "Memory tools need an embedding model (embedding_model). The default, local:ngram-512, is built in and works offline, but it is weaker than a real embedding model: it matches shared spelling, not synonyms or translations."

// WriteText writes the sizes for people, as "quiver tools" prints them:
// a line per tool, the totals against their ceilings, what each switch
// gates and every tool's hard limits.
func (o Sizes) WriteText(w io.Writer) {
	fmt.Fprintf(w, "%-26s %-11s %-6s %-9s %-16s %s\n", "TOOL", "FAMILY", "ACCESS", "ALWAYS-ON", "DEFINITION CHARS", "FRAGMENT CHARS")
	for _, t := range o.Tools {
		on := "no"
		if t.AlwaysOn {
			on = "yes"
		}
		fmt.Fprintf(w, "%-26s %-11s %-6s %-9s %-16d %d\n", t.Name, t.Family, t.Access, on, t.DefinitionChars, t.FragmentChars)
	}
	fmt.Fprintf(w, "\n%s\n", EmbeddingNote)
	fmt.Fprintf(w, "\ndefinitions  always-paid: %d of %d chars\n             widest:      %d of %d chars\n",
		o.AlwaysPaid.Chars, o.AlwaysPaid.Ceiling, o.Widest.Chars, o.Widest.Ceiling)
	f := o.Fragments
	fmt.Fprintf(w, "fragments    always-paid: %d of %d chars\n             widest:      %d of %d chars\n",
		f.AlwaysPaid.Chars, f.AlwaysPaid.Ceiling, f.Widest.Chars, f.Widest.Ceiling)
	fmt.Fprintf(w, "\n%-19s %s\n", "SWITCH", "WHAT IT GATES")
	for _, s := range o.Switches {
		fmt.Fprintf(w, "%-19s %s\n", s.Name, s.Effect)
	}
	if others := o.FamilySwitches(); len(others) > 0 {
		fmt.Fprintf(w, "(an optional family's own name is a switch too: %s set off leaves out that family's tools)\n", strings.Join(others, " or "))
	}
	fmt.Fprintf(w, "\n%-26s %s\n", "TOOL", "LIMITS")
	for _, t := range o.Tools {
		var ls []string
		for _, l := range t.Limits {
			ls = append(ls, fmt.Sprintf("%s=%d", l.Name, l.Value))
		}
		if len(ls) > 0 {
			fmt.Fprintf(w, "%-26s %s\n", t.Name, strings.Join(ls, " "))
		}
	}
}
