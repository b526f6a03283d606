package engine

import (
	"context"
	"fmt"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/dispatch"
	"github.com/quiverhq/quiver/prompt"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// Session is a turn without a model, for the surfaces that run tool calls
// by hand (the tool console, quiver call, mcp serve): its facts and the
// toolset selected for them, before Deliberate Tool Mode.
type Session struct {
	*Collected
	// Catalog is the turn's catalog.
	Catalog *registry.Catalog
	// Toolset is the selected toolset.
	Toolset registry.Toolset
}

// Select collects the facts of a turn that runs calls by hand and selects
// its toolset. It reads the agent, the organisation's runtime and what is
// attached to the conversation and the agent, not the conversation
// itself: the surface claims it (see Record).
func (e *Engine) Select(ctx context.Context, r Request) (*Session, error) {
	if r.Caller.UserID == "" || r.OrgID == "" {
		return nil, fmt.Errorf("engine: a request needs its caller's user and organisation")
	}
	c := &Collected{req: r}
	ag, err := e.agent(ctx, r, c.conv)
	if err != nil {
		return nil, err
	}
	if c.runtime, err = e.cfg.Runtime.Runtime(ctx, r.OrgID); err != nil {
		return nil, err
	}
	c.facts = e.facts(r, ag, c)
	// What is attached to the conversation and the agent decides tools
	// (read_document, search_knowledge) here as in a turn.
	if err := e.attached(ctx, &c.facts); err != nil {
		return nil, err
	}
	cat := e.catalog(ctx, c)
	return &Session{Collected: c, Catalog: cat, Toolset: cat.Select(c.facts)}, nil
}

// Turn is the session's turn record as stored for turnID (its facts'
// turn unless turnID is set, as each MCP session's is): the timezone
// captured at its start, the frozen toolset and why it left each other
// tool out, so the inspector shows the reasons of that time.
func (s *Session) Turn(turnID, conversationID string) store.Turn {
	f := s.facts
	if turnID == "" {
		turnID = f.TurnID
	}
	if conversationID == "" {
		conversationID = f.Place.ConversationID
	}
	return store.Turn{
		ID: turnID, OrgID: f.Place.OrgID, UserID: f.Caller.UserID, ConversationID: conversationID,
		Agent: f.Agent.Name, Timezone: f.Caller.Timezone, Payer: f.Payer, Tools: s.Toolset.Names(),
		Excluded: agent.StoredExclusions(s.Toolset), Selected: s.Toolset.Selected(), Status: store.TurnDone, StartedAt: f.Start.UTC(),
	}
}

// Call runs one call of the session's toolset through the dispatcher,
// with the scope of the session's facts. The caller records the turn
// first (Session.Turn).
func (e *Engine) Call(ctx context.Context, s *Session, call dispatch.Call) (tool.Result, error) {
	if e.cfg.Dispatcher == nil {
		return tool.Result{}, fmt.Errorf("engine: no dispatcher configured")
	}
	return e.cfg.Dispatcher.Call(ctx, dispatch.Turn{Toolset: s.Toolset, Scope: s.facts.Scope()}, call)
}

// Assemble is the request the session's toolset gives its facts (what
// an agent check renders against).
func (s *Session) Assemble() (prompt.Request, error) { return prompt.Assemble(s.facts, s.Toolset) }

// Catalog is the organisation's turn catalog today: its built-ins under
// its settings with its MCP servers' tools.
func (e *Engine) Catalog(ctx context.Context, orgID string) (*registry.Catalog, error) {
	rt, err := e.cfg.Runtime.Runtime(ctx, orgID)
	if err != nil {
		return nil, err
	}
	c := &Collected{runtime: rt, facts: turn.Facts{Place: turn.Place{OrgID: orgID}, Network: rt.Network}}
	return e.catalog(ctx, c), nil
}
