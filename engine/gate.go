package engine

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/intent"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/turn"
)

// Gated is Deliberate Tool Mode's decision for one turn: the narrowed
// toolset, why each tool in it is declared (for the inspector) and, per
// tool the mode opened, the match that opened it (for the thought log;
// the always-on helpers it kept are not there).
type Gated struct {
	Toolset registry.Toolset
	// Active is false when the mode is off for the turn.
	Active bool
	// Result is what the detector matched.
	Result intent.Result
	// Open are the conversation's open targets, in the order they opened.
	Open []string
	// Declared says why each declared tool is declared; nil when off.
	Declared []intent.Declared
	openBy   map[string]intent.Match
}

// deliberateSettings reads the organisation's settings with the agent's
// override and the user's mode (unless the request overrides it), and
// compiles the organisation's custom triggers when the mode is active.
func (e *Engine) deliberateSettings(ctx context.Context, r Request, ag turn.Deliberate) (intent.Settings, *intent.Custom, error) {
	st := e.cfg.Repos.Intents
	switch {
	case e.cfg.Detector == nil:
		return intent.Settings{}, nil, nil
	case r.Deliberate != nil:
		return *r.Deliberate, nil, nil
	case st == nil:
		return intent.Settings{}, nil, nil
	}
	s, err := st.GetIntentSettings(ctx, r.OrgID)
	if err != nil {
		return intent.Settings{}, nil, fmt.Errorf("read deliberate tool mode settings: %w", err)
	}
	mode := r.UserMode
	if mode == "" {
		if mode, err = st.GetUserIntentMode(ctx, r.OrgID, r.Caller.UserID); err != nil {
			return intent.Settings{}, nil, fmt.Errorf("read deliberate tool mode override: %w", err)
		}
	}
	h := s.HistoryTurns
	if h < 0 {
		h = intent.DefaultHistoryTurns
	}
	if ag.HistoryTurns != nil {
		h = *ag.HistoryTurns
	}
	enabled := s.Enabled
	if ag.Enabled != nil {
		enabled = *ag.Enabled
	}
	set := intent.Settings{Enabled: enabled, UserMode: mode, HistoryTurns: h, GateAlwaysOn: s.GateAlwaysOn}
	if s.ClassifierShift != nil {
		shift := float64(*s.ClassifierShift) / 100
		set.ClassifierShift = &shift
	}
	if !set.Active() {
		return set, nil, nil
	}
	ts, err := st.ListIntentTriggers(ctx, r.OrgID)
	if err != nil {
		return intent.Settings{}, nil, fmt.Errorf("read custom triggers: %w", err)
	}
	m := map[string][]string{}
	for _, t := range ts {
		m[t.Target] = append(m[t.Target], t.Phrase)
	}
	custom, err := intent.CompileCustom(m)
	if err != nil {
		return intent.Settings{}, nil, fmt.Errorf("custom triggers: %w", err)
	}
	return set, custom, nil
}

// history turns the conversation's stored messages into what the detector
// reads: the last FollowupWindow user and assistant messages.
func history(msgs []store.Message) []intent.Message {
	var out []intent.Message
	for _, m := range msgs {
		switch m.Role {
		case "user":
			out = append(out, intent.Message{Role: intent.RoleUser, Text: m.Content})
		case "assistant":
			if strings.TrimSpace(m.Content) != "" {
				out = append(out, intent.Message{Role: intent.RoleAssistant, Text: m.Content})
			}
		}
	}
	if len(out) > intent.FollowupWindow+intent.MaxHistoryTurns {
		out = out[len(out)-intent.FollowupWindow-intent.MaxHistoryTurns:]
	}
	return out
}

// detect runs the mode's detection for a turn whose mode is active: the
// message (with the conversation's recent messages) opens targets; they
// join the conversation's open targets, which stay open for the rest of
// the conversation in the order they opened. It returns the detection
// and the open targets, which Gate narrows the toolset to (with the
// always-on helpers, unless the organisation gates those too).
//
// With dryRun the conversation's open targets are read, not written: the
// result is what the turn would declare.
func (e *Engine) detect(ctx context.Context, c *Collected, message string, dryRun bool) (intent.Result, []string, error) {
	set, f := c.dtm, c.facts
	res := e.cfg.Detector.Detect(intent.Input{Text: message, Attachments: attachmentKinds(f), History: history(c.history),
		HistoryTurns: set.HistoryTurns, Custom: c.custom, Shift: set.ClassifierShift})
	res = e.semantic(ctx, f.Place.OrgID, message, res)
	record := res.Targets
	if dryRun {
		record = nil
	}
	var open []string
	if st := e.cfg.Repos.Intents; st != nil && f.Place.ConversationID != "" {
		var err error
		if open, err = st.OpenIntentTargets(ctx, f.Place.OrgID, f.Place.ConversationID, record); err != nil {
			return intent.Result{}, nil, fmt.Errorf("record open targets: %w", err)
		}
	}
	if dryRun || e.cfg.Repos.Intents == nil {
		for _, t := range res.Targets {
			if !slices.Contains(open, t) {
				open = append(open, t)
			}
		}
	}
	return res, open, nil
}

