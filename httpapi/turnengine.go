package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/dispatch"
	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/internal/clock"
	"github.com/quiverhq/quiver/mcpclient"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/settings"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/turn"
)

// EngineConfig is what NewEngine maps the API onto. Every field is
// required except Now and Sizes, whose zero values are documented on them.
type EngineConfig struct {
	// Engine collects, prepares, runs and inspects the turns, selects
	// the toolsets of agent checks and the console, and runs console
	// calls.
	Engine *engine.Engine
	// Settings serves the settings endpoints, and the built-in catalog
	// under an organisation's settings that agent allowlists are checked
	// against.
	Settings *settings.Service
	// Runtimes and Agents serve ModelStatus: the organisation's models
	// and its stored agents.
	Runtimes engine.RuntimeSource
	Agents   engine.AgentSource
	// MCPServers are the registrations agent allowlists are checked
	// against, enabled or not.
	MCPServers store.MCPServers
	// Turns records the console's turns.
	Turns store.Turns
	// ParseAgent decodes and validates an agent definition (the YAML an
	// admin authored); its error is the definition's fault and is
	// answered 400 invalid_agent with its message.
	ParseAgent func(definition []byte) (engine.Agent, error)
	// Sizes are the catalog's definition totals and ceilings the catalog
	// endpoint reports beside the tools; the zero value reports zeros.
	Sizes CatalogSizes
	// Now times console calls; nil means clock.Now.
	Now func() time.Time
}

// CatalogSizes are the definition totals of the built-in catalog against
// their ceilings, in characters (Catalog's fields of the same names).
type CatalogSizes struct {
	AlwaysPaidChars, AlwaysPaidCeiling int
	WidestChars, WidestCeiling         int
}

// ConsoleConversation is the conversation a user's console runs are
// recorded under: one per user, so read_transcript and stored results
// stay the user's own. It begins with engine.ConsolePrefix, which no
// caller may name.
func ConsoleConversation(userID string) string { return engine.ConsolePrefix + userID }

// NewEngine is the API's Engine over the turn engine: it maps the API's
// callers to engine requests and the engine's answers to the wire, and
// builds no turn itself.
func NewEngine(c EngineConfig) Engine {
	if c.Now == nil {
		c.Now = clock.Now
	}
	return &turnEngine{c}
}

// turnEngine is NewEngine's Engine.
type turnEngine struct{ cfg EngineConfig }

// request is the engine request of c in a conversation.
func request(c Caller, conversationID, message string) engine.Request {
	return engine.Request{
		Caller: turn.Caller{UserID: c.UserID, DisplayName: c.DisplayName, Department: c.Department,
			Organisation: c.OrgID, Timezone: c.Timezone, Permissions: permissions(c.Role)},
		OrgID: c.OrgID, ConversationID: conversationID, Message: message,
	}
}

// Permissions are what a role may do on the web surface: the caller's
// permissions of every turn the API (or a scheduled task of the web
// chat) starts.
func Permissions(role string) []string { return permissions(role) }

// permissions are what a role may do on the web surface.
func permissions(role string) []string {
	if role == store.RoleAdmin {
		return []string{"manage_settings", "manage_agents", "manage_users"}
	}
	return nil
}

// pendingTurn is PendingTurn over the engine's collected facts; fresh is
// the conversation a New turn starts (nil for a stored one).
type pendingTurn struct {
	c     *engine.Collected
	fresh *store.Conversation
}

// Conversation implements PendingTurn.
func (t pendingTurn) Conversation() store.Conversation {
	if t.fresh != nil {
		return *t.fresh
	}
	return t.c.Conversation()
}

// New implements PendingTurn.
func (t pendingTurn) New() bool { return t.fresh != nil }

// TurnID implements PendingTurn.
func (t pendingTurn) TurnID() string { return t.c.Facts().TurnID }

// LastSeq implements PendingTurn.
func (t pendingTurn) LastSeq() int64 { return t.c.LastSeq() }

// Answers implements PendingTurn.
func (t pendingTurn) Answers() bool { return t.c.Paused() != nil }

// Begin implements Engine.
func (a *turnEngine) Begin(ctx context.Context, c Caller, conversationID, message, turnID, replaces string, start *NewConversation) (PendingTurn, error) {
	r := request(c, conversationID, message)
	r.TurnID, r.Replaces = turnID, replaces
	if start != nil {
		r.Create, r.AgentName, r.ModelRef = true, start.Agent, start.Model
	}
	col, err := a.cfg.Engine.Collect(ctx, r)
	if err != nil {
		return nil, err
	}
	conv := col.Conversation()
	switch {
	case start == nil:
		return pendingTurn{c: col}, nil
	case conv.ID != "" && conv.Agent != start.Agent:
		return nil, &BadRequest{Msg: fmt.Sprintf("the conversation exists, with agent %q: send its messages without agent", conv.Agent)}
	case conv.ID != "":
		return pendingTurn{c: col}, nil
	}
	return pendingTurn{c: col, fresh: &store.Conversation{ID: conversationID, OrgID: c.OrgID, UserID: c.UserID,
		Agent: start.Agent, Model: start.Model}}, nil
}

