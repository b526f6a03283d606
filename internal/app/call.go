package app

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strings"
	"unicode"

	"github.com/quiverhq/quiver/dispatch"
	"github.com/quiverhq/quiver/ids"
	"github.com/quiverhq/quiver/tool"
)

var callUsage = usageText("call")

// CallOutput is what "quiver call --json" prints.
type CallOutput struct {
	IsError bool        `json:"is_error"`
	Content string      `json:"content"`
	Ref     string      `json:"ref"`
	Effect  tool.Effect `json:"effect"`
}

type callFlags struct {
	in       TurnInput
	df       dataFlags
	args     string
	asJSON   bool
	toolName string
}

func parseCall(args []string, env Env) (callFlags, error) {
	fs := newFlags("call")
	var c callFlags
	c.in.register(fs)
	fs.StringVar(&c.args, "args", "{}", "")
	fs.StringVar(&c.in.ConversationID, "conversation", "", "")
	c.df.register(fs)
	fs.BoolVar(&c.asJSON, "json", false, "")
	pos, err := parseArgs(fs, args, callUsage, env.Stdout, 1, "give exactly one TOOL argument")
	if err != nil {
		return c, err
	}
	c.toolName = pos[0]
	if !json.Valid([]byte(c.args)) {
		return c, usagef("--args: not valid JSON")
	}
	if !flagGiven(fs, "conversation") {
		c.in.ConversationID = defaultCallConversation(c.in.Caller.User)
	}
	if strings.TrimSpace(c.in.ConversationID) == "" {
		return c, usagef("--conversation: must not be empty")
	}
	return c, nil
}

// defaultCallConversation is the conversation of a call without
// --conversation: one per caller, so that callers who give none do not
// share (and so cannot read) one another's stored results.
func defaultCallConversation(user string) string { return "cli-" + ids.Slug(user, "cli") }

// flagGiven reports whether the command line set the flag.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

func runCall(ctx context.Context, args []string, env Env) error {
	c, err := parseCall(args, env)
	if err != nil {
		return err
	}
	rt, eng, sess, err := openTurnSession(ctx, c.in, fmt.Sprintf("cli-%d", env.Now().UnixNano()), c.df, env)
	if err != nil {
		return err
	}
	defer rt.close()
	st := rt.st
	// The session's request: the agent file is read once.
	if err := claimConversation(ctx, st, sess.Request(), env.Now()); err != nil {
		return err
	}
	if err := st.PutTurn(ctx, sess.Turn("", "")); err != nil {
		return fmt.Errorf("record turn: %w", err)
	}
	res, err := eng.Call(ctx, sess, dispatch.Call{ID: "cli", Name: c.toolName, Args: json.RawMessage(c.args)})
	if err != nil {
		return err
	}
	// The model's refusal names only the tool; the person at the CLI runs
	// the deployment and is told why, on stderr.
	if why := sess.Toolset.ReasonFor(c.toolName); why != "" {
		fmt.Fprintf(env.Stderr, "quiver: %s is left out of this turn: %s\n", c.toolName, printableReason(why))
	}
	return printCall(env, c.asJSON, res)
}

// printableReason keeps a reason (which may quote an MCP server) to one
// line of printable text.
func printableReason(s string) string {
	return strings.Map(func(r rune) rune {
		if !unicode.IsPrint(r) {
			return ' '
		}
		return r
	}, s)
}

func printCall(env Env, asJSON bool, res tool.Result) error {
	if asJSON {
		if err := writeJSON(env.Stdout, CallOutput{IsError: res.IsError, Content: res.Content, Ref: res.Ref, Effect: res.Effect}); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(env.Stdout, res.Content)
		if res.Effect.Pause != nil {
			fmt.Fprintf(env.Stdout, "\n[pause] %s\n", res.Effect.Pause.Question)
		}
		for _, a := range res.Effect.NextActions {
			fmt.Fprintf(env.Stdout, "[suggest] %s\n", a)
		}
	}
	if res.IsError {
		return resultError{}
	}
	return nil
}
