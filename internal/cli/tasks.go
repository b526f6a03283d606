package cli

import (
	"context"

	"github.com/quiverhq/quiver/internal/app"
)

var tasksUsage = usageText("tasks")

// runTasks runs "quiver tasks list|show|pause|resume|cancel".
func runTasks(ctx context.Context, args []string, env app.Env) error {
	sub, err := subcommand("tasks", args, tasksUsage, env.Stdout, "list", "show", "pause", "resume", "cancel")
	if err != nil {
		return err
	}
	fs := newFlags("tasks " + sub)
	var o app.TasksOptions
	registerAdmin(fs, &o.MCPAdmin)
	fs.StringVar(&o.User, "user", "", "")
	fs.BoolVar(&o.JSON, "json", false, "")
	pos, err := parse(fs, args[1:], tasksUsage, env.Stdout)
	if err != nil {
		return err
	}
	want := 1
	if sub == "list" {
		want = 0
	}
	if len(pos) != want {
		return usagef("tasks %s: %d operands given, want %d (see quiver tasks --help)", sub, len(pos), want)
	}
	if o.User != "" && sub != "list" {
		return usagef("tasks %s: --user is for list", sub)
	}
	if len(pos) == 1 {
		o.ID = pos[0]
	}
	switch sub {
	case "list":
		return app.TasksList(ctx, o, env)
	case "show":
		return app.TasksShow(ctx, o, env)
	}
	return app.TasksChange(ctx, sub, o, env)
}
