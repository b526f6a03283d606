package app

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/quiverhq/quiver/builtin"
	"github.com/quiverhq/quiver/intent"
	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/turn"
)

const intentUsage = `Usage: quiver intent [flags] MESSAGE
       quiver intent --jsonl [flags] < REQUESTS

Shows what Deliberate Tool Mode opens for a message: the families (targets),
the tools a turn would declare (the always-on helpers first, unless gated,
then the families' tools) with why each is declared, and the matches that
opened them. With --server, that community's custom triggers, history depth
and always-on choice apply.

Flags:
  --server ID        community (organisation) whose custom triggers apply
  --user-mode MODE   off, follow (default) or on; with off nothing opens
  --history TEXT     an earlier user message, oldest first (repeatable)
  --history-turns N  how many earlier user messages are re-scanned (0–10,
                     default the community's, else 4)
  --always-on MODE   keep declares the always-on helpers on every turn; gate
                     declares calculate and read_tool_result only when their
                     family opens, the other three never (default the
                     community's, else keep)
  --jsonl            read {"id", "message", "history": [...]} objects, one per
                     line, and write {"id", "families": [...]} lines, in order
  --json             print {"families", "tools", "declared", "matches"}
  --data DIR         data folder holding the community's triggers
  --config FILE      deployment configuration (intent.packs_dir)
`

// IntentOutput is what "quiver intent --json" prints.
type IntentOutput struct {
	Families []string `json:"families"`
	// Tools are the tools Quiver ships that a turn would declare, in
	// declaration order: the always-on helpers (unless gated), then each
	// open family's tools. A family's tools not built yet are not listed.
	Tools []string `json:"tools"`
	// Declared says why each of Tools is declared.
	Declared []intent.Declared `json:"declared"`
	// Unbuilt are the open families none of whose tools Quiver ships yet
	// (apps, an organisation's MCP tools, is never listed).
	Unbuilt []string       `json:"unbuilt"`
	Matches []intent.Match `json:"matches"`
}

type stringsFlag []string

func (s *stringsFlag) String() string     { return strings.Join(*s, ",") }
func (s *stringsFlag) Set(v string) error { *s = append(*s, v); return nil }

// loadDetector loads the built-in packs and any in intent.packs_dir,
// validating every entry: an invalid pack is an error naming its file and
// line, and Quiver does not start with it.
func loadDetector(cfg config.Config) (*intent.Detector, error) {
	packs, err := intent.BuiltinPacks()
	if err != nil {
		return nil, fmt.Errorf("intent packs: %w", err)
	}
	if cfg.Intent.PacksDir != "" {
		more, err := intent.LoadPacks(os.DirFS(cfg.Intent.PacksDir), ".")
		if err != nil {
			return nil, &UsageError{Msg: fmt.Sprintf("intent.packs_dir %s: %v", cfg.Intent.PacksDir, err)}
		}
		packs = append(packs, more...)
	}
	return intent.New(packs), nil
}

func runIntent(ctx context.Context, args []string, env Env) error {
	fs := newFlags("intent")
	var server, userMode, alwaysOn, data, cfgPath string
	var hist stringsFlag
	var historyTurns int
	var jsonl, asJSON bool
	fs.StringVar(&server, "server", "", "")
	fs.StringVar(&userMode, "user-mode", "follow", "")
	fs.Var(&hist, "history", "")
	fs.IntVar(&historyTurns, "history-turns", -1, "")
	fs.StringVar(&alwaysOn, "always-on", "", "")
	fs.BoolVar(&jsonl, "jsonl", false, "")
	fs.BoolVar(&asJSON, "json", false, "")
	fs.StringVar(&data, "data", "", "")
	fs.StringVar(&cfgPath, "config", "", "")
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
	cfg, err := config.LoadConfig(cfgPath)
	if err != nil {
		return &UsageError{Msg: err.Error()}
	}
	det, err := loadDetector(cfg)
	if err != nil {
		return err
	}
	community, err := communityIntent(ctx, server, data, cfg, env)
	if err != nil {
		return err
	}
	custom, depth := community.custom, community.depth
	if historyTurns >= 0 {
		depth = historyTurns
	}
	if alwaysOn == "" {
		gateAlwaysOn = community.gateAlwaysOn
	}
	detect := func(msg string, history []string) intent.Result {
		if mode == intent.UserOff {
			return intent.Result{}
		}
		in := intent.Input{Text: msg, HistoryTurns: depth, Custom: custom}
		for _, h := range history {
			in.History = append(in.History, intent.Message{Role: intent.RoleUser, Text: h})
		}
		return det.Detect(in)
	}
	if jsonl {
		return intentLines(env, detect)
	}
	res := detect(pos[0], hist)
	out := intentOutput(res, intent.GateOptions{GateAlwaysOn: gateAlwaysOn})
	if asJSON {
		return writeJSON(env.Stdout, out)
	}
	printIntent(env.Stdout, out)
	return nil
}