// ModelChoices implements Engine.
func (a *turnEngine) ModelChoices(ctx context.Context, c Caller, agentName string) ([]engine.ModelChoice, error) {
	return a.cfg.Engine.ModelChoices(ctx, c.OrgID, agentName)
}

// CheckModel implements Engine.
func (a *turnEngine) CheckModel(ctx context.Context, c Caller, agentName, ref string) error {
	return a.cfg.Engine.CheckModel(ctx, c.OrgID, agentName, ref)
}

// Run implements Engine.
func (a *turnEngine) Run(ctx context.Context, pt PendingTurn, emit func(agent.Event)) error {
	p, err := a.cfg.Engine.Prepare(ctx, pt.(pendingTurn).c)
	if err != nil {
		return err
	}
	_, err = a.cfg.Engine.Run(ctx, p, emit)
	return err
}

// Inspect implements Engine: the request a message would send now, or
// the stored turn's toolset with why it left the other tools out; nothing
// runs and nothing is written.
func (a *turnEngine) Inspect(ctx context.Context, c Caller, conversationID, turnID, message string) (Inspection, error) {
	return a.inspect(ctx, request(c, conversationID, message), turnID)
}

// InspectDraft implements Engine: the engine's Inspect of a turn with no
// conversation, for the named agent.
func (a *turnEngine) InspectDraft(ctx context.Context, c Caller, agentName, message string) (Inspection, error) {
	r := request(c, "", message)
	r.AgentName = agentName
	return a.inspect(ctx, r, "")
}

// inspect is the engine's Inspect of r as the API shows it.
func (a *turnEngine) inspect(ctx context.Context, r engine.Request, turnID string) (Inspection, error) {
	ins, err := a.cfg.Engine.Inspect(ctx, r, turnID)
	if err != nil {
		return Inspection{}, err
	}
	s := ins.Start
	out := Inspection{
		TurnID: s.Facts.TurnID, Agent: s.Facts.Agent.Name,
		Model:  s.Facts.Model.Provider + ":" + s.Facts.Model.Name,
		System: s.Request.System, Context: s.Request.Context, Tools: s.Request.Tools,
		Sizes: s.Request.Sizes, Excluded: ins.Excluded, Warnings: ins.Warnings,
		Intent: []IntentMatch{}, Declared: ins.Declared, Origins: origins(s.Toolset),
		History: ins.History, Steps: ins.Steps,
	}
	out.Messages, out.TurnStart, out.Calls, out.Omitted = replayWire(ins.Replay)
	for _, m := range ins.Matches {
		out.Intent = append(out.Intent, IntentMatch{Family: m.Target, Trigger: m.Trigger, Source: m.Source})
	}
	return out, nil
}

// origins maps the set's MCP tools, in declaration order, to their servers
// and their names there; never nil.
func origins(ts registry.Toolset) []ToolOrigin {
	out := []ToolOrigin{}
	for _, t := range ts.Tools() {
		if o := t.Spec().Origin; o.Server != "" {
			out = append(out, ToolOrigin{Name: t.Name(), Server: o.Server, Tool: o.Tool})
		}
	}
	return out
}

// ValidateAgent implements Engine: the definition parses, its prompt
// renders against the widest toolset the caller's organisation could give
// it (its settings and MCP servers applied), and its allowlist is checked
// against the organisation's built-in tools and registered MCP servers.
func (a *turnEngine) ValidateAgent(ctx context.Context, c Caller, definition []byte) (AgentValidation, error) {
	ea, err := a.cfg.ParseAgent(definition)
	if err != nil {
		return AgentValidation{}, &BadRequest{Msg: err.Error()}
	}
	r := request(c, "validate", "")
	r.Agent = &ea
	s, err := a.cfg.Engine.Select(ctx, r)
	if err != nil {
		return AgentValidation{}, err
	}
	req, err := s.Assemble()
	if err != nil {
		return AgentValidation{}, &BadRequest{Msg: err.Error()}
	}
	v, err := a.cfg.Settings.Runtime(ctx, c.OrgID)
	if err != nil {
		return AgentValidation{}, err
	}
	allow, err := mcpclient.CheckAgent(ctx, v.Catalog(), a.cfg.MCPServers, c.OrgID, ea.Agent.Allow, ea.Agent.Switches)
	if err != nil {
		return AgentValidation{}, err
	}
	return AgentValidation{Name: ea.Agent.Name, Warnings: req.Warnings, Allowlist: allow}, nil
}

