package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/quiverhq/quiver/accounts"
	"github.com/quiverhq/quiver/dispatch"
	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// consoleConversation is the conversation a user's console runs are
// recorded under: one per user, so read_transcript and stored results stay
// the user's own.
func consoleConversation(userID string) string { return consolePrefix + userID }

// consolePrefix begins every tool console conversation id. The console
// records turns and results under it without a conversation record, so
// the CLI, which may name any id, refuses ids with this prefix.
const consolePrefix = "console-"

// consoleToolset is the toolset an agent would get from the caller before
// Deliberate Tool Mode, with the facts it was selected for.
func (a *apiEngine) consoleToolset(ctx context.Context, c httpapi.Caller, agentName string) (registry.Toolset, turn.Facts, error) {
	stored, err := a.st.GetAgent(ctx, c.OrgID, agentName)
	if errors.Is(err, store.ErrNotFound) {
		return registry.Toolset{}, turn.Facts{}, &httpapi.BadRequest{Msg: fmt.Sprintf("no agent named %q", agentName)}
	}
	if err != nil {
		return registry.Toolset{}, turn.Facts{}, err
	}
	ag, err := config.ParseAgent(stored.Definition)
	if err != nil {
		return registry.Toolset{}, turn.Facts{}, fmt.Errorf("stored agent %s: %w", agentName, err)
	}
	f, err := a.facts(c, ag, consoleConversation(c.UserID))
	if err != nil {
		return registry.Toolset{}, turn.Facts{}, &httpapi.BadRequest{Msg: err.Error()}
	}
	cat, err := a.eng.catalog(ctx, &f)
	if err != nil {
		return registry.Toolset{}, turn.Facts{}, err
	}
	return cat.Select(f), f, nil
}

// ConsoleTools implements httpapi.Engine.
func (a *apiEngine) ConsoleTools(ctx context.Context, c httpapi.Caller, agentName string) ([]httpapi.ConsoleTool, error) {
	ts, _, err := a.consoleToolset(ctx, c, agentName)
	if err != nil {
		return nil, err
	}
	out := []httpapi.ConsoleTool{}
	for _, name := range ts.Names() {
		t, ok := ts.Lookup(name)
		if !ok {
			continue
		}
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
	ts, f, err := a.consoleToolset(ctx, c, agentName)
	if err != nil {
		return httpapi.ToolRun{}, err
	}
	if _, ok := ts.Lookup(name); !ok {
		return httpapi.ToolRun{}, &httpapi.BadRequest{Msg: fmt.Sprintf("agent %q has no tool %q for you", agentName, name)}
	}
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	f.TurnID = "console_" + accounts.NewSecret()[:16]
	if err := a.st.PutTurn(ctx, storedTurn(f, ts)); err != nil {
		return httpapi.ToolRun{}, fmt.Errorf("record console turn: %w", err)
	}
	t := dispatch.Turn{Toolset: ts, Scope: tool.Scope{
		OrgID: c.OrgID, UserID: c.UserID, ConversationID: f.Place.ConversationID, TurnID: f.TurnID,
	}}
	start := a.now()
	res, err := a.eng.disp.Call(ctx, t, dispatch.Call{ID: "console", Name: name, Args: args})
	if err != nil {
		return httpapi.ToolRun{}, fmt.Errorf("console call %s: %w", name, err)
	}
	return httpapi.ToolRun{Tool: name, Result: res.Content, IsError: res.IsError, DurationMS: a.now().Sub(start).Milliseconds()}, nil
}

// ModelStatus implements httpapi.Engine.
func (a *apiEngine) ModelStatus(ctx context.Context, c httpapi.Caller, agentName string) (httpapi.ModelStatus, error) {
	stored, err := a.st.GetAgent(ctx, c.OrgID, agentName)
	if errors.Is(err, store.ErrNotFound) {
		return httpapi.ModelStatus{}, &httpapi.BadRequest{Msg: fmt.Sprintf("no agent named %q", agentName)}
	}
	if err != nil {
		return httpapi.ModelStatus{}, err
	}
	ag, err := config.ParseAgent(stored.Definition)
	if err != nil {
		return httpapi.ModelStatus{}, fmt.Errorf("stored agent %s: %w", agentName, err)
	}
	m, err := ag.TurnModel("")
	if err != nil {
		return httpapi.ModelStatus{}, &httpapi.BadRequest{Msg: err.Error()}
	}
	out := httpapi.ModelStatus{Model: m.Provider + ":" + m.Name}
	if _, err := a.model(ctx, c.OrgID, m); err != nil {
		var br *httpapi.BadRequest
		if !errors.As(err, &br) {
			return httpapi.ModelStatus{}, err
		}
		out.Help = br.Msg + " (admins can add a provider key in Settings)"
		return out, nil
	}
	out.Connected = true
	return out, nil
}
