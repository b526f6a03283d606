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
	if _, err := parseArgs(fs, args, toolsUsage, env.Stdout, 0, ""); err != nil {
		return err
	}
	return emit(env.Stdout, asJSON, builtin.CatalogSizes())
}