// intentOutput lays out a detection as the tools a turn would declare
// under o, with the rule that declares each: the real gate over Quiver's
// shipped tools, every optional family allowed, so the order and reasons
// are those of a turn (the always-on helpers first unless o gates them,
// then each open family's tools in the order the families opened).
func intentOutput(res intent.Result, o intent.GateOptions) IntentOutput {
	cat := builtin.NewCatalog(builtin.CatalogDeps{})
	allow := []string{}
	for _, t := range cat.Tools() {
		if !slices.Contains(allow, t.Family()) {
			allow = append(allow, t.Family())
		}
	}
	ts := cat.Select(turn.Facts{
		Agent: turn.Agent{Allow: allow},
		Model: turn.Model{Caps: turn.Capabilities{Tools: true}},
	})
	gated := intent.Gate(ts, cat, res.Targets, o)
	out := IntentOutput{
		Families: nonNil(res.Targets), Matches: res.Matches,
		Tools: gated.Names(), Declared: intent.Explain(gated, res, res.Targets, o),
		Unbuilt: []string{},
	}
	for _, fam := range res.Targets {
		if fam != intent.Apps && !slices.ContainsFunc(intent.TargetTools(fam), func(n string) bool { _, ok := cat.Lookup(n); return ok }) {
			out.Unbuilt = append(out.Unbuilt, fam)
		}
	}
	if out.Matches == nil {
		out.Matches = []intent.Match{}
	}
	return out
}

// printIntent prints what quiver intent found, for people.
func printIntent(w io.Writer, out IntentOutput) {
	if len(out.Families) == 0 {
		if len(out.Tools) == 0 {
			fmt.Fprintln(w, "opens nothing: no tool would be declared")
		} else {
			fmt.Fprintf(w, "opens nothing: only the always-on helpers would be declared (%s)\n", strings.Join(out.Tools, ", "))
		}
		return
	}
	fmt.Fprintf(w, "opens: %s\n", strings.Join(out.Families, ", "))
	for _, d := range out.Declared {
		fmt.Fprintf(w, "  %-26s %s\n", d.Name, d.Reason)
	}
	for _, fam := range out.Unbuilt {
		fmt.Fprintf(w, "  (%s opens no tool: none of its tools ships yet)\n", fam)
	}
	fmt.Fprintln(w, "matches:")
	for _, m := range out.Matches {
		fmt.Fprintf(w, "  %s ← %q (%s%s)\n", m.Target, m.Trigger, m.Source, langSuffix(m.Lang))
	}
}

