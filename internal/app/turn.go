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
)

var turnUsage = usageText("turn")

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
	in.register(fs)
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
	return emit(env.Stdout, asJSON, out)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// report is an output with a text form for people.
type report interface{ WriteText(w io.Writer) }

// emit writes v to w as indented JSON when asJSON, else as text.
func emit(w io.Writer, asJSON bool, v report) error {
	if asJSON {
		return writeJSON(w, v)
	}
	v.WriteText(w)
	return nil
}
