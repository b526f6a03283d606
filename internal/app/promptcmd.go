package app

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/quiverhq/quiver/builtin"
	"github.com/quiverhq/quiver/prompt"
	"github.com/quiverhq/quiver/tmpl"
)

var promptUsage = usageText("prompt")

func runPrompt(args []string, env Env) error {
	if len(args) == 0 || args[0] != "render" {
		if len(args) > 0 && isHelp(args[0]) {
			fmt.Fprint(env.Stdout, promptUsage)
			return errHelp
		}
		return usagef("prompt: the only subcommand is render (quiver prompt render --help)")
	}
	fs := newFlags("prompt render")
	var caps, tools, families string
	var asJSON bool
	fs.StringVar(&caps, "capabilities", "", "")
	fs.StringVar(&tools, "tools", "", "")
	fs.StringVar(&families, "families", "", "")
	fs.BoolVar(&asJSON, "json", false, "")
	pos, err := parse(fs, args[1:], promptUsage, env.Stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("prompt render: unexpected argument %q (the template is read from stdin)", pos[0])
	}
	src, err := readTemplate(env.Stdin)
	if err != nil {
		return err
	}
	res, err := tmpl.Render(tmpl.Author(src), prompt.PreviewEnv(builtin.NewCatalog(builtin.CatalogDeps{}), list(caps), list(tools), list(families)))
	if err != nil {
		return usagef("prompt render: %v", err)
	}
	if asJSON {
		return writeJSON(env.Stdout, res)
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(env.Stderr, "warning: %s\n", w)
	}
	_, err = io.WriteString(env.Stdout, res.Text)
	return err
}

func isHelp(s string) bool { return s == "-h" || s == "--help" || s == "-help" || s == "help" }

func readTemplate(r io.Reader) (string, error) {
	if r == nil {
		r = os.Stdin
	}
	b, err := io.ReadAll(io.LimitReader(r, tmpl.MaxTemplateBytes+1))
	if err != nil {
		return "", fmt.Errorf("read template: %w", err)
	}
	if len(b) > tmpl.MaxTemplateBytes {
		return "", usagef("prompt render: template is over the limit of %d bytes", tmpl.MaxTemplateBytes)
	}
	return string(b), nil
}

// list splits a comma-separated flag value, dropping empty items.
func list(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.ToLower(strings.TrimSpace(item)); item != "" {
			out = append(out, item)
		}
	}
	return out
}
