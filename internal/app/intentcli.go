package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/quiverhq/quiver/builtin"
	dtmconfig "github.com/quiverhq/quiver/deliberate"
	"github.com/quiverhq/quiver/ids"
	"github.com/quiverhq/quiver/intent"
	"github.com/quiverhq/quiver/internal/config"
)

var intentUsage = usageText("intent")

// loadDetector loads the built-in packs and any in intent.packs_dir (see
// intent.LoadDetector): an invalid pack there is bad input naming its
// file and line, and Quiver does not start with it.
func loadDetector(cfg config.Config) (*intent.Detector, error) {
	det, err := intent.LoadDetector(cfg.Intent.PacksDir)
	if de, ok := errors.AsType[*intent.DirError](err); ok {
		return nil, &UsageError{Msg: fmt.Sprintf("intent.packs_dir %s: %v", de.Dir, de.Err)}
	}
	return det, err
}

func runIntent(ctx context.Context, args []string, env Env) error {
	fs := newFlags("intent")
	var server, userMode, alwaysOn string
	var df dataFlags
	var hist listFlag
	var historyTurns int
	var jsonl, asJSON bool
	fs.StringVar(&server, "server", "", "")
	fs.StringVar(&userMode, "user-mode", "follow", "")
	fs.Var(&hist, "history", "")
	fs.IntVar(&historyTurns, "history-turns", -1, "")
	fs.StringVar(&alwaysOn, "always-on", "", "")
	fs.BoolVar(&jsonl, "jsonl", false, "")
	fs.BoolVar(&asJSON, "json", false, "")
	df.register(fs)
	pos, err := parse(fs, args, intentUsage, env.Stdout)
	if err != nil {
		return err
	}
	mode, err := intent.ParseUserMode(userMode)
	if err != nil {
		return usagef("--user-mode: %v", err)
	}
	if historyTurns > intent.MaxHistoryTurns {
		return usagef("--history-turns: use 0–%d", intent.MaxHistoryTurns)
	}
	var gateAlwaysOn bool
	if alwaysOn != "" {
		if gateAlwaysOn, err = intent.ParseAlwaysOn(alwaysOn); err != nil {
			return usagef("--always-on: %v", err)
		}
	}
	switch {
	case jsonl && len(pos) > 0:
		return usagef("intent: --jsonl reads messages from standard input; give no MESSAGE")
	case !jsonl && len(pos) != 1:
		return usagef("intent: give one MESSAGE")
	}
	cfg, err := df.loadConfig()
	if err != nil {
		return err
	}
	det, err := loadDetector(cfg)
	if err != nil {
		return err
	}
	community, err := communityIntent(ctx, server, df.data, cfg, env)
	if err != nil {
		return err
	}
	probe := intent.Probe{Detector: det, Custom: community.Custom, HistoryTurns: community.HistoryTurns, UserMode: mode}
	if historyTurns >= 0 {
		probe.HistoryTurns = historyTurns
	}
	if alwaysOn == "" {
		gateAlwaysOn = community.GateAlwaysOn
	}
	if jsonl {
		return intentLines(env, probe)
	}
	res := probe.Detect(intent.Request{Message: pos[0], History: hist})
	out := intent.Preview(builtin.NewCatalog(builtin.CatalogDeps{}), res, intent.GateOptions{GateAlwaysOn: gateAlwaysOn})
	return emit(env.Stdout, asJSON, out)
}

// communityIntent reads a community's custom triggers, history depth and
// always-on choice; no server means deliberate.DefaultCommunity.
func communityIntent(ctx context.Context, server, data string, cfg config.Config, env Env) (dtmconfig.Community, error) {
	if server == "" {
		return dtmconfig.DefaultCommunity(), nil
	}
	o, err := dataFlags{data: data}.openUnder(ctx, cfg, needStore, env)
	if err != nil {
		return dtmconfig.Community{}, err
	}
	defer o.close()
	return (&dtmconfig.Service{Store: o.st, Now: env.Now}).Community(ctx, ids.Slug(server, "default"))
}

// intentLines answers --jsonl requests in order (intent.AnswerLines). A
// malformed line is bad input and stops the run, naming the line.
func intentLines(env Env, probe intent.Probe) error {
	err := intent.AnswerLines(env.Stdin, env.Stdout, probe.Detect)
	var le *intent.LineError
	if errors.As(err, &le) {
		return usagef("intent --jsonl: line %d: %s", le.Line, firstLine(le.Err.Error()))
	}
	return err
}

var triggersUsage = usageText("triggers")

// triggersFlags are the flags of quiver triggers.
type triggersFlags struct {
	sub, server, target, user, alwaysOn string
	df                                  dataFlags
	history                             int
	// historySet reports that --history was given.
	historySet, asJSON bool
	pos                []string
}

