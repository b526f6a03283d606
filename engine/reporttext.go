package engine

import (
	"fmt"
	"io"
	"strings"

	"github.com/quiverhq/quiver/prompt"
)

// WriteText writes the report for people, as "quiver turn" prints it: the
// system prompt, the context message, the user message, the declared tools
// with their sizes and first sentences, the tools left out with their
// reasons, Deliberate Tool Mode's matches and reasons when it gated the
// turn, and the template's warnings.
func (o Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "agent %s on %s\n\n", o.Agent, o.Model)
	fmt.Fprintf(w, "── system prompt (%d chars, identical for every turn of this agent and toolset)\n%s\n\n", o.Sizes.SystemChars, o.System)
	fmt.Fprintf(w, "── context message (%d chars, per turn)\n%s\n\n", o.Sizes.ContextChars, o.Context)
	fmt.Fprintf(w, "── user message\n%s\n\n", o.Message)
	fmt.Fprintf(w, "── tools: %d declared, %d definition chars (always-paid %d of ceiling %d)\n",
		len(o.Tools), o.Sizes.DefinitionsChars, o.Sizes.AlwaysPaidChars, o.Ceilings.AlwaysPaidChars)
	for _, d := range o.Tools {
		fmt.Fprintf(w, "  %-26s %5d chars  %s\n", d.Name, prompt.DefinitionChars(d), firstSentence(d.Description))
	}
	fmt.Fprintf(w, "\n── left out: %d\n", len(o.Excluded))
	for _, e := range o.Excluded {
		fmt.Fprintf(w, "  %-26s %s\n", e.Name, e.Reason)
	}
	if o.Intent != nil {
		o.writeIntent(w)
	}
	if h := o.History; h != nil {
		fmt.Fprintf(w, "\n── history: %d messages sent, %d left out; about %d of %d tokens (%d kept for the reply)\n", h.Sent, h.Dropped, h.Tokens, h.Window.Tokens, h.Window.Reserve)
		if h.Marker != "" {
			fmt.Fprintf(w, "  %s\n", h.Marker)
		}
	}
	if len(o.Warnings) > 0 {
		fmt.Fprintf(w, "\n── template warnings: %d\n", len(o.Warnings))
		for _, m := range o.Warnings {
			fmt.Fprintf(w, "  %s\n", m)
		}
	}
}

// writeIntent writes what Deliberate Tool Mode matched and why it
// declared each tool.
func (o Report) writeIntent(w io.Writer) {
	fmt.Fprintf(w, "\n── deliberate tool mode: %d matches\n", len(o.Intent))
	for _, m := range o.Intent {
		fmt.Fprintf(w, "  %-26s %q (%s)\n", m.Target, m.Trigger, m.Source)
	}
	fmt.Fprintf(w, "\n── deliberate tool mode: why each tool is declared\n")
	if len(o.Declared) == 0 {
		fmt.Fprintln(w, "  (no tool is declared)")
	}
	for _, d := range o.Declared {
		fmt.Fprintf(w, "  %-26s %s\n", d.Name, d.Reason)
	}
}

// firstSentence is the first sentence of s's first line, at most 90
// characters.
func firstSentence(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	if r := []rune(s); len(r) > 90 {
		s = string(r[:89]) + "…"
	}
	return s
}
