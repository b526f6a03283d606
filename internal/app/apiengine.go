package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/dispatch"
	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/settings"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/turn"
)

// apiEngine is httpapi.Engine over the turn engine: it maps the API's
// callers to engine requests and the engine's answers to the wire. It
// builds no turn itself.
type apiEngine struct {
	eng      *engine.Engine
	orgs     *settings.Service
	runtimes engine.RuntimeSource
	agents   engine.AgentSource
	mcp      store.MCPServers
	turns    store.Turns
	now      func() time.Time
}

var _ httpapi.Engine = (*apiEngine)(nil)

// request is the engine request of c in a conversation.
func request(c httpapi.Caller, conversationID, message string) engine.Request {
	return engine.Request{
		Caller: turn.Caller{UserID: c.UserID, DisplayName: c.DisplayName, Department: c.Department,
			Organisation: c.OrgID, Timezone: c.Timezone, Permissions: permissions(c.Role)},
		OrgID: c.OrgID, ConversationID: conversationID, Message: message,
	}
}

// permissions are what a role may do on the web surface.
func permissions(role string) []string {
	if role == store.RoleAdmin {
		return []string{"manage_settings", "manage_agents", "manage_users"}
	}
	return nil
}

// apiTurn is httpapi.PendingTurn over the engine's collected facts.
type apiTurn struct{ c *engine.Collected }

// Conversation implements httpapi.PendingTurn.
func (t apiTurn) Conversation() store.Conversation { return t.c.Conversation() }

// Answers implements httpapi.PendingTurn.
func (t apiTurn) Answers() bool { return t.c.Paused() != nil }

// Begin implements httpapi.Engine.
func (a *apiEngine) Begin(ctx context.Context, c httpapi.Caller, conversationID, message string) (httpapi.PendingTurn, error) {
	col, err := a.eng.Collect(ctx, request(c, conversationID, message))
	if err != nil {
		return nil, err
	}
	return apiTurn{col}, nil
}

// Run implements httpapi.Engine.
func (a *apiEngine) Run(ctx context.Context, pt httpapi.PendingTurn, emit func(agent.Event)) error {
	p, err := a.eng.Prepare(ctx, pt.(apiTurn).c)
	if err != nil {
		return err
	}
	_, err = a.eng.Run(ctx, p, emit)
	return err
}

