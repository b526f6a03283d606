package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/quiverhq/quiver/builtin"
	dtmconfig "github.com/quiverhq/quiver/deliberate"
	"github.com/quiverhq/quiver/ids"
	"github.com/quiverhq/quiver/intent"
	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/llm/providers"
	"github.com/quiverhq/quiver/surface/terminal"
)

// loadDetector loads the built-in packs and any in intent.packs_dir (see
// intent.LoadDetector), with the learned stage beside them unless
// intent.classifier is off: an invalid pack there is bad input naming
// its file and line, and Quiver does not start with it.
func loadDetector(cfg config.Config) (*intent.Detector, error) {
	det, err := intent.LoadDetector(cfg.Intent.PacksDir)
	if de, ok := errors.AsType[*intent.DirError](err); ok {
		return nil, &UsageError{Msg: fmt.Sprintf("intent.packs_dir %s: %v", de.Dir, de.Err)}
	}
	if err != nil || !cfg.Intent.ClassifierOn() {
		return det, err
	}
	c, err := intent.BuiltinClassifier()
	if err != nil {
		return nil, fmt.Errorf("deliberate tool mode classifier: %w", err)
	}
	return det.WithClassifier(c, cfg.Intent.ClassifierShift), nil
}

// IntentOptions is what "quiver intent" runs with: Deliberate Tool
// Mode's detection of one message (or of Env.Stdin's lines), as a
// community's turn would see it.
type IntentOptions struct {
	// Message is the message detected; JSONL reads requests from
	// Env.Stdin instead, one JSON object a line (intent.AnswerLines).
	Message string
	JSONL   bool
	// History is the earlier user messages, oldest first.
	History []string
	// Server is the community whose custom triggers, history depth and
	// always-on choice apply; "" means deliberate.DefaultCommunity.
	Server string
	// UserMode is the user's override (intent.ParseUserMode).
	UserMode string
	// HistoryTurns and GateAlwaysOn, when set, replace the community's.
	HistoryTurns *int
	GateAlwaysOn *bool
	// Data is the configuration and the data folder (read only with
	// Server).
	Data Data
	// JSON prints the preview (intent.Report) instead of its text form.
	JSON bool
}

// Intent prints which families a message opens and why, and what the
// turn would declare. An invalid pack in intent.packs_dir, or a
// malformed JSONL line, is a *UsageError.
func Intent(ctx context.Context, o IntentOptions, env Env) error {
	env.defaults()
	df := o.Data.flags()
	cfg, err := df.loadConfig()
	if err != nil {
		return err
	}
	det, err := loadDetector(cfg)
	if err != nil {
		return err
	}
	community, err := communityIntent(ctx, o.Server, df.data, cfg, env)
	if err != nil {
		return err
	}
	probe := intent.Probe{Detector: det, Custom: community.Custom, HistoryTurns: community.HistoryTurns, UserMode: o.UserMode, Shift: community.ClassifierShift}
	if o.HistoryTurns != nil {
		probe.HistoryTurns = *o.HistoryTurns
	}
	gateAlwaysOn := community.GateAlwaysOn
	if o.GateAlwaysOn != nil {
		gateAlwaysOn = *o.GateAlwaysOn
	}
	detect, err := withSemantic(ctx, cfg, probe, env)
	if err != nil {
		return err
	}
	if o.JSONL {
		return intentLines(env, detect)
	}
	res := detect(intent.Request{Message: o.Message, History: o.History})
	out := intent.Preview(builtin.NewCatalog(builtin.CatalogDeps{}), res, intent.GateOptions{GateAlwaysOn: gateAlwaysOn})
	return terminal.Emit(env.Stdout, o.JSON, out)
}

// cliSemanticTimeout is how long `quiver intent` waits for the semantic
// stage: a run embeds the exemplars before its first message, which a
// turn does not wait for.
const cliSemanticTimeout = time.Minute

// withSemantic is probe's detection followed, when intent.semantic is
// on and the configuration names an embedding model, by the semantic
// stage under that model (the deployment's: a community's settings may
// name another). A message the stage cannot judge (the model refuses,
// or is late) keeps the probe's answer, with a warning on stderr.
func withSemantic(ctx context.Context, cfg config.Config, probe intent.Probe, env Env) (func(intent.Request) intent.Result, error) {
	ref := cfg.EmbeddingRef()
	if !cfg.Intent.SemanticOn() || ref == "" || probe.UserMode == intent.UserOff {
		return probe.Detect, nil
	}
	xs, err := intent.BuiltinExemplars()
	if err != nil {
		return nil, err
	}
	sem, err := intent.NewSemantic(xs, intent.SemanticOptions{Timeout: cliSemanticTimeout})
	if err != nil {
		return nil, err
	}
	ms := models{providers.Shared{Getenv: env.Getenv, Probe: &http.Client{}, Logger: env.Logger}}
	em, err := ms.set(cfg).OpenEmbedder(ctx, ref, 0)
	if ce, ok := errors.AsType[*providers.ConnectError](err); ok {
		return nil, usagef("intent.semantic: embedding model: %s", ce.Msg)
	} else if err != nil {
		return nil, err
	}
	return func(r intent.Request) intent.Result {
		res := probe.Detect(r)
		m, err := sem.Match(ctx, em, r.Message, res)
		if err != nil {
			fmt.Fprintf(env.Stderr, "quiver: warning: semantic stage skipped: %v\n", err)
			return res
		}
		return res.With(m...)
	}, nil
}

