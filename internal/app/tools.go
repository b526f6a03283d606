package app

import (
	"github.com/quiverhq/quiver/builtin"
	"github.com/quiverhq/quiver/surface/terminal"
)

// ToolsOutput is what "quiver tools --json" prints: the built-in
// catalog's sizes.
type ToolsOutput = builtin.Sizes

// ToolsOptions is what "quiver tools" runs with.
type ToolsOptions struct {
	// JSON prints a ToolsOutput instead of its text form.
	JSON bool
}

// Tools prints the built-in catalog's tools, families and sizes.
func Tools(o ToolsOptions, env Env) error {
	env.defaults()
	return terminal.Emit(env.Stdout, o.JSON, builtin.CatalogSizes())
}
