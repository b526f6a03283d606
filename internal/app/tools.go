package app

import (
	"fmt"
	"io"
)

const toolsUsage = `Usage: quiver tools [--json]

Lists every built-in tool with its family, access, whether it is always on,
and its serialised definition size, then the always-paid and widest totals
against their ceilings.
`

// ToolInfo is one row of "quiver tools".
type ToolInfo struct {
	Name            string `json:"name"`
	Family          string `json:"family"`
	Access          string `json:"access"`
	AlwaysOn        bool   `json:"always_on"`
	DefinitionChars int    `json:"definition_chars"`
}

// ToolsOutput is what "quiver tools --json" prints.
type ToolsOutput struct {
	Tools      []ToolInfo `json:"tools"`
	AlwaysPaid Total      `json:"always_paid"`
	Widest     Total      `json:"widest"`
}

// Total is a definitions total against its ceiling.
type Total struct {
	Chars   int `json:"chars"`
	Ceiling int `json:"ceiling"`
}

// CatalogSizes measures the catalog: every tool's definition size, the
// always-paid total, and the widest total (every tool a turn could get).
func CatalogSizes() ToolsOutput {
	out := ToolsOutput{
		AlwaysPaid: Total{Ceiling: AlwaysPaidCeiling},
		Widest:     Total{Ceiling: WidestCeiling},
	}
	for _, t := range NewCatalog(CatalogDeps{}).Tools() {
		s := t.Spec()
		n := t.DeclarationChars()
		out.Tools = append(out.Tools, ToolInfo{Name: s.Name, Family: t.Family(), Access: s.Access.String(), AlwaysOn: s.AlwaysOn, DefinitionChars: n})
		out.Widest.Chars += n
		if s.AlwaysOn {
			out.AlwaysPaid.Chars += n
		}
	}
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
	fmt.Fprintf(w, "%-26s %-11s %-6s %-9s %s\n", "TOOL", "FAMILY", "ACCESS", "ALWAYS-ON", "DEFINITION CHARS")
	for _, t := range o.Tools {
		on := "no"
		if t.AlwaysOn {
			on = "yes"
		}
		fmt.Fprintf(w, "%-26s %-11s %-6s %-9s %d\n", t.Name, t.Family, t.Access, on, t.DefinitionChars)
	}
	fmt.Fprintf(w, "\nalways-paid: %d of %d chars\nwidest:      %d of %d chars\n",
		o.AlwaysPaid.Chars, o.AlwaysPaid.Ceiling, o.Widest.Chars, o.Widest.Ceiling)
}