// communityIntent reads a community's custom triggers, history depth,
// always-on choice and classifier shift; no server means deliberate.DefaultCommunity.
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
func intentLines(env Env, detect func(intent.Request) intent.Result) error {
	err := intent.AnswerLines(env.Stdin, env.Stdout, detect)
	var le *intent.LineError
	if errors.As(err, &le) {
		msg, _, _ := strings.Cut(le.Err.Error(), "\n")
		return usagef("intent --jsonl: line %d: %s", le.Line, msg)
	}
	return err
}

// TriggersOptions is what "quiver triggers" runs with: a community's
// Deliberate Tool Mode configuration, read or changed.
type TriggersOptions struct {
	// Action is list, add, remove, mode or user.
	Action string
	// Server is the community.
	Server string
	// Target is the family the trigger added or removed opens, Phrase
	// its phrase (deliberate.NewTrigger).
	Target, Phrase string
	// Change is what mode sets.
	Change dtmconfig.Change
	// User and UserMode are whose override user sets, and to what: off,
	// follow or on.
	User, UserMode string
	// Data is the configuration and the data folder.
	Data Data
	// JSON makes list print [{"family", "phrase"}] instead of a table.
	JSON bool
}

// Triggers carries out the action. Everything is validated before the
// store is opened (the same checks the writes make again, with the same
// messages); a write the stored state refuses (a trigger that exists, a
// full target, one that is not there) is a *UsageError too.
func Triggers(ctx context.Context, o TriggersOptions, env Env) error {
	env.defaults()
	if err := o.check(); err != nil {
		return err
	}
	op, err := o.Data.flags().open(ctx, needStore, env)
	if err != nil {
		return err
	}
	defer op.close()
	return o.run(ctx, &dtmconfig.Service{Store: op.st, Now: env.Now}, env)
}

// check validates the action, and its trigger or user mode as the
// store's writes do.
func (o TriggersOptions) check() error {
	switch o.Action {
	case "add", "remove":
		if _, err := dtmconfig.NewTrigger(o.Target, o.Phrase); err != nil {
			return usagef("triggers %s: %v", o.Action, err)
		}
	case "user":
		if _, err := dtmconfig.ParseUserMode(o.UserMode); err != nil {
			return usagef("triggers user: %v", err)
		}
	case "list", "mode":
	default:
		return usagef("triggers: unknown action %q (list, add, remove, mode, user)", o.Action)
	}
	return nil
}

// run carries out the checked subcommand; a write the stored state
// refuses (a trigger that exists, a full target, one that is not there)
// is bad input.
func (o TriggersOptions) run(ctx context.Context, cfgs *dtmconfig.Service, env Env) error {
	org := ids.Slug(o.Server, "default")
	switch o.Action {
	case "add":
		t, err := cfgs.AddTrigger(ctx, org, o.Target, o.Phrase)
		if dtmconfig.Refused(err) {
			return usagef("triggers add: %v", err)
		} else if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "added %s trigger %q\n", t.Target, t.Phrase)
	case "remove":
		t, err := cfgs.RemoveTrigger(ctx, org, o.Target, o.Phrase)
		if dtmconfig.Refused(err) {
			return usagef("triggers remove: %v", err)
		} else if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "removed %s trigger %q\n", t.Target, t.Phrase)
	case "mode":
		s, err := cfgs.Update(ctx, org, o.Change)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "deliberate tool mode %s for %s (%s)\n", onOff(o.Change.Enabled), org, s.Summary())
	case "user":
		mode, err := cfgs.SetUserMode(ctx, org, ids.Slug(o.User, "cli"), o.UserMode)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "deliberate tool mode for %s in %s: %s\n", o.User, org, mode)
	case "list":
		ts, err := cfgs.Triggers(ctx, org)
		if err != nil {
			return err
		}
		if o.JSON {
			return terminal.WriteJSON(env.Stdout, ts)
		}
		return dtmconfig.WriteTriggers(env.Stdout, org, ts)
	}
	return nil
}

// onOff is "on" or "off".
func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}
