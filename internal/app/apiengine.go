package app

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/intent"
	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/providers"
	"github.com/quiverhq/quiver/prompt"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/settings"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/turn"
)

// apiEngine is httpapi.Engine over the turn engine: agents come from the
// store, callers from their credentials, models from the configuration.
type apiEngine struct {
	eng    *engine
	st     store.Store
	models models
	now    func() time.Time

	mu sync.Mutex
	// opened holds, per organisation, the models opened under its
	// settings version; a new version starts afresh.
	opened map[string]openedModels
}

// openedModels are an organisation's models at one settings version, by
// "provider:model".
type openedModels struct {
	version int64
	models  map[string]llm.Model
}

var _ httpapi.Engine = (*apiEngine)(nil)

// agentFor loads and parses the conversation's stored agent.
func (a *apiEngine) agentFor(ctx context.Context, orgID, conversationID string) (config.Agent, error) {
	conv, err := a.st.GetConversation(ctx, orgID, conversationID)
	if errors.Is(err, store.ErrNotFound) {
		return config.Agent{}, &httpapi.BadRequest{Msg: "no such conversation"}
	}
	if err != nil {
		return config.Agent{}, err
	}
	stored, err := a.st.GetAgent(ctx, orgID, conv.Agent)
	if errors.Is(err, store.ErrNotFound) {
		return config.Agent{}, &httpapi.BadRequest{Msg: fmt.Sprintf("the conversation's agent %q no longer exists", conv.Agent)}
	}
	if err != nil {
		return config.Agent{}, err
	}
	ag, err := config.ParseAgent(stored.Definition)
	if err != nil {
		return config.Agent{}, fmt.Errorf("stored agent %s: %w", conv.Agent, err)
	}
	return ag, nil
}

// facts builds a turn's facts for a caller.
func (a *apiEngine) facts(c httpapi.Caller, ag config.Agent, conversationID string) (turn.Facts, error) {
	m, err := ag.TurnModel("")
	if err != nil {
		return turn.Facts{}, err
	}
	return turn.Facts{
		Start: a.now(),
		Caller: turn.Caller{
			UserID: c.UserID, DisplayName: c.DisplayName, Department: c.Department,
			Organisation: c.OrgID, Timezone: c.Timezone,
		},
		Place: turn.Place{OrgID: c.OrgID, ConversationID: conversationID},
		Agent: ag.TurnAgent(),
		Model: m,
		Payer: c.OrgID,
	}, nil
}

// model opens (once per settings version) the model a turn of the
// organisation runs on, with the organisation's keys.
func (a *apiEngine) model(ctx context.Context, orgID string, m turn.Model) (llm.Model, error) {
	view, err := a.eng.orgs.Runtime(ctx, orgID)
	if err != nil {
		return nil, err
	}
	key := m.Provider + ":" + m.Name
	a.mu.Lock()
	om := a.opened[orgID]
	mod, ok := om.models[key]
	a.mu.Unlock()
	if ok && om.version == view.Version() {
		return mod, nil
	}
	mod, _, err = a.models.open(ctx, view.Config(), m)
	if err != nil {
		return nil, &httpapi.BadRequest{Msg: "no model is connected: " + err.Error()}
	}
	a.mu.Lock()
	if a.opened == nil {
		a.opened = map[string]openedModels{}
	}
	om = a.opened[orgID]
	switch {
	case om.models != nil && om.version > view.Version():
		// A newer version was cached meanwhile: use mod for this turn
		// only, never replace the newer models with it.
	case om.models == nil || om.version < view.Version():
		om = openedModels{version: view.Version(), models: map[string]llm.Model{key: mod}}
		a.opened[orgID] = om
	default:
		om.models[key] = mod
	}
	a.mu.Unlock()
	return mod, nil
}

// request prepares a turn of message for the caller.
func (a *apiEngine) request(ctx context.Context, c httpapi.Caller, conversationID, message string, dry bool) (Prepared, []string, error) {
	ag, err := a.agentFor(ctx, c.OrgID, conversationID)
	if err != nil {
		return Prepared{}, nil, err
	}
	f, err := a.facts(c, ag, conversationID)
	if err != nil {
		return Prepared{}, nil, err
	}
	mod, err := a.model(ctx, c.OrgID, f.Model)
	if err != nil && !dry {
		return Prepared{}, nil, err
	}
	f.Model.Caps = providers.Effective(f.Model.Caps, mod)
	return a.eng.prepare(ctx, TurnRequest{Facts: f, Model: mod, Message: message, DryRun: dry})
}

