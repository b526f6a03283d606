package cli

import (
	"context"

	"github.com/quiverhq/quiver/internal/app"
)

var skillsUsage = usageText("skills")

// skillOperands is how many operands each skills subcommand takes.
var skillOperands = map[string]int{"add": 1, "list": 0, "remove": 1, "attach": 2, "detach": 2}

// runSkills runs "quiver skills add|list|remove|attach|detach".
func runSkills(ctx context.Context, args []string, env app.Env) error {
	sub, err := subcommand("skills", args, skillsUsage, env.Stdout, "add", "list", "remove", "attach", "detach")
	if err != nil {
		return err
	}
	fs := newFlags("skills " + sub)
	var o app.SkillsOptions
	registerAdmin(fs, &o.MCPAdmin)
	fs.StringVar(&o.Agent, "agent", "", "")
	fs.BoolVar(&o.JSON, "json", false, "")
	pos, err := parse(fs, args[1:], skillsUsage, env.Stdout)
	if err != nil {
		return err
	}
	if want := skillOperands[sub]; len(pos) != want {
		return usagef("skills %s: %d operands given, want %d (see quiver skills --help)", sub, len(pos), want)
	}
	if o.Agent != "" && sub != "list" {
		return usagef("skills %s: --agent is for list; give the agent as an operand", sub)
	}
	o.Args = pos
	switch sub {
	case "add":
		return app.SkillsAdd(ctx, o, env)
	case "list":
		return app.SkillsList(ctx, o, env)
	case "remove":
		return app.SkillsRemove(ctx, o, env)
	case "attach":
		return app.SkillsAttach(ctx, o, env)
	}
	return app.SkillsDetach(ctx, o, env)
}
