package app

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/quiverhq/quiver/dispatch"
	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/ids"
	"github.com/quiverhq/quiver/surface/terminal"
	"github.com/quiverhq/quiver/tool"
)

// CallOutput is what "quiver call --json" prints.
type CallOutput = engine.CallReport

// CallOptions is what "quiver call" runs with.
type CallOptions struct {
	// Turn is who the call is for and with which agent. An empty
	// ConversationID is the caller's own CLI conversation (one per user).
	Turn TurnInput
	// Data is the configuration and the data folder.
	Data Data
	// Tool is the name of the tool called.
	Tool string
	// Args is the call's arguments, a JSON object.
	Args json.RawMessage
	// JSON prints a CallOutput instead of the result's text.
	JSON bool
}

// defaultCallConversation is the conversation of a call without
// --conversation: one per caller, so that callers who give none do not
// share (and so cannot read) one another's stored results.
func defaultCallConversation(user string) string { return "cli-" + ids.Slug(user, "cli") }

// Call runs one tool as the agent's turn would offer it, recording the
// turn, and prints its result. The conversation is claimed for the
// caller first (another user's is a *UsageError); an error result is
// printed and returned as ErrReported.
func Call(ctx context.Context, o CallOptions, env Env) error {
	env.defaults()
	if o.Turn.ConversationID == "" {
		o.Turn.ConversationID = defaultCallConversation(o.Turn.Caller.User)
	}
	rt, eng, sess, err := openTurnSession(ctx, o.Turn, fmt.Sprintf("cli-%d", env.Now().UnixNano()), o.Data.flags(), env)
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
	res, err := eng.Call(ctx, sess, dispatch.Call{ID: "cli", Name: o.Tool, Args: o.Args})
	if err != nil {
		return err
	}
	// The model's refusal names only the tool; the person at the CLI runs
	// the deployment and is told why, on stderr.
	if why := sess.Toolset.ReasonFor(o.Tool); why != "" {
		fmt.Fprintf(env.Stderr, "quiver: %s is left out of this turn: %s\n", o.Tool, terminal.Printable(why))
	}
	return printCall(env, o.JSON, res)
}

// printCall prints the result; an error result is ErrReported.
func printCall(env Env, asJSON bool, res tool.Result) error {
	if err := terminal.Emit(env.Stdout, asJSON, engine.NewCallReport(res)); err != nil {
		return err
	}
	if res.IsError {
		return ErrReported
	}
	return nil
}
