package cli

import (
	"context"

	"github.com/quiverhq/quiver/internal/app"
)

var knowledgeUsage = usageText("knowledge")

// runKnowledge runs "quiver knowledge add|list|remove|reindex".
func runKnowledge(ctx context.Context, args []string, env app.Env) error {
	sub, err := subcommand("knowledge", args, knowledgeUsage, env.Stdout, "add", "list", "remove", "reindex")
	if err != nil {
		return err
	}
	fs := newFlags("knowledge " + sub)
	var o app.KnowledgeOptions
	registerAdmin(fs, &o.MCPAdmin)
	fs.StringVar(&o.Agent, "agent", "", "")
	fs.BoolVar(&o.JSON, "json", false, "")
	pos, err := parse(fs, args[1:], knowledgeUsage, env.Stdout)
	if err != nil {
		return err
	}
	o.Files = pos
	switch sub {
	case "add", "remove":
		if len(pos) == 0 {
			return usagef("knowledge %s: give at least one FILE", sub)
		}
	default:
		if len(pos) > 0 {
			return usagef("knowledge %s: unexpected argument %q", sub, pos[0])
		}
	}
	switch sub {
	case "add":
		return app.KnowledgeAdd(ctx, o, env)
	case "list":
		return app.KnowledgeList(ctx, o, env)
	case "remove":
		return app.KnowledgeRemove(ctx, o, env)
	}
	return app.KnowledgeReindex(ctx, o, env)
}
