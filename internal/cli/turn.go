package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/quiverhq/quiver/intent"
	"github.com/quiverhq/quiver/internal/app"
	"github.com/quiverhq/quiver/tmpl"
)

var (
	turnUsage       = usageText("turn")
	callUsage       = usageText("call")
	chatUsage       = usageText("chat")
	toolsUsage      = usageText("tools")
	promptUsage     = usageText("prompt")
	transcriptUsage = usageText("transcript")
)

func runTurn(ctx context.Context, args []string, env app.Env) error {
	fs := newFlags("turn")
	var o app.TurnOptions
	var alwaysOn string
	fs.BoolVar(&o.Deliberate, "dtm", false, "")
	fs.StringVar(&alwaysOn, "always-on", "", "")
	registerTurn(fs, &o.Turn)
	fs.BoolVar(&o.JSON, "json", false, "")
	pos, err := parse(fs, args, turnUsage, env.Stdout)
	if err != nil {
		return err
	}
	if len(pos) != 1 || strings.TrimSpace(pos[0]) == "" {
		return usagef("turn: give exactly one MESSAGE argument (quote it)")
	}
	o.Message = pos[0]
	if alwaysOn != "" {
		if !o.Deliberate {
			return usagef("turn: --always-on applies only with --dtm")
		}
		if o.GateAlwaysOn, err = intent.ParseAlwaysOn(alwaysOn); err != nil {
			return usagef("turn: --always-on: %v", err)
		}
	}
	return app.Turn(ctx, o, env)
}

func runCall(ctx context.Context, args []string, env app.Env) error {
	fs := newFlags("call")
	var o app.CallOptions
	var callArgs string
	registerTurn(fs, &o.Turn)
	fs.StringVar(&callArgs, "args", "{}", "")
	fs.StringVar(&o.Turn.ConversationID, "conversation", "", "")
	registerData(fs, &o.Data)
	fs.BoolVar(&o.JSON, "json", false, "")
	pos, err := parseArgs(fs, args, callUsage, env.Stdout, 1, "give exactly one TOOL argument")
	if err != nil {
		return err
	}
	o.Tool, o.Args = pos[0], json.RawMessage(callArgs)
	if !json.Valid(o.Args) {
		return usagef("--args: not valid JSON")
	}
	// Without --conversation the call is in the caller's own conversation.
	if flagGiven(fs, "conversation") && strings.TrimSpace(o.Turn.ConversationID) == "" {
		return usagef("--conversation: must not be empty")
	}
	return app.Call(ctx, o, env)
}

func runChat(ctx context.Context, args []string, env app.Env) error {
	fs := newFlags("chat")
	var o app.ChatOptions
	var dtm string
	registerTurn(fs, &o.Turn)
	fs.StringVar(&o.Turn.ConversationID, "conversation", "", "")
	registerData(fs, &o.Data)
	fs.StringVar(&dtm, "dtm", "", "")
	fs.BoolVar(&o.JSON, "json", false, "")
	fs.Func("attach", "", func(v string) error {
		if strings.TrimSpace(v) == "" {
			return errors.New("must not be empty")
		}
		o.Attach = append(o.Attach, v)
		return nil
	})
	pos, err := parse(fs, args, chatUsage, env.Stdout)
	if err != nil {
		return err
	}
	if dtm != "" {
		// "follow" defers to the stored override, so it is no override.
		m, err := intent.ParseUserMode(dtm)
		if err != nil {
			return usagef("--dtm: %v", err)
		}
		if m != intent.UserFollow {
			o.UserMode = m
		}
	}
	switch len(pos) {
	case 0:
	case 1:
		o.Message = pos[0]
		if strings.TrimSpace(o.Message) == "" {
			return usagef("chat: MESSAGE is empty")
		}
	default:
		return usagef("chat: give at most one MESSAGE argument (quote it)")
	}
	o.Ran = func(id string) {
		fmt.Fprintf(env.Stderr, "quiver: conversation %s (to read it: %s)\n", id, transcriptCommand(o, id))
	}
	return app.Chat(ctx, o, env)
}

// transcriptCommand is the quiver transcript command line that prints the
// chat's conversation: with the chat's --user, --org and --data, whose
// the conversation is and where.
func transcriptCommand(o app.ChatOptions, id string) string {
	cmd := []string{"quiver", "transcript"}
	for _, f := range []struct{ flag, value string }{{"--user", o.Turn.Caller.User}, {"--org", o.Turn.Caller.Org}, {"--data", o.Data.Dir}} {
		if f.value != "" {
			cmd = append(cmd, f.flag, shellQuote(f.value))
		}
	}
	return strings.Join(append(cmd, shellQuote(id)), " ")
}

// shellQuote is s as one word of a POSIX shell command: as it is when it
// holds only letters, digits and -_.,/:@+=, else in single quotes.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.,/:@+=") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func runTools(args []string, env app.Env) error {
	fs := newFlags("tools")
	var o app.ToolsOptions
	fs.BoolVar(&o.JSON, "json", false, "")
	if _, err := parseArgs(fs, args, toolsUsage, env.Stdout, 0, ""); err != nil {
		return err
	}
	return app.Tools(o, env)
}

func runPrompt(args []string, env app.Env) error {
	if len(args) == 0 || args[0] != "render" {
		if len(args) > 0 && isHelp(args[0]) {
			fmt.Fprint(env.Stdout, promptUsage)
			return errHelp
		}
		return usagef("prompt: the only subcommand is render (quiver prompt render --help)")
	}
	fs := newFlags("prompt render")
	var caps, tools, families string
	var o app.PromptRenderOptions
	fs.StringVar(&caps, "capabilities", "", "")
	fs.StringVar(&tools, "tools", "", "")
	fs.StringVar(&families, "families", "", "")
	fs.BoolVar(&o.JSON, "json", false, "")
	pos, err := parse(fs, args[1:], promptUsage, env.Stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("prompt render: unexpected argument %q (the template is read from stdin)", pos[0])
	}
	if o.Template, err = readTemplate(env.Stdin); err != nil {
		return err
	}
	o.Capabilities, o.Tools, o.Families = list(caps), list(tools), list(families)
	return app.PromptRender(o, env)
}

// readTemplate reads the template, refusing one over the limit.
func readTemplate(r io.Reader) (string, error) {
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

func runTranscript(ctx context.Context, args []string, env app.Env) error {
	fs := newFlags("transcript")
	var o app.TranscriptOptions
	fs.StringVar(&o.User, "user", "", "")
	fs.StringVar(&o.Org, "org", "", "")
	fs.StringVar(&o.Dir, "data", "", "")
	fs.BoolVar(&o.JSON, "json", false, "")
	pos, err := parseArgs(fs, args, transcriptUsage, env.Stdout, 1, "give exactly one CONVERSATION_ID")
	if err != nil {
		return err
	}
	o.ConversationID = pos[0]
	return app.Transcript(ctx, o, env)
}
