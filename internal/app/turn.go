package app

import (
	"context"
	"fmt"

	"github.com/quiverhq/quiver/builtin"
	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/intent"
	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/surface/terminal"
)

// TurnOutput is what "quiver turn --json" prints: the inspection's
// report, with the built-in catalog's ceilings and allowlist warnings.
type TurnOutput = engine.Report

// TurnOptions is what "quiver turn" runs with: one message's turn,
// inspected without a model or a data folder.
type TurnOptions struct {
	// Turn is who the turn is for and with which agent.
	Turn TurnInput
	// Message is the user's message.
	Message string
	// Deliberate turns Deliberate Tool Mode on, with the built-in packs.
	Deliberate bool
	// GateAlwaysOn, with Deliberate, gates the always-on helpers too.
	GateAlwaysOn bool
	// JSON prints a TurnOutput instead of its text form.
	JSON bool
}

// Turn prints what a turn would see (TurnOutput): the tools selected and
// left out, the prompt and the context, with the allowlist's warnings on
// stderr. It writes nothing; a request the engine refuses is a
// *UsageError.
func Turn(ctx context.Context, o TurnOptions, env Env) error {
	env.defaults()
	r, err := turnRequest(o.Turn)
	if err != nil {
		return err
	}
	cat := builtin.NewCatalog(builtin.CatalogDeps{})
	ecfg := engine.Config{Runtime: engine.StaticRuntime(engine.Runtime{Catalog: cat, Network: "public"}), Now: env.Now}
	if o.Deliberate {
		if ecfg.Detector, err = loadDetector(config.Config{}); err != nil {
			return err
		}
		r.Deliberate = &intent.Settings{Enabled: true, GateAlwaysOn: o.GateAlwaysOn}
	}
	r.Message = o.Message
	ins, err := engine.New(ecfg).Inspect(ctx, r, "")
	if err != nil {
		return usagef("turn: %v", err)
	}
	facts := ins.Start.Facts
	out := ins.Report()
	out.Ceilings = engine.Ceilings{AlwaysPaidChars: builtin.AlwaysPaidCeiling, WidestChars: builtin.WidestCeiling}
	out.AllowlistWarnings = cat.CheckAgent(facts.Agent.Allow, nil, facts.Agent.Switches)
	for _, w := range out.AllowlistWarnings {
		fmt.Fprintf(env.Stderr, "quiver: warning: %s\n", w.Line())
	}
	return terminal.Emit(env.Stdout, o.JSON, out)
}