// Send implements httpapi.Engine.
func (a *apiEngine) Send(ctx context.Context, c httpapi.Caller, conversationID, message string, emit func(agent.Event)) error {
	p, _, err := a.request(ctx, c, conversationID, message, false)
	if err != nil {
		return err
	}
	_, err = a.eng.run(ctx, p, emit)
	return err
}

// Inspect implements httpapi.Engine: the request a message would send now,
// or the stored turn's toolset with why it left the other tools out;
// nothing runs and nothing is written.
func (a *apiEngine) Inspect(ctx context.Context, c httpapi.Caller, conversationID, turnID, message string) (httpapi.Inspection, error) {
	p, warnings, err := a.request(ctx, c, conversationID, message, true)
	if err != nil {
		return httpapi.Inspection{}, err
	}
	start, excluded := p.Start, p.Start.Toolset.Excluded()
	pastDeclared := []intent.Declared{}
	if turnID != "" {
		if start, excluded, err = a.pastStart(ctx, c.OrgID, conversationID, turnID, p); err != nil {
			return httpapi.Inspection{}, err
		}
		warnings = start.Request.Warnings
		for _, d := range start.Declared {
			// A tool the restored set no longer holds (its server gone)
			// is listed with the exclusions, not here.
			if _, ok := start.Toolset.Lookup(d.Name); ok {
				pastDeclared = append(pastDeclared, intent.Declared{Name: d.Name, Reason: d.Reason})
			}
		}
	}
	out := httpapi.Inspection{
		TurnID: start.Facts.TurnID, Agent: start.Facts.Agent.Name,
		Model:  start.Facts.Model.Provider + ":" + start.Facts.Model.Name,
		System: start.Request.System, Context: start.Request.Context, Tools: start.Request.Tools,
		Sizes: start.Request.Sizes, Excluded: excluded, Warnings: warnings,
		Intent: []httpapi.IntentMatch{}, Declared: []intent.Declared{}, Origins: origins(start.Toolset),
	}
	if out.Excluded == nil {
		out.Excluded = []registry.Exclusion{}
	}
	switch {
	case turnID == "" && p.Intent.Declared != nil:
		out.Declared = p.Intent.Declared
	case turnID != "":
		out.Declared = pastDeclared
	}
	for _, m := range p.Intent.Result.Matches {
		out.Intent = append(out.Intent, httpapi.IntentMatch{Family: m.Target, Trigger: m.Trigger, Source: m.Source})
	}
	return out, nil
}

// origins maps the set's MCP tools, in declaration order, to their servers
// and their names there; never nil.
func origins(ts registry.Toolset) []httpapi.ToolOrigin {
	out := []httpapi.ToolOrigin{}
	for _, t := range ts.Tools() {
		if o := t.Spec().Origin; o.Server != "" {
			out = append(out, httpapi.ToolOrigin{Name: t.Name(), Server: o.Server, Tool: o.Tool})
		}
	}
	return out
}

// pastStart rebuilds a stored turn of the conversation for the inspector:
// its restored toolset and request, and its exclusions — the reasons
// recorded when it started (see pastExclusions), or, for a turn stored
// before those were, the restored set's with today's reasons added (see
// explainStored).
func (a *apiEngine) pastStart(ctx context.Context, orgID, conversationID, turnID string, p Prepared) (agent.Start, []registry.Exclusion, error) {
	t, err := a.st.GetTurn(ctx, orgID, turnID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && t.ConversationID != conversationID) {
		return agent.Start{}, nil, &httpapi.BadRequest{Msg: "no such turn in this conversation"}
	}
	if err != nil {
		return agent.Start{}, nil, err
	}
	start := p.Start
	start.Toolset, start.Declared = restore(p.Catalog, start.Facts, t.Tools).WithSelected(t.Selected), t.Declared
	start.Facts.TurnID, start.Facts.Caller.Timezone = t.ID, t.Timezone
	if start.Request, err = prompt.Assemble(start.Facts, start.Toolset); err != nil {
		return agent.Start{}, nil, err
	}
	if t.Excluded == nil {
		return start, explainStored(start.Toolset.Excluded(), p.Catalog.Select(start.Facts).Excluded()), nil
	}
	return start, pastExclusions(t, start.Toolset.Excluded()), nil
}

