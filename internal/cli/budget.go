package cli

import (
	"context"

	"github.com/quiverhq/quiver/internal/app"
)

var budgetUsage = usageText("budget")

// runBudget runs "quiver budget show|set|clear".
func runBudget(ctx context.Context, args []string, env app.Env) error {
	sub, err := subcommand("budget", args, budgetUsage, env.Stdout, "show", "set", "clear")
	if err != nil {
		return err
	}
	fs := newFlags("budget " + sub)
	var o app.BudgetOptions
	registerAdmin(fs, &o.MCPAdmin)
	fs.StringVar(&o.User, "user", "", "")
	fs.BoolVar(&o.Default, "default", false, "")
	fs.StringVar(&o.Tokens, "tokens", "", "")
	fs.StringVar(&o.Cost, "cost", "", "")
	fs.BoolVar(&o.JSON, "json", false, "")
	pos, err := parse(fs, args[1:], budgetUsage, env.Stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("budget %s: unexpected argument %q", sub, pos[0])
	}
	switch sub {
	case "show":
		return app.BudgetShow(ctx, o, env)
	case "set":
		return app.BudgetSet(ctx, o, env)
	}
	return app.BudgetClear(ctx, o, env)
}
