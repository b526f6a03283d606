package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/quiverhq/quiver/builtin"
	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/intent"
	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/prompt"
)

const turnUsage = `Usage: quiver turn --agent FILE [flags] MESSAGE

Prints the request Quiver would send to the model for MESSAGE: the system
prompt, the per-turn context message, the declared tools with their sizes, and
every tool left out with its reason. No model is called and nothing is written.
An allowlist entry that names no built-in tool or family (or is repeated) is a
warning on stderr, with the closest known name; "quiver agent check" also
checks MCP entries.

Flags:
  --agent FILE        agent definition (YAML), required
  --user NAME         caller's display name
  --department D      caller's department
  --org O             caller's organisation
  --tz ZONE           caller's IANA timezone (e.g. Asia/Ho_Chi_Minh); default UTC
  --model P:NAME      override the agent's model (provider:model)
  --dtm               apply Deliberate Tool Mode to MESSAGE alone (no history,
                      no custom triggers): the tools it would declare, why
                      each is declared, and the matches that opened them
  --always-on MODE    with --dtm: keep (default) declares the always-on
                      helpers on every turn; gate, as an organisation that
                      opted in, declares calculate and read_tool_result only
                      when their family opens, and the clarifying question,
                      suggestions and read_transcript never
  --json              print one JSON object
`

// TurnOutput is what "quiver turn --json" prints: the inspection's
// report, with the built-in catalog's ceilings and allowlist warnings.
type TurnOutput = engine.Report

func runTurn(args []string, env Env) error {
	fs := newFlags("turn")
	var in TurnInput
	var asJSON, dtm bool
	var alwaysOn string
	fs.BoolVar(&dtm, "dtm", false, "")
	fs.StringVar(&alwaysOn, "always-on", "", "")
	fs.StringVar(&in.AgentFile, "agent", "", "")
	fs.StringVar(&in.Caller.User, "user", "", "")
	fs.StringVar(&in.Caller.Department, "department", "", "")
	fs.StringVar(&in.Caller.Org, "org", "", "")
	fs.StringVar(&in.Caller.Timezone, "tz", "", "")
	fs.StringVar(&in.Model, "model", "", "")
	fs.BoolVar(&asJSON, "json", false, "")
	pos, err := parse(fs, args, turnUsage, env.Stdout)
	if err != nil {
		return err
	}
	if len(pos) != 1 || strings.TrimSpace(pos[0]) == "" {
		return usagef("turn: give exactly one MESSAGE argument (quote it)")
	}
	var opts intent.GateOptions
	if alwaysOn != "" {
		if !dtm {
			return usagef("turn: --always-on applies only with --dtm")
		}
		if opts.GateAlwaysOn, err = intent.ParseAlwaysOn(alwaysOn); err != nil {
			return usagef("turn: --always-on: %v", err)
		}
	}
	in.Now = env.Now()
	r, err := turnRequest(in)
	if err != nil {
		return err
	}
	cat := builtin.NewCatalog(builtin.CatalogDeps{})
	ecfg := engine.Config{Runtime: engine.StaticRuntime(engine.Runtime{Catalog: cat, Network: "public"}), Now: env.Now}
	if dtm {
		if ecfg.Detector, err = loadDetector(config.Config{}); err != nil {
			return err
		}
		r.Deliberate = &intent.Settings{Enabled: true, GateAlwaysOn: opts.GateAlwaysOn}
	}
	r.Message = pos[0]
	ins, err := engine.New(ecfg).Inspect(context.Background(), r, "")
	if err != nil {
		return usagef("turn: %v", err)
	}
	facts := ins.Start.Facts
	out := ins.Report()
	out.Ceilings = engine.Ceilings{AlwaysPaidChars: builtin.AlwaysPaidCeiling, WidestChars: builtin.WidestCeiling}
	out.AllowlistWarnings = cat.CheckAgent(facts.Agent.Allow, nil, facts.Agent.Switches)
	for _, w := range out.AllowlistWarnings {
		fmt.Fprintf(env.Stderr, "quiver: warning: %s\n", allowlistLine(w))
	}
	if asJSON {
		return writeJSON(env.Stdout, out)
	}
	printTurn(env.Stdout, out)
	return nil
}

func printTurn(w io.Writer, o TurnOutput) {
	fmt.Fprintf(w, "agent %s on %s\n\n", o.Agent, o.Model)
	fmt.Fprintf(w, "── system prompt (%d chars, identical for every turn of this agent and toolset)\n%s\n\n", o.Sizes.SystemChars, o.System)
	fmt.Fprintf(w, "── context message (%d chars, per turn)\n%s\n\n", o.Sizes.ContextChars, o.Context)
	fmt.Fprintf(w, "── user message\n%s\n\n", o.Message)
	fmt.Fprintf(w, "── tools: %d declared, %d definition chars (always-paid %d of ceiling %d)\n",
		len(o.Tools), o.Sizes.DefinitionsChars, o.Sizes.AlwaysPaidChars, o.Ceilings.AlwaysPaidChars)
	for _, d := range o.Tools {
		fmt.Fprintf(w, "  %-26s %5d chars  %s\n", d.Name, prompt.DefinitionChars(d), firstSentence(d.Description))
	}
	fmt.Fprintf(w, "\n── left out: %d\n", len(o.Excluded))
	for _, e := range o.Excluded {
		fmt.Fprintf(w, "  %-26s %s\n", e.Name, e.Reason)
	}
	if o.Intent != nil {
		fmt.Fprintf(w, "\n── deliberate tool mode: %d matches\n", len(o.Intent))
		for _, m := range o.Intent {
			fmt.Fprintf(w, "  %-26s %q (%s)\n", m.Target, m.Trigger, m.Source)
		}
		fmt.Fprintf(w, "\n── deliberate tool mode: why each tool is declared\n")
		if len(o.Declared) == 0 {
			fmt.Fprintln(w, "  (no tool is declared)")
		}
		for _, d := range o.Declared {
			fmt.Fprintf(w, "  %-26s %s\n", d.Name, d.Reason)
		}
	}
	if len(o.Warnings) > 0 {
		fmt.Fprintf(w, "\n── template warnings: %d\n", len(o.Warnings))
		for _, m := range o.Warnings {
			fmt.Fprintf(w, "  %s\n", m)
		}
	}
}

func firstSentence(s string) string {
	s = firstLine(s)
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	if r := []rune(s); len(r) > 90 {
		s = string(r[:89]) + "…"
	}
	return s
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