// ValidateAgent implements httpapi.Engine: the definition parses, its
// prompt renders against the widest toolset the caller's organisation
// could give it (its settings and MCP servers applied), and its allowlist
// is checked against the organisation's built-in tools and registered
// MCP servers.
func (a *apiEngine) ValidateAgent(ctx context.Context, c httpapi.Caller, definition []byte) (httpapi.AgentValidation, error) {
	ag, err := config.ParseAgent(definition)
	if err != nil {
		return httpapi.AgentValidation{}, &httpapi.BadRequest{Msg: err.Error()}
	}
	f, err := a.facts(c, ag, "validate")
	if err != nil {
		return httpapi.AgentValidation{}, &httpapi.BadRequest{Msg: err.Error()}
	}
	cat, err := a.eng.catalog(ctx, &f)
	if err != nil {
		return httpapi.AgentValidation{}, err
	}
	req, err := prompt.Assemble(f, cat.Select(f))
	if err != nil {
		return httpapi.AgentValidation{}, &httpapi.BadRequest{Msg: err.Error()}
	}
	allow, err := orgAllowlistWarnings(ctx, a.eng.orgs, a.st, c.OrgID, ag)
	if err != nil {
		return httpapi.AgentValidation{}, err
	}
	return httpapi.AgentValidation{Name: ag.Name, Warnings: req.Warnings, Allowlist: allow}, nil
}

// Catalog implements httpapi.Engine: the organisation's built-ins under
// its settings and its enabled MCP servers' tools.
func (a *apiEngine) Catalog(ctx context.Context, c httpapi.Caller) (httpapi.Catalog, error) {
	view, err := a.eng.orgs.Runtime(ctx, c.OrgID)
	if err != nil {
		return httpapi.Catalog{}, err
	}
	cat := turnCatalog(ctx, view.Catalog(), a.eng.mcp, c.OrgID, networkMode(view.Config().Network.Mode), Env{Logger: a.eng.logger})
	s := CatalogSizes()
	out := httpapi.Catalog{
		AlwaysPaidChars: s.AlwaysPaid.Chars, AlwaysPaidCeiling: s.AlwaysPaid.Ceiling,
		WidestChars: s.Widest.Chars, WidestCeiling: s.Widest.Ceiling,
	}
	for _, t := range cat.Tools() {
		sp := t.Spec()
		v := httpapi.ToolView{
			Name: sp.Name, Family: t.Family(), Description: sp.Description, Access: sp.Access.String(),
			AlwaysOn: sp.AlwaysOn, Chars: t.DeclarationChars(),
		}
		if sp.Origin.Server != "" {
			v.Server, v.ServerTool = sp.Origin.Server, sp.Origin.Tool
		}
		out.Tools = append(out.Tools, v)
	}
	return out, nil
}

// Settings implements httpapi.Engine.
func (a *apiEngine) Settings(ctx context.Context, c httpapi.Caller) (settings.View, error) {
	return a.eng.orgs.Show(ctx, c.OrgID)
}

// UpdateSettings implements httpapi.Engine.
func (a *apiEngine) UpdateSettings(ctx context.Context, c httpapi.Caller, u settings.Update) (settings.View, error) {
	return a.eng.orgs.Update(ctx, c.OrgID, u)
}

// pastExclusions is what a turn that recorded its exclusions left out:
// exactly the recorded reasons, then any tool it declared that its
// restored toolset has lost since (no longer registered, or no longer
// admitted), with restored's reason, so that a declared tool does not
// vanish from the inspector unexplained.
func pastExclusions(t store.Turn, restored []registry.Exclusion) []registry.Exclusion {
	out := make([]registry.Exclusion, 0, len(t.Excluded))
	for _, e := range t.Excluded {
		out = append(out, registry.Exclusion{Name: e.Name, Reason: e.Reason})
	}
	declared := make(map[string]bool, len(t.Tools))
	for _, name := range t.Tools {
		declared[name] = true
	}
	for _, e := range restored {
		if declared[e.Name] {
			out = append(out, registry.Exclusion{Name: e.Name, Reason: "in the toolset this turn started with; today: " + e.Reason})
		}
	}
	return out
}

// explainStored adds to the exclusions of a turn stored before turns
// recorded theirs the reason the catalog gives today, where it has one:
// such a turn records which tools it declared, not why the others were
// left out, so "not in the toolset this turn started with" alone would
// hide the likely cause (a switch, the allowlist, a missing backend).
func explainStored(stored, today []registry.Exclusion) []registry.Exclusion {
	why := make(map[string]string, len(today))
	for _, e := range today {
		why[e.Name] = e.Reason
	}
	out := make([]registry.Exclusion, len(stored))
	for i, e := range stored {
		out[i] = e
		if r := why[e.Name]; r != "" && r != e.Reason {
			out[i].Reason = e.Reason + "; today: " + r
		}
	}
	return out
}
