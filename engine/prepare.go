package engine

import (
	"context"
	"fmt"
	"github.com/quiverhq/quiver/builtin/discovery"
	"slices"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/intent"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/prompt"
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
// nothing is written. The selected and gated toolset and the request's
// fixed part come from the engine's Selections when an equal turn built
// them before.
func (e *Engine) Prepare(ctx context.Context, c *Collected) (*Prepared, error) {
	f := c.facts
	ctxMsg, err := e.cfg.Prompts.ContextMessage(f)
	if err != nil {
		return nil, fmt.Errorf("assemble: assemble prompt: %w", err)
	}
	cat := e.catalog(ctx, c)
	p := &Prepared{Collected: c, Catalog: cat, Resume: c.paused != nil}
	var ts, all registry.Toolset
	var fixed *prompt.Request
	if c.paused != nil {
		if slices.Contains(c.paused.Tools, intent.RecoveryTool) {
			// The paused turn ran under the mode: its recovery tool
			// stays declared, and can still open what selection allows.
			f.Deliberate, c.facts.Deliberate = true, true
		}
		ts = restore(cat, f, c.paused.Tools).WithSelected(c.paused.Selected)
		all = cat.Select(f)
	} else {
		s, err := e.selectTurn(ctx, c, cat, p)
		if err != nil {
			return nil, err
		}
		ts, all, fixed = s.toolset, s.all, &s.fixed
		if s.err != nil {
			return nil, fmt.Errorf("assemble: %w", s.err)
		}
	}
	if f.Scheduled != nil {
		ts, all, fixed = scheduledTools(cat, ts, f.Scheduled.Tools), scheduledTools(cat, all, f.Scheduled.Tools), nil
	}
	if c.model != nil {
		narrowed := narrowToModel(cat, ts, c.model)
		if narrowed.Len() != ts.Len() {
			ts, fixed = narrowed, nil
			p.Intent.Declared = stillDeclared(p.Intent.Declared, ts)
		}
	}
	if fixed == nil {
		req, err := e.cfg.Prompts.Fixed(f, ts)
		if err != nil {
			return nil, fmt.Errorf("assemble: %w", err)
		}
		fixed = &req
	}
	req := fixed.WithContext(ctxMsg)
	x := expander{cat: cat, from: all, model: c.model}
	if c.paused == nil && deferred(ts) {
		// What the conversation called before stays declared, appended
		// as the last turn appended it, so this turn starts with the
		// prefix the last one ended with (the system prompt is the
		// deferred set's, unchanged).
		ts, req = x.declare(ts, req, calledBefore(c.history))
		if f.Model.Caps.DeferredTools {
			// The provider loads the rest itself when a result
			// references them: nothing is appended mid-turn.
			req.Deferred = x.undeclared(ts)
		}
	}
	p.Warnings = req.Warnings
	p.Start = agent.Start{Facts: f, Toolset: ts, Request: req, Model: c.model, Message: c.req.Message,
		Declared: storedDeclared(p.Intent.Declared), History: c.history,
		Expand: x}
	if c.paused == nil {
		p.Start.Parent, p.Start.Branch = c.Parent()
	}
	return p, nil
}

// selectTurn is the selected (and, with the mode active, gated) toolset
// of a turn that answers no paused turn, with its request's fixed part:
// detection and the open targets per turn, the rest from the engine's
// Selections. It sets p.Intent.
func (e *Engine) selectTurn(ctx context.Context, c *Collected, cat *registry.Catalog, p *Prepared) (*selected, error) {
	in := selectionInputs{sel: c.facts.Selection(), prompt: c.facts.Agent.Prompt}
	var res intent.Result
	if c.dtm.Active() {
		var err error
		if res, in.open, err = e.detect(ctx, c, c.req.Message, c.req.DryRun); err != nil {
			return nil, err
		}
		in.gate, in.opts = true, c.dtm.GateOptions()
	}
	cache := e.cfg.Selections
	if cat != c.runtime.Catalog {
		// A catalog built for this turn alone (an organisation's MCP
		// servers' tools applied) is never met again: keeping its
		// entry would only push out the others'.
		cache = nil
	}
	s := cache.get(cat, in, e.selectFor)
	if in.gate {
		p.Intent = gated(s.toolset, res, in.open, in.opts)
	} else {
		p.Intent = Gated{Toolset: s.toolset}
	}
	return s, nil
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

// expander grows a turn's declared tools from its selection (see
// agent.Expander), leaving out tools whose schema the model refuses.
type expander struct {
	cat   *registry.Catalog
	from  registry.Toolset
	model llm.Model
}

// Expand implements agent.Expander.
func (x expander) Expand(ts registry.Toolset, names []string) (registry.Toolset, []*tool.Tool) {
	from := x.from
	if x.model != nil {
		from = narrowToModel(x.cat, from, x.model)
	}
	return x.cat.Extend(ts, from, names)
}

// declare returns ts and req with the named tools Expand allows
// appended to the toolset and the request's definitions.
func (x expander) declare(ts registry.Toolset, req prompt.Request, names []string) (registry.Toolset, prompt.Request) {
	ts, added := x.Expand(ts, names)
	if len(added) == 0 {
		return ts, req
	}
	req.Tools = slices.Clone(req.Tools)
	for _, t := range added {
		req.Tools = append(req.Tools, t.Declaration())
		req.Sizes.DefinitionsChars += t.DeclarationChars()
	}
	return ts, req
}

// undeclared is the declarations of the tools Expand could add to ts, in
// registration order.
func (x expander) undeclared(ts registry.Toolset) []prompt.Definition {
	var out []prompt.Definition
	for _, t := range x.Available() {
		if _, ok := ts.Lookup(t.Name()); !ok {
			out = append(out, t.Declaration())
		}
	}
	return out
}

// Available implements agent.Expander.
func (x expander) Available() []*tool.Tool {
	from := x.from
	if x.model != nil {
		from = narrowToModel(x.cat, from, x.model)
	}
	return from.Tools()
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
		if slices.Contains(discovery.Names, t.Name()) {
			// Declared by deferral, which no selection gives.
			return true, ""
		}
		if reason := registry.Admits(f, t); reason != "" {
			return false, reason
		}
		return true, ""
	})
}

// ScheduleTool is the tool a scheduled task's run never declares: a
// task's turn schedules no further tasks.
const ScheduleTool = "schedule_task"

// scheduledTools is ts narrowed to a scheduled task's tools: the ones
// the scheduling turn could use, without schedule_task.
func scheduledTools(cat *registry.Catalog, ts registry.Toolset, tools []string) registry.Toolset {
	return ts.Narrow(cat, func(t *tool.Tool) (bool, string) {
		switch {
		case t.Name() == ScheduleTool:
			return false, "a scheduled task's turn cannot schedule further tasks"
		case !slices.Contains(tools, t.Name()):
			return false, "not among the tools the task could use when it was scheduled"
		}
		return true, ""
	})
}
