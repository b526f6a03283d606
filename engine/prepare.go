package engine

import (
	"context"
	"fmt"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/intent"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// Prepared is a turn ready to run: its collected facts, its toolset
// (selected, gated and narrowed to what the model can take) and its
// assembled request. Surfaces show it (the inspector) or run it.
type Prepared struct {
	*Collected
	// Start is what the loop starts from.
	Start agent.Start
	// Resume is true when the turn answers the conversation's paused turn.
	Resume bool
	// Catalog is the turn's catalog: the built-ins under the
	// organisation's settings, with its MCP servers' tools.
	Catalog *registry.Catalog
	// Intent is what Deliberate Tool Mode decided; Active false when off.
	Intent Gated
	// Warnings are the prompt template's warnings.
	Warnings []string
}

// Collect reads, once each, what a turn needs before it selects: the
// conversation (refusing another user's as ErrNoConversation), its
// messages and paused turn, the agent, the organisation's runtime,
// Deliberate Tool Mode's settings and the model. It writes nothing.
func (e *Engine) Collect(ctx context.Context, r Request) (*Collected, error) {
	return e.collect(ctx, r)
}

// Prepare builds everything a collected turn needs from its facts, and
// reads nothing Collect read: the turn's catalog, the toolset (the paused
// turn's restored, or selected and gated), narrowed to the schemas the
// model can take, and the assembled request. With the request's DryRun
// nothing is written.
func (e *Engine) Prepare(ctx context.Context, c *Collected) (*Prepared, error) {
	f := c.facts
	message, dryRun := c.req.Message, c.req.DryRun
	cat := e.catalog(ctx, c)
	p := &Prepared{Collected: c, Catalog: cat, Resume: c.paused != nil}
	var ts registry.Toolset
	if c.paused != nil {
		ts = restore(cat, f, c.paused.Tools).WithSelected(c.paused.Selected)
	} else {
		var err error
		if p.Intent, err = e.gate(ctx, c, cat, cat.Select(f), message, dryRun); err != nil {
			return nil, err
		}
		ts = p.Intent.Toolset
	}
	if c.model != nil {
		ts = narrowToModel(cat, ts, c.model)
		p.Intent.Declared = stillDeclared(p.Intent.Declared, ts)
	}
	req, err := e.cfg.Prompts.Assemble(f, ts)
	if err != nil {
		return nil, fmt.Errorf("assemble: %w", err)
	}
	p.Warnings = req.Warnings
	p.Start = agent.Start{Facts: f, Toolset: ts, Request: req, Model: c.model, Message: message,
		Declared: storedDeclared(p.Intent.Declared), History: c.history}
	return p, nil
}

// catalog is the turn's catalog: the runtime's built-ins with the
// organisation's MCP servers' tools, reached under the turn's network
// mode.
func (e *Engine) catalog(ctx context.Context, c *Collected) *registry.Catalog {
	if e.cfg.Tools == nil {
		return c.runtime.Catalog
	}
	return e.cfg.Tools.TurnCatalog(ctx, c.facts.Place.OrgID, c.facts.Network, c.runtime.Catalog)
}

// narrowToModel leaves out the tools whose schema the model refuses.
func narrowToModel(cat *registry.Catalog, ts registry.Toolset, m llm.Model) registry.Toolset {
	return ts.Narrow(cat, func(t *tool.Tool) (bool, string) {
		if err := m.CheckTool(llm.ToolDef(t.Declaration())); err != nil {
			return false, "the model cannot take its schema: " + err.Error()
		}
		return true, ""
	})
}

// Run runs a prepared turn, reporting events to emit (with Deliberate
// Tool Mode's thought log in between). See agent.Runner.Run for the
// error contract.
func (e *Engine) Run(ctx context.Context, p *Prepared, emit func(agent.Event)) (agent.Outcome, error) {
	if e.cfg.Runner == nil {
		return agent.Outcome{}, fmt.Errorf("engine: no runner configured")
	}
	if p.Start.Model == nil {
		return agent.Outcome{}, inputf("%s", NoModel(nil))
	}
	if p.Resume {
		return e.cfg.Runner.Resume(ctx, p.Start, emit)
	}
	emit = p.Intent.thoughtLog(ctx, e.cfg.Repos.Messages, p.facts.Place.OrgID, e.cfg.Logger, emit)
	return e.cfg.Runner.Run(ctx, p.Start, emit)
}

// Respond runs, from end to end, the turn r's message starts (or, when
// the conversation's last turn paused, the one it answers): Collect,
// Prepare and Run, one surface's whole turn (quiver chat's). warn, when
// not nil, gets each prompt template warning before the turn runs.
// Errors are those of Collect (ErrNoConversation, *InputError), Prepare
// and Run, as they return them.
func (e *Engine) Respond(ctx context.Context, r Request, warn func(string), emit func(agent.Event)) (agent.Outcome, error) {
	c, err := e.Collect(ctx, r)
	if err != nil {
		return agent.Outcome{}, err
	}
	p, err := e.Prepare(ctx, c)
	if err != nil {
		return agent.Outcome{}, err
	}
	if warn != nil {
		for _, w := range p.Warnings {
			warn(w)
		}
	}
	return e.Run(ctx, p, emit)
}

// storedDeclared is the mode's reasons as a turn records them; nil (the
// mode off) stays nil.
func storedDeclared(ds []intent.Declared) []store.Exclusion {
	if ds == nil {
		return nil
	}
	out := make([]store.Exclusion, len(ds))
	for i, d := range ds {
		out[i] = store.Exclusion{Name: d.Name, Reason: d.Reason}
	}
	return out
}

// stillDeclared keeps the entries of ds whose tool ts declares: the model
// may refuse a schema the mode had declared. Nil stays nil (the mode off).
func stillDeclared(ds []intent.Declared, ts registry.Toolset) []intent.Declared {
	if ds == nil {
		return nil
	}
	out := []intent.Declared{}
	for _, d := range ds {
		if _, ok := ts.Lookup(d.Name); ok {
			out = append(out, d)
		}
	}
	return out
}

// restore rebuilds a stored toolset, keeping only the tools the facts
// still admit: a name an MCP server took since the turn paused (another
// server's tool, outside the allowlist) is not declared.
func restore(cat *registry.Catalog, f turn.Facts, names []string) registry.Toolset {
	return cat.Restore(names).Narrow(cat, func(t *tool.Tool) (bool, string) {
		if reason := registry.Admits(f, t); reason != "" {
			return false, reason
		}
		return true, ""
	})
}