// Inspect implements httpapi.Engine: the request a message would send now,
// or the stored turn's toolset with why it left the other tools out;
// nothing runs and nothing is written.
func (a *apiEngine) Inspect(ctx context.Context, c httpapi.Caller, conversationID, turnID, message string) (httpapi.Inspection, error) {
	ins, err := a.eng.Inspect(ctx, request(c, conversationID, message), turnID)
	if err != nil {
		return httpapi.Inspection{}, err
	}
	s := ins.Start
	out := httpapi.Inspection{
		TurnID: s.Facts.TurnID, Agent: s.Facts.Agent.Name,
		Model:  s.Facts.Model.Provider + ":" + s.Facts.Model.Name,
		System: s.Request.System, Context: s.Request.Context, Tools: s.Request.Tools,
		Sizes: s.Request.Sizes, Excluded: ins.Excluded, Warnings: ins.Warnings,
		Intent: []httpapi.IntentMatch{}, Declared: ins.Declared, Origins: origins(s.Toolset),
	}
	for _, m := range ins.Matches {
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
	ea, err := agentOf(ag)
	if err != nil {
		return httpapi.AgentValidation{}, err
	}
	r := request(c, "validate", "")
	r.Agent = &ea
	s, err := a.eng.Select(ctx, r)
	if err != nil {
		return httpapi.AgentValidation{}, err
	}
	req, err := s.Assemble()
	if err != nil {
		return httpapi.AgentValidation{}, &httpapi.BadRequest{Msg: err.Error()}
	}
	allow, err := orgAllowlistWarnings(ctx, a.orgs, a.mcp, c.OrgID, ag)
	if err != nil {
		return httpapi.AgentValidation{}, err
	}
	return httpapi.AgentValidation{Name: ag.Name, Warnings: req.Warnings, Allowlist: allow}, nil
}

// Catalog implements httpapi.Engine: the organisation's built-ins under
// its settings and its enabled MCP servers' tools.
func (a *apiEngine) Catalog(ctx context.Context, c httpapi.Caller) (httpapi.Catalog, error) {
	cat, err := a.eng.Catalog(ctx, c.OrgID)
	if err != nil {
		return httpapi.Catalog{}, err
	}
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
	return a.orgs.Show(ctx, c.OrgID)
}

// UpdateSettings implements httpapi.Engine.
func (a *apiEngine) UpdateSettings(ctx context.Context, c httpapi.Caller, u settings.Update) (settings.View, error) {
	return a.orgs.Update(ctx, c.OrgID, u)
}

// consoleSession is the turn an agent would give the caller before
// Deliberate Tool Mode, under the caller's console conversation.
func (a *apiEngine) consoleSession(ctx context.Context, c httpapi.Caller, agentName string) (*engine.Session, error) {
	r := request(c, consoleConversation(c.UserID), "")
	r.AgentName = agentName
	return a.eng.Select(ctx, r)
}

// ConsoleTools implements httpapi.Engine.
func (a *apiEngine) ConsoleTools(ctx context.Context, c httpapi.Caller, agentName string) ([]httpapi.ConsoleTool, error) {
	s, err := a.consoleSession(ctx, c, agentName)
	if err != nil {
		return nil, err
	}
	out := []httpapi.ConsoleTool{}
	for _, t := range s.Toolset.Tools() {
		d := t.Declaration()
		out = append(out, httpapi.ConsoleTool{
			Name: d.Name, Family: t.Family(), Description: d.Description,
			Access: t.Spec().Access.String(), InputSchema: d.Parameters,
		})
	}
	return out, nil
}

// RunTool implements httpapi.Engine: one call through the dispatcher, in a
// console turn recorded under the caller's console conversation.
func (a *apiEngine) RunTool(ctx context.Context, c httpapi.Caller, agentName, name string, args json.RawMessage) (httpapi.ToolRun, error) {
	s, err := a.consoleSession(ctx, c, agentName)
	if err != nil {
		return httpapi.ToolRun{}, err
	}
	if _, ok := s.Toolset.Lookup(name); !ok {
		return httpapi.ToolRun{}, &httpapi.BadRequest{Msg: fmt.Sprintf("agent %q has no tool %q for you", agentName, name)}
	}
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	if err := a.turns.PutTurn(ctx, s.Turn("", "")); err != nil {
		return httpapi.ToolRun{}, fmt.Errorf("record console turn: %w", err)
	}
	start := a.now()
	res, err := a.eng.Call(ctx, s, dispatch.Call{ID: "console", Name: name, Args: args})
	if err != nil {
		return httpapi.ToolRun{}, fmt.Errorf("console call %s: %w", name, err)
	}
	return httpapi.ToolRun{Tool: name, Result: res.Content, IsError: res.IsError, DurationMS: a.now().Sub(start).Milliseconds()}, nil
}

// ModelStatus implements httpapi.Engine: whether the agent's model opens
// under the organisation's settings.
func (a *apiEngine) ModelStatus(ctx context.Context, c httpapi.Caller, agentName string) (httpapi.ModelStatus, error) {
	ag, err := a.agents.Agent(ctx, c.OrgID, agentName)
	if errors.Is(err, store.ErrNotFound) {
		return httpapi.ModelStatus{}, &httpapi.BadRequest{Msg: fmt.Sprintf("no agent named %q", agentName)}
	}
	if err != nil {
		return httpapi.ModelStatus{}, err
	}
	out := httpapi.ModelStatus{Model: ag.Model.Provider + ":" + ag.Model.Name}
	rt, err := a.runtimes.Runtime(ctx, c.OrgID)
	if err != nil {
		return httpapi.ModelStatus{}, err
	}
	if _, err := rt.Models.Open(ctx, ag.Model); err != nil {
		out.Help = "no model is connected: " + err.Error() + " (admins can add a provider key in Settings)"
		return out, nil
	}
	out.Connected = true
	return out, nil
}