// semantic adds to res the families the semantic stage opens for the
// message under the organisation's embedding model, when the engine has
// the stage and the organisation a model. The stage never fails a turn:
// without an answer in its time (intent.SemanticOptions.Timeout), or
// with an error, res is kept and a warning logged.
func (e *Engine) semantic(ctx context.Context, orgID, message string, res intent.Result) intent.Result {
	if e.cfg.Semantic == nil || e.cfg.Embeddings == nil || strings.TrimSpace(message) == "" {
		return res
	}
	em, err := e.cfg.Embeddings.Embedder(ctx, orgID)
	if err != nil {
		e.cfg.Logger.Warn("deliberate tool mode: semantic stage skipped", "org", orgID, "err", err)
		return res
	}
	if em == nil {
		return res
	}
	ms, err := e.cfg.Semantic.Match(ctx, em, message, res)
	if err != nil {
		e.cfg.Logger.Warn("deliberate tool mode: semantic stage skipped", "org", orgID, "model", em.Model().Ref, "err", err)
		return res
	}
	return res.With(ms...)
}

// gated is the mode's decision for a toolset Gate narrowed for open
// under opts, with why each declared tool is declared and, per tool the
// mode opened, the match that opened it.
func gated(ts registry.Toolset, res intent.Result, open []string, opts intent.GateOptions) Gated {
	g := Gated{Toolset: ts, Active: true, Result: res, Open: open, openBy: map[string]intent.Match{}}
	g.Declared = intent.Explain(ts, res, open, opts)
	for _, t := range ts.Tools() {
		if m, ok := intent.Opening(t, res, open); ok && !opts.Keeps(t) {
			g.openBy[t.Name()] = m
		}
	}
	return g
}

// thoughtLog returns an event sink that, besides passing events on to
// next, records a thought-log entry the first time in the turn a tool the
// mode opened is called: the tool, the trigger and its source.
func (g Gated) thoughtLog(ctx context.Context, st store.Messages, orgID string, logger *slog.Logger, next func(agent.Event)) func(agent.Event) {
	if !g.Active || st == nil {
		return next
	}
	var mu sync.Mutex
	seen := map[string]bool{}
	return func(ev agent.Event) {
		next(ev)
		if ev.Kind == agent.EventDeclared && len(ev.Actions) > 0 {
			g.logDeclared(ctx, st, orgID, logger, ev)
			return
		}
		if ev.Kind != agent.EventToolCall || ev.Call == nil {
			return
		}
		m, ok := g.openBy[ev.Call.Name]
		mu.Lock()
		first := ok && !seen[ev.Call.Name]
		seen[ev.Call.Name] = true
		mu.Unlock()
		if !first {
			return
		}
		note := fmt.Sprintf("Tool %s was used after deliberate tool mode opened %s. Trigger: %s. Source: %s.",
			ev.Call.Name, m.Target, strings.ReplaceAll(m.Trigger, "`", "'"), m.Source)
		logger.Info("deliberate tool mode: tool used", "tool", ev.Call.Name, "target", m.Target, "trigger", m.Trigger, "source", m.Source)
		if _, err := st.AppendMessage(ctx, orgID, store.Message{
			ConversationID: ev.ConversationID, TurnID: ev.TurnID, Role: store.RoleThought,
			Content: note, ToolName: ev.Call.Name,
		}); err != nil {
			logger.Warn("thought log not recorded", "err", err)
		}
	}
}

// logDeclared records a thought-log entry for tools the model declared
// mid-turn through the mode's recovery tool (agent.EventDeclared): they
// were opened by the model, not by the message.
func (g Gated) logDeclared(ctx context.Context, st store.Messages, orgID string, logger *slog.Logger, ev agent.Event) {
	note := fmt.Sprintf("Deliberate tool mode: the model opened %s with %s during the turn.",
		strings.Join(ev.Actions, ", "), intent.RecoveryTool)
	logger.Info("deliberate tool mode: tools opened by the model", "tools", ev.Actions)
	if _, err := st.AppendMessage(ctx, orgID, store.Message{
		ConversationID: ev.ConversationID, TurnID: ev.TurnID, Role: store.RoleThought,
		Content: note, ToolName: intent.RecoveryTool,
	}); err != nil {
		logger.Warn("thought log not recorded", "err", err)
	}
}

// attachmentKinds are the kinds of files the detection sees on the
// message: a document while the conversation has files attached
// (turn.Facts.Attachments), which opens the targets that read them. The
// targets stay open once opened, so seeing the files on every later
// message opens nothing new.
func attachmentKinds(f turn.Facts) []string {
	if f.Attachments > 0 {
		return []string{intent.AttachDocument}
	}
	return nil
}
