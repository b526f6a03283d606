package app

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

// deliberate is Deliberate Tool Mode as the CLI runs it: the detector over
// the built-in packs (validated at start) and the store holding settings,
// custom triggers and each conversation's open targets.
type deliberate struct {
	detector *intent.Detector
	st       store.Store
	// userMode overrides the stored user mode when set (chat --dtm).
	userMode string
	logger   *slog.Logger
}

// gated is one turn's decision: the narrowed toolset, why each tool in it
// is declared (for the inspector) and, per tool the mode opened, the match
// that opened it (for the thought log; the always-on helpers it kept are
// not there).
type gated struct {
	Toolset  registry.Toolset
	Active   bool
	Result   intent.Result
	Open     []string
	Declared []intent.Declared
	openBy   map[string]intent.Match
}

// settings reads the community's settings with the agent's override, and
// the user's override.
func (d *deliberate) settings(ctx context.Context, orgID, userID string, ag turn.Deliberate) (intent.Settings, error) {
	s, err := d.st.GetIntentSettings(ctx, orgID)
	if err != nil {
		return intent.Settings{}, fmt.Errorf("read deliberate tool mode settings: %w", err)
	}
	mode := d.userMode
	if mode == "" {
		if mode, err = d.st.GetUserIntentMode(ctx, orgID, userID); err != nil {
			return intent.Settings{}, fmt.Errorf("read deliberate tool mode override: %w", err)
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
	return intent.Settings{Enabled: enabled, UserMode: mode, HistoryTurns: h, GateAlwaysOn: s.GateAlwaysOn}, nil
}

// custom compiles the community's custom triggers.
func (d *deliberate) custom(ctx context.Context, orgID string) (*intent.Custom, error) {
	ts, err := d.st.ListIntentTriggers(ctx, orgID)
	if err != nil {
		return nil, fmt.Errorf("read custom triggers: %w", err)
	}
	m := map[string][]string{}
	for _, t := range ts {
		m[t.Target] = append(m[t.Target], t.Phrase)
	}
	return intent.CompileCustom(m)
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

// gate applies the mode to a selected toolset. Inactive, the toolset is
// unchanged. Active, the message (with the conversation's recent messages)
// opens targets; they join the conversation's open targets, which stay open
// for the rest of the conversation in the order they opened, and the
// toolset is narrowed to them and to the always-on helpers (unless the
// community gates those too).
//
// With dryRun the conversation's open targets are read, not written: the
// result is what the turn would declare.
func (d *deliberate) gate(ctx context.Context, cat *registry.Catalog, f turn.Facts, ts registry.Toolset, message string, dryRun bool) (gated, error) {
	set, err := d.settings(ctx, f.Place.OrgID, f.Caller.UserID, f.Agent.Deliberate)
	if err != nil || !set.Active() {
		return gated{Toolset: ts}, err
	}
	custom, err := d.custom(ctx, f.Place.OrgID)
	if err != nil {
		return gated{}, err
	}
	msgs, err := d.st.ListMessages(ctx, f.Place.OrgID, f.Place.ConversationID, 0)
	if err != nil {
		return gated{}, fmt.Errorf("read conversation: %w", err)
	}
	res := d.detector.Detect(intent.Input{Text: message, History: history(msgs), HistoryTurns: set.HistoryTurns, Custom: custom})
	record := res.Targets
	if dryRun {
		record = nil
	}
	open, err := d.st.OpenIntentTargets(ctx, f.Place.OrgID, f.Place.ConversationID, record)
	if err != nil {
		return gated{}, fmt.Errorf("record open targets: %w", err)
	}
	if dryRun {
		for _, t := range res.Targets {
			if !slices.Contains(open, t) {
				open = append(open, t)
			}
		}
	}
	opts := set.GateOptions()
	g := gated{Toolset: intent.Gate(ts, cat, open, opts), Active: true, Result: res, Open: open, openBy: map[string]intent.Match{}}
	g.Declared = intent.Explain(g.Toolset, res, open, opts)
	for _, t := range g.Toolset.Tools() {
		if m, ok := intent.Opening(t, res, open); ok && !opts.Keeps(t) {
			g.openBy[t.Name()] = m
		}
	}
	return g, nil
}

// thoughtLog returns an event sink that, besides passing events on to
// next, records a thought-log entry the first time in the turn a tool the
// mode opened is called: the tool, the trigger and its source.
func (g gated) thoughtLog(ctx context.Context, st store.Messages, orgID string, logger *slog.Logger, next func(agent.Event)) func(agent.Event) {
	if !g.Active {
		return next
	}
	var mu sync.Mutex
	seen := map[string]bool{}
	return func(ev agent.Event) {
		next(ev)
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
