package app

import (
	"github.com/quiverhq/quiver/builtin"
)

var toolsUsage = usageText("tools")

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
	out.WriteText(env.Stdout)
	return nil
}
