package app

import (
	"cmp"
	"context"
	"fmt"
	"io"

	"github.com/quiverhq/quiver/builtin"
	"github.com/quiverhq/quiver/ids"
	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/mcpclient"
	"github.com/quiverhq/quiver/registry"
)

var agentUsage = usageText("agent")

var agentCheckUsage = usageText("agent-check")

// AgentCheckOutput is what "quiver agent check --json" prints.
type AgentCheckOutput struct {
	File  string `json:"file"`
	Agent string `json:"agent"`
	// Warnings are the allowlist's warnings in allowlist order; empty,
	// never null, when it is clean.
	Warnings []registry.Warning `json:"warnings"`
	// MCPChecked says whether server/tool and server/* entries were
	// checked against the organisation's registrations.
	MCPChecked bool `json:"mcp_checked"`
	// Note says why MCP entries were not checked, when there are some.
	Note string `json:"note,omitempty"`
}

// runAgent dispatches the "quiver agent" subcommands.
func runAgent(ctx context.Context, args []string, env Env) error {
	if _, err := subcommand("agent", args, agentUsage, env.Stdout, "check"); err != nil {
		return err
	}
	return runAgentCheck(ctx, args[1:], env)
}

func runAgentCheck(ctx context.Context, args []string, env Env) error {
	fs := newFlags("agent check")
	var a mcpAdmin
	a.flags(fs)
	var asJSON bool
	fs.BoolVar(&asJSON, "json", false, "")
	pos, err := parseArgs(fs, args, agentCheckUsage, env.Stdout, 1, "give exactly one agent FILE")
	if err != nil {
		return err
	}
	ag, err := config.LoadAgent(pos[0])
	if err != nil {
		return &UsageError{Msg: err.Error()}
	}
	cfg, err := dataFlags{config: a.config}.loadConfig()
	if err != nil {
		return err
	}
	out, err := checkAgent(ctx, ag, a, cfg, env)
	if err != nil {
		return err
	}
	out.File = pos[0]
	if asJSON {
		err = writeJSON(env.Stdout, out)
	} else {
		printAgentCheck(env.Stdout, out, len(ag.Tools))
	}
	if err == nil && len(out.Warnings) > 0 {
		return resultError{}
	}
	return err
}

// checkAgent checks ag's allowlist against the organisation's catalog and
// registered servers when the data folder holds a store, else against the
// deployment's built-in catalog with MCP entries left unchecked.
func checkAgent(ctx context.Context, ag config.Agent, a mcpAdmin, cfg config.Config, env Env) (AgentCheckOutput, error) {
	out := AgentCheckOutput{Agent: ag.Name}
	if _, why := storeDir(cfg, a.data, env); why != "" {
		cat := builtin.NewCatalog(builtin.CatalogDeps{Config: cfg})
		out.Warnings = cat.CheckAgent(ag.Tools, nil, ag.Switches)
		if registry.NamesServers(ag.Tools) {
			out.Note = "MCP entries (server/tool, server/*) could not be checked: " + why
		}
	} else {
		o, err := dataFlags{config: a.config, data: a.data}.openUnder(ctx, cfg, needRuntime, env)
		if err != nil {
			return out, err
		}
		defer o.close()
		org := ids.Slug(a.org, "default")
		v, err := o.rt.orgs.Runtime(ctx, org)
		if err != nil {
			return out, err
		}
		if out.Warnings, err = mcpclient.CheckAgent(ctx, v.Catalog(), o.rt.st, org, ag.Tools, ag.Switches); err != nil {
			return out, err
		}
		out.MCPChecked = true
	}
	if out.Warnings == nil {
		out.Warnings = []registry.Warning{}
	}
	return out, nil
}

// allowlistLine is one allowlist warning as the CLI prints it.
func allowlistLine(w registry.Warning) string { return cmp.Or(w.Field, "tools") + ": " + w.String() }

func printAgentCheck(w io.Writer, o AgentCheckOutput, entries int) {
	for _, wn := range o.Warnings {
		fmt.Fprintf(w, "%s: %s\n", o.File, allowlistLine(wn))
	}
	if len(o.Warnings) == 0 {
		fmt.Fprintf(w, "%s: agent %s: allowlist clean (%d %s)\n", o.File, o.Agent, entries, plural(entries, "entry", "entries"))
	}
	if o.Note != "" {
		fmt.Fprintf(w, "%s: note: %s\n", o.File, o.Note)
	}
}

// plural is one when n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