// Catalog implements Engine: the organisation's built-ins under its
// settings and its enabled MCP servers' tools, with the configured sizes.
func (a *turnEngine) Catalog(ctx context.Context, c Caller) (Catalog, error) {
	cat, err := a.cfg.Engine.Catalog(ctx, c.OrgID)
	if err != nil {
		return Catalog{}, err
	}
	s := a.cfg.Sizes
	out := Catalog{
		AlwaysPaidChars: s.AlwaysPaidChars, AlwaysPaidCeiling: s.AlwaysPaidCeiling,
		WidestChars: s.WidestChars, WidestCeiling: s.WidestCeiling,
	}
	for _, t := range cat.Tools() {
		sp := t.Spec()
		v := ToolView{
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

// Settings implements Engine.
func (a *turnEngine) Settings(ctx context.Context, c Caller) (settings.View, error) {
	return a.cfg.Settings.Show(ctx, c.OrgID)
}

// UpdateSettings implements Engine.
func (a *turnEngine) UpdateSettings(ctx context.Context, c Caller, u settings.Update) (settings.View, error) {
	return a.cfg.Settings.Update(ctx, c.OrgID, u)
}

// TestConnection implements Engine.
func (a *turnEngine) TestConnection(ctx context.Context, c Caller, t settings.ConnectionTest) (settings.ConnectionReport, error) {
	return a.cfg.Settings.TestConnection(ctx, c.OrgID, t)
}

// consoleSession is the turn an agent would give the caller before
// Deliberate Tool Mode, under the caller's console conversation.
func (a *turnEngine) consoleSession(ctx context.Context, c Caller, agentName string) (*engine.Session, error) {
	r := request(c, ConsoleConversation(c.UserID), "")
	r.AgentName = agentName
	return a.cfg.Engine.Select(ctx, r)
}

// ConsoleTools implements Engine.
func (a *turnEngine) ConsoleTools(ctx context.Context, c Caller, agentName string) ([]ConsoleTool, error) {
	s, err := a.consoleSession(ctx, c, agentName)
	if err != nil {
		return nil, err
	}
	out := []ConsoleTool{}
	for _, t := range s.Toolset.Tools() {
		d := t.Declaration()
		out = append(out, ConsoleTool{
			Name: d.Name, Family: t.Family(), Description: d.Description,
			Access: t.Spec().Access.String(), InputSchema: d.Parameters,
		})
	}
	return out, nil
}

// RunTool implements Engine: one call through the dispatcher, in a
// console turn recorded under the caller's console conversation.
func (a *turnEngine) RunTool(ctx context.Context, c Caller, agentName, name string, args json.RawMessage) (ToolRun, error) {
	s, err := a.consoleSession(ctx, c, agentName)
	if err != nil {
		return ToolRun{}, err
	}
	if _, ok := s.Toolset.Lookup(name); !ok {
		return ToolRun{}, &BadRequest{Msg: fmt.Sprintf("agent %q has no tool %q for you", agentName, name)}
	}
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	if err := a.cfg.Turns.PutTurn(ctx, s.Turn("", "")); err != nil {
		return ToolRun{}, fmt.Errorf("record console turn: %w", err)
	}
	start := a.cfg.Now()
	res, err := a.cfg.Engine.Call(ctx, s, dispatch.Call{ID: "console", Name: name, Args: args})
	if err != nil {
		return ToolRun{}, fmt.Errorf("console call %s: %w", name, err)
	}
	return ToolRun{Tool: name, Result: res.Content, IsError: res.IsError, DurationMS: a.cfg.Now().Sub(start).Milliseconds()}, nil
}

// ModelStatus implements Engine: whether the agent's model opens under
// the organisation's settings.
func (a *turnEngine) ModelStatus(ctx context.Context, c Caller, agentName string) (ModelStatus, error) {
	ag, err := a.cfg.Agents.Agent(ctx, c.OrgID, agentName)
	if errors.Is(err, store.ErrNotFound) {
		return ModelStatus{}, &BadRequest{Msg: fmt.Sprintf("no agent named %q", agentName)}
	}
	if err != nil {
		return ModelStatus{}, err
	}
	out := ModelStatus{Model: ag.Model.Provider + ":" + ag.Model.Name}
	rt, err := a.cfg.Runtimes.Runtime(ctx, c.OrgID)
	if err != nil {
		return ModelStatus{}, err
	}
	if _, err := rt.Models.Open(ctx, ag.Model); err != nil {
		out.Help = engine.NoModel(err) + " (admins can add a provider key in Settings)"
		return out, nil
	}
	out.Connected = true
	return out, nil
}