func runTriggers(ctx context.Context, args []string, env Env) error {
	sub, err := subcommand("triggers", args, triggersUsage, env.Stdout, "list", "add", "remove", "mode", "user")
	if err != nil {
		return err
	}
	fs := newFlags("triggers " + sub)
	f := triggersFlags{sub: sub}
	fs.StringVar(&f.server, "server", "", "")
	fs.StringVar(&f.target, "target", "", "")
	fs.StringVar(&f.user, "user", "", "")
	fs.IntVar(&f.history, "history", 0, "")
	fs.StringVar(&f.alwaysOn, "always-on", "", "")
	f.df.register(fs)
	fs.BoolVar(&f.asJSON, "json", false, "")
	pos, err := parse(fs, args[1:], triggersUsage, env.Stdout)
	if err != nil {
		return err
	}
	f.pos = pos
	f.historySet = flagGiven(fs, "history")
	if f.server == "" {
		return usagef("triggers %s: --server is required", sub)
	}
	// Validate everything before the store is opened (the same checks
	// the writes make again, with the same messages).
	if err := f.check(); err != nil {
		return err
	}
	o, err := f.df.open(ctx, needStore, env)
	if err != nil {
		return err
	}
	defer o.close()
	return f.run(ctx, &dtmconfig.Service{Store: o.st, Now: env.Now}, env)
}

// check validates the subcommand's arguments, as the store's writes do.
func (f triggersFlags) check() error {
	switch f.sub {
	case "add", "remove":
		if len(f.pos) != 1 {
			return usagef("triggers %s: give one PHRASE", f.sub)
		}
		if _, err := dtmconfig.NewTrigger(f.target, f.pos[0]); err != nil {
			return usagef("triggers %s: %v", f.sub, err)
		}
	case "mode":
		if len(f.pos) != 1 || (f.pos[0] != "on" && f.pos[0] != "off") {
			return usagef("triggers mode: give on or off")
		}
		if _, err := f.change(); err != nil {
			return err
		}
	case "user":
		if f.user == "" || len(f.pos) != 1 {
			return usagef("triggers user: give --user NAME and one of off, follow, on")
		}
		if _, err := dtmconfig.ParseUserMode(f.pos[0]); err != nil {
			return usagef("triggers user: %v", err)
		}
	case "list":
		if len(f.pos) != 0 {
			return usagef("triggers list: takes no arguments")
		}
	}
	return nil
}

// change is what triggers mode asks for: on or off, and --history and
// --always-on when given.
func (f triggersFlags) change() (dtmconfig.Change, error) {
	c := dtmconfig.Change{Enabled: f.pos[0] == "on"}
	if f.historySet {
		if err := dtmconfig.CheckHistoryTurns(f.history); err != nil {
			return c, usagef("triggers mode: --history: %v", err)
		}
		c.HistoryTurns = &f.history
	}
	if f.alwaysOn != "" {
		gate, err := intent.ParseAlwaysOn(f.alwaysOn)
		if err != nil {
			return c, usagef("triggers mode: --always-on: %v", err)
		}
		c.GateAlwaysOn = &gate
	}
	return c, nil
}

// run carries out the checked subcommand; a write the stored state
// refuses (a trigger that exists, a full target, one that is not there)
// is bad input.
func (f triggersFlags) run(ctx context.Context, cfgs *dtmconfig.Service, env Env) error {
	org := ids.Slug(f.server, "default")
	switch f.sub {
	case "add":
		t, err := cfgs.AddTrigger(ctx, org, f.target, f.pos[0])
		if dtmconfig.Refused(err) {
			return usagef("triggers add: %v", err)
		} else if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "added %s trigger %q\n", t.Target, t.Phrase)
	case "remove":
		t, err := cfgs.RemoveTrigger(ctx, org, f.target, f.pos[0])
		if dtmconfig.Refused(err) {
			return usagef("triggers remove: %v", err)
		} else if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "removed %s trigger %q\n", t.Target, t.Phrase)
	case "mode":
		c, err := f.change()
		if err != nil {
			return err
		}
		s, err := cfgs.Update(ctx, org, c)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "deliberate tool mode %s for %s (%s)\n", f.pos[0], org, s.Summary())
	case "user":
		mode, err := cfgs.SetUserMode(ctx, org, ids.Slug(f.user, "cli"), f.pos[0])
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "deliberate tool mode for %s in %s: %s\n", f.user, org, mode)
	case "list":
		ts, err := cfgs.Triggers(ctx, org)
		if err != nil {
			return err
		}
		return printTriggers(env.Stdout, org, ts, f.asJSON)
	}
	return nil
}

// printTriggers lists a community's custom triggers, for people or as
// JSON [{"family", "phrase"}].
func printTriggers(w io.Writer, org string, ts []dtmconfig.Trigger, asJSON bool) error {
	if asJSON {
		return writeJSON(w, ts)
	}
	if len(ts) == 0 {
		fmt.Fprintf(w, "no custom triggers for %s\n", org)
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FAMILY\tPHRASE")
	for _, t := range ts {
		fmt.Fprintf(tw, "%s\t%s\n", t.Target, t.Phrase)
	}
	return tw.Flush()
}
