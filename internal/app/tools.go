package app

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/quiverhq/quiver/builtin"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/tool"
)

const toolsUsage = `Usage: quiver tools [--json]

Lists every built-in tool with its family, access, whether it is always on,
its serialised definition size and the size of its prompt fragments; then
the always-paid and widest totals of definitions and of fragments against
their ceilings; then every feature switch and what it gates ("no tool yet"
for a switch whose tools do not exist yet: setting it changes nothing);
then each tool's hard limits (characters, counts, bytes).
`

// ToolInfo is one row of "quiver tools".
type ToolInfo struct {
	Name            string `json:"name"`
	Family          string `json:"family"`
	Access          string `json:"access"`
	AlwaysOn        bool   `json:"always_on"`
	DefinitionChars int    `json:"definition_chars"`
	// FragmentChars is the authored size of the tool's prompt fragments;
	// a fragment several tools share counts on each of them here, and
	// once in the totals.
	FragmentChars int `json:"fragment_chars"`
	// Limits are the tool's hard limits (fetch_url's max_length_max, ...),
	// as its spec declares them; empty when it declares none.
	Limits []tool.Limit `json:"limits"`
}

// ToolsOutput is what "quiver tools --json" prints.
type ToolsOutput struct {
	Tools      []ToolInfo `json:"tools"`
	AlwaysPaid Total      `json:"always_paid"`
	Widest     Total      `json:"widest"`
	// Fragments are the totals of the prompt fragments the always-on tools
	// and every tool bring, each distinct text counted once.
	Fragments FragmentTotals `json:"fragments"`
	// Switches are the feature switches and what each gates.
	Switches []registry.Switch `json:"switches"`
}

// Total is a definitions total against its ceiling.
type Total struct {
	Chars   int `json:"chars"`
	Ceiling int `json:"ceiling"`
}

// FragmentTotals are the prompt fragments' totals against their ceilings,
// in characters of authored text (before macros expand).
type FragmentTotals struct {
	AlwaysPaid Total `json:"always_paid"`
	Widest     Total `json:"widest"`
}

// CatalogSizes measures the catalog: every tool's definition and fragment
// sizes, the always-paid and widest totals of both with their ceilings,
// and what every feature switch gates.
func CatalogSizes() ToolsOutput {
	out := ToolsOutput{
		AlwaysPaid: Total{Ceiling: AlwaysPaidCeiling},
		Widest:     Total{Ceiling: WidestCeiling},
		Fragments: FragmentTotals{
			AlwaysPaid: Total{Ceiling: AlwaysPaidFragmentsCeiling},
			Widest:     Total{Ceiling: WidestFragmentsCeiling},
		},
	}
	cat := builtin.NewCatalog(builtin.CatalogDeps{})
	seen := map[string]bool{}
	for _, t := range cat.Tools() {
		s := t.Spec()
		n := t.DeclarationChars()
		info := ToolInfo{Name: s.Name, Family: t.Family(), Access: s.Access.String(), AlwaysOn: s.AlwaysOn, DefinitionChars: n, Limits: append([]tool.Limit{}, s.Limits...)}
		out.Widest.Chars += n
		if s.AlwaysOn {
			out.AlwaysPaid.Chars += n
		}
		for _, f := range s.Fragments {
			m := utf8.RuneCountInString(f)
			info.FragmentChars += m
			if seen[f] {
				continue
			}
			seen[f] = true
			out.Fragments.Widest.Chars += m
			if s.AlwaysOn {
				out.Fragments.AlwaysPaid.Chars += m
			}
		}
		out.Tools = append(out.Tools, info)
	}
	out.Switches = cat.Switches()
	return out
}

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
	out := CatalogSizes()
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
	named := map[string]bool{}
	for _, s := range o.Switches {
		fmt.Fprintf(w, "%-18s %s\n", s.Name, s.Effect)
		named[s.Family] = true
	}
	var others []string
	for _, t := range o.Tools {
		if !t.AlwaysOn && !named[t.Family] && !slices.Contains(others, t.Family) {
			others = append(others, t.Family)
		}
	}
	if len(others) > 0 {
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