func langSuffix(lang string) string {
	if lang == "" {
		return ""
	}
	return ", " + lang
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func dedupe(s []string) []string {
	var out []string
	for _, x := range s {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// community is what quiver intent reads of a community's settings.
type community struct {
	custom       *intent.Custom
	depth        int
	gateAlwaysOn bool
}

// communityIntent reads a community's custom triggers, history depth and
// always-on choice; no server means none, the default depth, and the
// helpers kept.
func communityIntent(ctx context.Context, server, data string, cfg config.Config, env Env) (community, error) {
	if server == "" {
		return community{depth: intent.DefaultHistoryTurns}, nil
	}
	dir, err := dataDir(data, env)
	if err != nil {
		return community{}, err
	}
	st, _, err := openStore(ctx, dir, cfg, env)
	if err != nil {
		return community{}, err
	}
	defer st.Close()
	d := &deliberate{st: st}
	org := slug(server, "default")
	custom, err := d.custom(ctx, org)
	if err != nil {
		return community{}, err
	}
	s, err := st.GetIntentSettings(ctx, org)
	if err != nil {
		return community{}, err
	}
	depth := s.HistoryTurns
	if depth < 0 {
		depth = intent.DefaultHistoryTurns
	}
	return community{custom: custom, depth: depth, gateAlwaysOn: s.GateAlwaysOn}, nil
}

// intentLine is one --jsonl request.
type intentLine struct {
	ID      json.RawMessage `json:"id"`
	Message string          `json:"message"`
	History []string        `json:"history"`
}

// intentLines answers --jsonl requests in order. A malformed line is bad
// input and stops the run, naming the line.
func intentLines(env Env, detect func(string, []string) intent.Result) error {
	in := env.Stdin
	if in == nil {
		in = os.Stdin
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	w := bufio.NewWriter(env.Stdout)
	defer w.Flush()
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var req intentLine
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			return usagef("intent --jsonl: line %d: %s", n, firstLine(err.Error()))
		}
		res := detect(req.Message, req.History)
		if err := enc.Encode(struct {
			ID       json.RawMessage `json:"id"`
			Families []string        `json:"families"`
		}{req.ID, nonNil(res.Targets)}); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("read requests: %w", err)
	}
	return nil
}

const triggersUsage = `Usage:
  quiver triggers list   --server ID
  quiver triggers add    --server ID --target FAMILY PHRASE
  quiver triggers remove --server ID --target FAMILY PHRASE
  quiver triggers mode   --server ID on|off [--history N] [--always-on keep|gate]
  quiver triggers user   --server ID --user NAME off|follow|on

Manages a community's Deliberate Tool Mode: custom triggers (at most 16 per
family, each at most 40 characters, stored normalised; the phrase ^ opens
the family on every turn), the community toggle, how many recent user
messages are re-scanned (0–10, default 4) and what happens to the always-on
helpers (clarifying question, suggestions, calculator, read_tool_result,
read_transcript: keep, the default, declares them on every turn; gate
declares them only when a family holding them opens, for small local
models), and a user's override (follow uses the community's toggle).

Families: ` + "search, reminder, memory, image, video, voice, media-analysis, message-action,\ncross-channel, thread, user-blocking, user-info, capabilities, calculator, files" + `

Flags:
  --server ID    community (organisation), required
  --history N    (mode) recent user messages re-scanned, 0–10; unchanged
                 when not given
  --always-on M  (mode) keep or gate the always-on helpers; unchanged when
                 not given
  --data DIR     data folder
  --config FILE  deployment configuration
  --json         print JSON (list)
`

func runTriggers(ctx context.Context, args []string, env Env) error {
	if len(args) == 0 {
		return usagef(`triggers: no subcommand given (run "quiver triggers --help")`)
	}
	sub := args[0]
	switch sub {
	case "help", "-h", "--help", "-help":
		fmt.Fprint(env.Stdout, triggersUsage)
		return nil
	case "list", "add", "remove", "mode", "user":
	default:
		return usagef("triggers: unknown subcommand %q (list, add, remove, mode, user)", sub)
	}
	fs := newFlags("triggers " + sub)
	var server, target, user, alwaysOn, data, cfgPath string
	var history int
	var asJSON bool
	fs.StringVar(&server, "server", "", "")
	fs.StringVar(&target, "target", "", "")
	fs.StringVar(&user, "user", "", "")
	fs.IntVar(&history, "history", -2, "")
	fs.StringVar(&alwaysOn, "always-on", "", "")
	fs.StringVar(&data, "data", "", "")
	fs.StringVar(&cfgPath, "config", "", "")
	fs.BoolVar(&asJSON, "json", false, "")
	pos, err := parse(fs, args[1:], triggersUsage, env.Stdout)
	if err != nil {
		return err
	}
	if server == "" {
		return usagef("triggers %s: --server is required", sub)
	}
	org := slug(server, "default")
	// Validate everything before the store is opened.
	var phrase, mode string
	var gateAlwaysOn bool
	switch sub {
	case "add", "remove":
		if len(pos) != 1 {
			return usagef("triggers %s: give one PHRASE", sub)
		}
		if phrase, err = intent.CheckCustom(target, pos[0]); err != nil {
			return usagef("triggers %s: %v", sub, err)
		}
	case "mode":
		if len(pos) != 1 || (pos[0] != "on" && pos[0] != "off") {
			return usagef("triggers mode: give on or off")
		}
		if history != -2 && (history < 0 || history > intent.MaxHistoryTurns) {
			return usagef("triggers mode: --history: use 0–%d", intent.MaxHistoryTurns)
		}
		if alwaysOn != "" {
			if gateAlwaysOn, err = intent.ParseAlwaysOn(alwaysOn); err != nil {
				return usagef("triggers mode: --always-on: %v", err)
			}
		}
	case "user":
		if user == "" || len(pos) != 1 {
			return usagef("triggers user: give --user NAME and one of off, follow, on")
		}
		if mode, err = intent.ParseUserMode(pos[0]); err != nil {
			return usagef("triggers user: %v", err)
		}
	case "list":
		if len(pos) != 0 {
			return usagef("triggers list: takes no arguments")
		}
	}
	cfg, err := config.LoadConfig(cfgPath)
	if err != nil {
		return &UsageError{Msg: err.Error()}
	}
	dir, err := dataDir(data, env)
	if err != nil {
		return err
	}
	st, _, err := openStore(ctx, dir, cfg, env)
	if err != nil {
		return err
	}
	defer st.Close()
	switch sub {
	case "add":
		err = st.AddIntentTrigger(ctx, store.IntentTrigger{OrgID: org, Target: target, Phrase: phrase, CreatedAt: env.Now().UTC()}, intent.MaxCustomPerTarget)
		switch {
		case errors.Is(err, store.ErrTriggerExists):
			return usagef("triggers add: %q is already a %s trigger", phrase, target)
		case errors.Is(err, store.ErrTriggerLimit):
			return usagef("triggers add: %s already has %d custom triggers (the limit)", target, intent.MaxCustomPerTarget)
		case err != nil:
			return err
		}
		fmt.Fprintf(env.Stdout, "added %s trigger %q\n", target, phrase)
	case "remove":
		if err := st.RemoveIntentTrigger(ctx, org, target, phrase); errors.Is(err, store.ErrNotFound) {
			return usagef("triggers remove: no %s trigger %q", target, phrase)
		} else if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "removed %s trigger %q\n", target, phrase)
	case "mode":
		s, err := st.GetIntentSettings(ctx, org)
		if err != nil {
			return err
		}
		s.OrgID, s.Enabled, s.UpdatedAt = org, pos[0] == "on", env.Now().UTC()
		if history != -2 {
			s.HistoryTurns = history
		}
		if alwaysOn != "" {
			s.GateAlwaysOn = gateAlwaysOn
		}
		if err := st.PutIntentSettings(ctx, s); err != nil {
			return err
		}
		depth := "default " + strconv.Itoa(intent.DefaultHistoryTurns)
		if s.HistoryTurns >= 0 {
			depth = strconv.Itoa(s.HistoryTurns)
		}
		fmt.Fprintf(env.Stdout, "deliberate tool mode %s for %s (history: %s; always-on helpers: %s)\n",
			pos[0], org, depth, intent.AlwaysOnWord(s.GateAlwaysOn))
	case "user":
		if err := st.SetUserIntentMode(ctx, org, slug(user, "cli"), mode); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "deliberate tool mode for %s in %s: %s\n", user, org, mode)
	case "list":
		ts, err := st.ListIntentTriggers(ctx, org)
		if err != nil {
			return err
		}
		if asJSON {
			type row struct {
				Target string `json:"family"`
				Phrase string `json:"phrase"`
			}
			rows := []row{}
			for _, t := range ts {
				rows = append(rows, row{t.Target, t.Phrase})
			}
			return writeJSON(env.Stdout, rows)
		}
		if len(ts) == 0 {
			fmt.Fprintf(env.Stdout, "no custom triggers for %s\n", org)
			return nil
		}
		tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "FAMILY\tPHRASE")
		for _, t := range ts {
			fmt.Fprintf(tw, "%s\t%s\n", t.Target, t.Phrase)
		}
		return tw.Flush()
	}
	return nil
}
