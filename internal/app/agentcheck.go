package app

import (
	"context"

	"github.com/quiverhq/quiver/builtin"
	"github.com/quiverhq/quiver/ids"
	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/mcpclient"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/surface/terminal"
)

// AgentCheckOutput is what "quiver agent check --json" prints.
type AgentCheckOutput = registry.AgentCheck

// AgentCheckOptions is what "quiver agent check" runs with.
type AgentCheckOptions struct {
	// File is the agent file checked.
	File string
	// MCPAdmin is whose registered servers server/tool entries are
	// checked against, when the data folder holds a store.
	MCPAdmin
	// JSON prints an AgentCheckOutput instead of lines of text.
	JSON bool
}

// AgentCheck checks an agent file's allowlist and prints the warnings;
// warnings are ErrReported, an unreadable or invalid file a *UsageError.
// It creates no data folder.
func AgentCheck(ctx context.Context, o AgentCheckOptions, env Env) error {
	env.defaults()
	ag, err := config.LoadAgent(o.File)
	if err != nil {
		return &UsageError{Msg: err.Error()}
	}
	cfg, err := dataFlags{config: o.Data.Config}.loadConfig()
	if err != nil {
		return err
	}
	out, err := checkAgent(ctx, ag, o.MCPAdmin, cfg, env)
	if err != nil {
		return err
	}
	out.File, out.Entries = o.File, len(ag.Tools)
	err = terminal.Emit(env.Stdout, o.JSON, out)
	if err == nil && len(out.Warnings) > 0 {
		return ErrReported
	}
	return err
}

// checkAgent checks ag's allowlist against the organisation's catalog and
// registered servers when the data folder holds a store, else against the
// deployment's built-in catalog with MCP entries left unchecked.
func checkAgent(ctx context.Context, ag config.Agent, a MCPAdmin, cfg config.Config, env Env) (AgentCheckOutput, error) {
	out := AgentCheckOutput{Agent: ag.Name}
	if _, why := storeDir(cfg, a.Data.Dir, env); why != "" {
		cat := builtin.NewCatalog(builtin.CatalogDeps{Config: cfg})
		out.Warnings = cat.CheckAgent(ag.Tools, nil, ag.Switches)
		if registry.NamesServers(ag.Tools) {
			out.Note = "MCP entries (server/tool, server/*) could not be checked: " + why
		}
	} else {
		o, err := a.Data.flags().openUnder(ctx, cfg, needRuntime, env)
		if err != nil {
			return out, err
		}
		defer o.close()
		org := ids.Slug(a.Org, "default")
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
