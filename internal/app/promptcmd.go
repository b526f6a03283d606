package app

import (
	"fmt"
	"io"

	"github.com/quiverhq/quiver/builtin"
	"github.com/quiverhq/quiver/prompt"
	"github.com/quiverhq/quiver/surface/terminal"
	"github.com/quiverhq/quiver/tmpl"
)

// PromptRenderOptions is what "quiver prompt render" runs with: a
// template rendered as an agent's prompt would be for a turn with these
// capabilities, tools and families.
type PromptRenderOptions struct {
	// Template is the template's source, authored by the person running
	// the command (at most tmpl.MaxTemplateBytes).
	Template string
	// Capabilities, Tools and Families are the turn's, lower-case.
	Capabilities, Tools, Families []string
	// JSON prints the rendering (tmpl.Result) instead of its text, with
	// the warnings in it rather than on stderr.
	JSON bool
}

// PromptRender renders the template; one that does not render is a
// *UsageError.
func PromptRender(o PromptRenderOptions, env Env) error {
	env.defaults()
	res, err := tmpl.Render(tmpl.Author(o.Template), prompt.PreviewEnv(builtin.NewCatalog(builtin.CatalogDeps{}), o.Capabilities, o.Tools, o.Families))
	if err != nil {
		return usagef("prompt render: %v", err)
	}
	if o.JSON {
		return terminal.WriteJSON(env.Stdout, res)
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(env.Stderr, "warning: %s\n", w)
	}
	_, err = io.WriteString(env.Stdout, res.Text)
	return err
}
