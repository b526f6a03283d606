package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/dispatch"
	"github.com/quiverhq/quiver/intent"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/prompt"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/settings"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// engine runs turns: the whole spine from facts to the recorded outcome,
// shared by every surface (the CLI chat, the HTTP API). It is safe for
// concurrent use by different conversations.
type engine struct {
	st     store.Store
	orgs   *settings.Service
	mcp    *mcpRuntime
	dtm    *deliberate
	runner *agent.Runner
	// disp runs the tool console's calls (the runner holds the same one).
	disp   *dispatch.Dispatcher
	now    func() time.Time
	logger *slog.Logger
}

// TurnRequest is one user message to run.
type TurnRequest struct {
	// Facts are the turn's facts; TurnID is assigned here.
	Facts turn.Facts
	// Model serves the turn; its reference replaces Facts.Model's
	// provider and name. Nil is allowed only with DryRun (the inspector
	// works with no model connected): declarations are then not checked
	// against a model.
	Model llm.Model
	// Message is the user's message (or the answer to a paused turn).
	Message string
	// UserMode overrides Deliberate Tool Mode's stored user mode ("on",
	// "off"); "" uses the stored one.
	UserMode string
	// DryRun prepares without writing anything (the inspector): the
	// targets Deliberate Tool Mode opens are not recorded.
	DryRun bool
}

// Prepared is a turn ready to run, for callers that show what it will send
// (the inspector) or run it.
type Prepared struct {
	Start   agent.Start
	Resume  bool
	Catalog *registry.Catalog
	// Intent is what Deliberate Tool Mode decided; Active false when off.
	Intent gated
}

// prepare collects everything a turn needs: the organisation's catalog
// (built-ins plus MCP tools), the paused turn it answers if any, the
// selected and gated toolset narrowed to what the model can take, and the
// assembled request. Warnings are the prompt's template warnings.
func (e *engine) prepare(ctx context.Context, r TurnRequest) (Prepared, []string, error) {
	f := r.Facts
	if r.Model != nil {
		f.Model.Provider, f.Model.Name, _ = strings.Cut(r.Model.Ref(), ":")
	}
	paused, err := e.pausedTurn(ctx, f.Place.OrgID, f.Place.ConversationID)
	if err != nil {
		return Prepared{}, nil, err
	}
	cat, err := e.catalog(ctx, &f)
	if err != nil {
		return Prepared{}, nil, err
	}
	p := Prepared{Catalog: cat, Resume: paused != nil}
	var ts registry.Toolset
	if paused != nil {
		f.TurnID, f.Caller.Timezone = paused.ID, paused.Timezone
		ts = restore(cat, f, paused.Tools).WithSelected(paused.Selected)
	} else {
		f.TurnID = agent.NewID("turn_")
		d := *e.dtm
		if r.UserMode != "" {
			d.userMode = r.UserMode
		}
		if p.Intent, err = d.gate(ctx, cat, f, cat.Select(f), r.Message, r.DryRun); err != nil {
			return Prepared{}, nil, err
		}
		ts = p.Intent.Toolset
	}
	if r.Model != nil {
		ts = ts.Narrow(cat, func(t *tool.Tool) (bool, string) {
			if err := r.Model.CheckTool(llm.ToolDef(t.Declaration())); err != nil {
				return false, "the model cannot take its schema: " + err.Error()
			}
			return true, ""
		})
		p.Intent.Declared = stillDeclared(p.Intent.Declared, ts)
	}
	req, err := prompt.Assemble(f, ts)
	if err != nil {
		return Prepared{}, nil, fmt.Errorf("assemble: %w", err)
	}
	p.Start = agent.Start{Facts: f, Toolset: ts, Request: req, Model: r.Model, Message: r.Message,
		Declared: storedDeclared(p.Intent.Declared)}
	return p, req.Warnings, nil
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

// catalog is the turn catalog of f's organisation (see orgCatalog).
func (e *engine) catalog(ctx context.Context, f *turn.Facts) (*registry.Catalog, error) {
	return orgCatalog(ctx, e.orgs, e.mcp, f, Env{Logger: e.logger})
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

// run runs a prepared turn, reporting events to emit (with the thought log
// of Deliberate Tool Mode in between).
func (e *engine) run(ctx context.Context, p Prepared, emit func(agent.Event)) (agent.Outcome, error) {
	if p.Resume {
		return e.runner.Resume(ctx, p.Start, emit)
	}
	emit = p.Intent.thoughtLog(ctx, e.st, p.Start.Facts.Place.OrgID, e.logger, emit)
	return e.runner.Run(ctx, p.Start, emit)
}

// pausedTurn returns the conversation's last turn when it is paused.
func (e *engine) pausedTurn(ctx context.Context, orgID, conversationID string) (*store.Turn, error) {
	msgs, err := e.st.ListMessages(ctx, orgID, conversationID, 0)
	if err != nil || len(msgs) == 0 {
		return nil, err
	}
	t, err := e.st.GetTurn(ctx, orgID, msgs[len(msgs)-1].TurnID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil || t.Status != store.TurnPaused {
		return nil, err
	}
	return &t, nil
}
