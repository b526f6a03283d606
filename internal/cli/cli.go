// Package cli is Quiver's command line, the one cmd/quiver runs: it parses
// the arguments into the options of internal/app's commands, checks every
// flag and argument (and the flags' combinations) before a command runs,
// prints the usage texts, and maps the commands' errors to the exit
// status. It is a package, not package main, so that tests can drive it.
package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/quiverhq/quiver/budget"
	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/internal/app"
	"github.com/quiverhq/quiver/internal/clock"
)

var usage = usageText("quiver")

// Main runs the CLI and returns the process exit status: 0 on success, 1
// when a command ran and failed (or a tool call returned an error result),
// 2 on bad input, which is reported on one line with nothing written.
// The engine's refusals of a request (engine.InputError, a conversation
// of another user) are bad input.
func Main(ctx context.Context, args []string, env app.Env) int {
	env = env.WithDefaults()
	err := usageOf(dispatchCommand(ctx, args, env))
	var ue *app.UsageError
	switch {
	case err == nil, errors.Is(err, errHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(env.Stderr, "quiver: %s\n", ue.Msg)
		return 2
	case errors.Is(err, app.ErrReported):
		return 1
	default:
		fmt.Fprintf(env.Stderr, "quiver: %v\n", err)
		return 1
	}
}

func dispatchCommand(ctx context.Context, args []string, env app.Env) error {
	// A clock moved by a typo would expire every credential at once. The
	// environment is read through env, so a test can check the refusal.
	if _, err := clock.ParseOffset(env.Getenv(clock.OffsetEnv)); err != nil {
		return usagef("%v", err)
	}
	if len(args) == 0 {
		// Bad input is one line on stderr; the usage is one "quiver help" away.
		return usagef(`no command given (run "quiver help")`)
	}
	switch args[0] {
	case "turn":
		return runTurn(ctx, args[1:], env)
	case "call":
		return runCall(ctx, args[1:], env)
	case "agent":
		return runAgent(ctx, args[1:], env)
	case "tools":
		return runTools(args[1:], env)
	case "prompt":
		return runPrompt(args[1:], env)
	case "chat":
		return runChat(ctx, args[1:], env)
	case "transcript":
		return runTranscript(ctx, args[1:], env)
	case "mcp":
		return runMCP(ctx, args[1:], env)
	case "secrets":
		return runSecrets(ctx, args[1:], env)
	case "knowledge":
		return runKnowledge(ctx, args[1:], env)
	case "skills":
		return runSkills(ctx, args[1:], env)
	case "tasks":
		return runTasks(ctx, args[1:], env)
	case "budget":
		return runBudget(ctx, args[1:], env)
	case "migrate":
		return runMigrate(ctx, args[1:], env)
	case "export":
		return runArchive(ctx, args[1:], env, false)
	case "import":
		return runArchive(ctx, args[1:], env, true)
	case "serve":
		return runServe(ctx, args[1:], env)
	case "login-link":
		return runLoginLink(ctx, args[1:], env)
	case "intent":
		return runIntent(ctx, args[1:], env)
	case "triggers":
		return runTriggers(ctx, args[1:], env)
	case "bench":
		return runBench(ctx, args[1:], env)
	case "help", "-h", "--help", "-help":
		fmt.Fprint(env.Stdout, usage)
		return nil
	}
	return usagef("unknown command %q (commands: serve, login-link, chat, transcript, turn, call, agent, tools, prompt, mcp, knowledge, skills, tasks, budget, secrets, migrate, export, import, intent, triggers, bench)", args[0])
}

// usageOf is err, with the engine's refusals of the request as the usage
// errors the CLI reports.
func usageOf(err error) error {
	var ie *engine.InputError
	var over *budget.ExceededError
	switch {
	case errors.As(err, &ie):
		return &app.UsageError{Msg: ie.Msg}
	case errors.As(err, &over):
		return errors.New(over.Error())
	case errors.Is(err, engine.ErrNoConversation):
		return usagef("--conversation: it belongs to another user; give a conversation of your own")
	}
	return err
}
