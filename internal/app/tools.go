package app

import (
	"fmt"
	"io"
	"strings"

	"github.com/quiverhq/quiver/builtin"
)

const toolsUsage = `Usage: quiver tools [--json]

Lists every built-in tool with its family, access, whether it is always on,
its serialised definition size and the size of its prompt fragments; then
the always-paid and widest totals of definitions and of fragments against
their ceilings; then every feature switch and what it gates ("no tool yet"
for a switch whose tools do not exist yet: setting it changes nothing);
then each tool's hard limits (characters, counts, bytes).
`

// ToolsOutput is what "quiver tools --json" prints: the built-in
// catalog's sizes.
type ToolsOutput = builtin.Sizes

func runTools(args []string, env Env) error {
	fs := newFlags("tools")
	var asJSON bool
	fs.BoolVar(&asJSON, "json", false, "")
	pos, err := parse(fs, args, toolsUsage, env.Stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("tools: unexpected argument %q", pos[0])
	}
	out := builtin.CatalogSizes()
	if asJSON {
		return writeJSON(env.Stdout, out)
	}
	printTools(env.Stdout, out)
	return nil
}

func printTools(w io.Writer, o ToolsOutput) {
	fmt.Fprintf(w, "%-26s %-11s %-6s %-9s %-16s %s\n", "TOOL", "FAMILY", "ACCESS", "ALWAYS-ON", "DEFINITION CHARS", "FRAGMENT CHARS")
	for _, t := range o.Tools {
		on := "no"
		if t.AlwaysOn {
			on = "yes"
		}
		fmt.Fprintf(w, "%-26s %-11s %-6s %-9s %-16d %d\n", t.Name, t.Family, t.Access, on, t.DefinitionChars, t.FragmentChars)
	}
	fmt.Fprintf(w, "\ndefinitions  always-paid: %d of %d chars\n             widest:      %d of %d chars\n",
		o.AlwaysPaid.Chars, o.AlwaysPaid.Ceiling, o.Widest.Chars, o.Widest.Ceiling)
	f := o.Fragments
	fmt.Fprintf(w, "fragments    always-paid: %d of %d chars\n             widest:      %d of %d chars\n",
		f.AlwaysPaid.Chars, f.AlwaysPaid.Ceiling, f.Widest.Chars, f.Widest.Ceiling)
	fmt.Fprintf(w, "\n%-18s %s\n", "SWITCH", "WHAT IT GATES")
	for _, s := range o.Switches {
		fmt.Fprintf(w, "%-18s %s\n", s.Name, s.Effect)
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
