package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/prompt"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/turn"
)

// run is one turn in progress.
type run struct {
	r       *Runner
	facts   turn.Facts
	toolset registry.Toolset
	// declared is why a gate declared each tool (Start.Declared).
	declared []store.Exclusion
	req      prompt.Request
	model    llm.Model
	rec      store.Turn
	history  []llm.Message
	// collected is Start.History: the messages read at the turn's start,
	// or nil to read them.
	collected []store.Message
	emit      func(Event)
	out       Outcome
}

// Run starts a new turn: it records the turn, its context message and the
// user's message, then loops. A turn whose facts carry no TurnID gets one
// from Config.IDs. emit (when non-nil) receives every event as
// it happens, from the calling goroutine. The error return is for failures
// the turn could not record; provider and tool failures end the turn with
// Outcome.Stop StopError and an EventError, and a nil error.
func (r *Runner) Run(ctx context.Context, s Start, emit func(Event)) (Outcome, error) {
	if s.Facts.TurnID == "" {
		s.Facts.TurnID = r.cfg.IDs.New("turn_")
	}
	ctx, release := r.bound(ctx)
	defer release()
	rn := r.newRun(s, emit)
	if err := rn.begin(ctx, s.Message); err != nil {
		return rn.out, err
	}
	return rn.loop(ctx)
}

// Resume continues a paused turn with the user's answer. s must carry the
// stored turn's id, timezone and restored toolset (see registry.Restore);
// the turn must be paused. The stored record is carried on as it is, so
// its toolset and its exclusions stay those of the turn's start, not the
// restored toolset's.
func (r *Runner) Resume(ctx context.Context, s Start, emit func(Event)) (Outcome, error) {
	ctx, release := r.bound(ctx)
	defer release()
	rn := r.newRun(s, emit)
	rec, err := r.cfg.Store.GetTurn(ctx, s.Facts.Place.OrgID, s.Facts.TurnID)
	if err != nil {
		return rn.out, fmt.Errorf("resume turn: %w", err)
	}
	if rec.Status != store.TurnPaused {
		return rn.out, fmt.Errorf("resume turn: turn %s is %s, not paused", rec.ID, rec.Status)
	}
	rn.rec = rec
	rn.rec.Status, rn.rec.Question, rn.rec.Suggested = store.TurnRunning, "", ""
	if err := rn.loadHistory(ctx); err != nil {
		return rn.out, err
	}
	if err := rn.append(ctx, store.Message{Role: string(llm.User), Content: s.Message}); err != nil {
		return rn.out, err
	}
	if err := rn.saveTurn(ctx); err != nil {
		return rn.out, err
	}
	return rn.loop(ctx)
}

func (r *Runner) newRun(s Start, emit func(Event)) *run {
	if emit == nil {
		emit = func(Event) {}
	}
	rn := &run{r: r, facts: s.Facts, toolset: s.Toolset, declared: s.Declared, req: s.Request, model: r.withIdle(s.Model), collected: s.History}
	rn.emit = func(ev Event) {
		ev.ConversationID, ev.TurnID = s.Facts.Place.ConversationID, s.Facts.TurnID
		emit(ev)
	}
	rn.out.TurnID = s.Facts.TurnID
	return rn
}

// begin records the conversation, the turn, the earlier history, the
// context message and the user's message.
func (rn *run) begin(ctx context.Context, message string) error {
	f := rn.facts
	if err := rn.touchConversation(ctx); err != nil {
		return err
	}
	rn.rec = store.Turn{
		ID: f.TurnID, OrgID: f.Place.OrgID, UserID: f.Caller.UserID, ConversationID: f.Place.ConversationID,
		Agent: f.Agent.Name, Model: rn.model.Ref(), Timezone: f.Caller.Timezone, Payer: f.Payer,
		Tools: rn.toolset.Names(), Excluded: StoredExclusions(rn.toolset), Declared: rn.declared,
		Selected: rn.toolset.Selected(),
		Status:   store.TurnRunning, StartedAt: f.Start.UTC(),
	}
	if err := rn.saveTurn(ctx); err != nil {
		return err
	}
	if err := rn.loadHistory(ctx); err != nil {
		return err
	}
	return rn.append(ctx, store.Message{Role: roleContext, Content: rn.req.Context}, store.Message{Role: string(llm.User), Content: message})
}

// StoredExclusions returns why ts left each catalog tool out, as a turn
// records them (store.Turn.Excluded): in ts's order, and never nil, so a
// turn that left nothing out is told apart from one stored before
// exclusions were recorded.
func StoredExclusions(ts registry.Toolset) []store.Exclusion {
	ex := ts.Excluded()
	out := make([]store.Exclusion, len(ex))
	for i, e := range ex {
		out[i] = store.Exclusion{Name: e.Name, Reason: e.Reason}
	}
	return out
}

func (rn *run) touchConversation(ctx context.Context) error {
	f := rn.facts
	now := rn.r.cfg.Now().UTC()
	// One atomic claim, not a read and an upsert: two callers racing on a
	// new ID cannot both own it, and a title set meanwhile is kept.
	c, err := rn.r.cfg.Store.ClaimConversation(ctx, store.Conversation{ID: f.Place.ConversationID, OrgID: f.Place.OrgID,
		UserID: f.Caller.UserID, Agent: f.Agent.Name, CreatedAt: now, UpdatedAt: now})
	switch {
	case err != nil:
		return fmt.Errorf("save conversation: %w", err)
	case c.UserID != f.Caller.UserID:
		return fmt.Errorf("conversation %s belongs to another user", c.ID)
	}
	return nil
}

// loadHistory reads the conversation so far into the model's view.
func (rn *run) loadHistory(ctx context.Context) error {
	msgs := rn.collected
	if msgs == nil {
		var err error
		if msgs, err = rn.r.cfg.Store.ListMessages(ctx, rn.facts.Place.OrgID, rn.facts.Place.ConversationID, 0); err != nil {
			return fmt.Errorf("load history: %w", err)
		}
	}
	rn.history = toLLM(trimHistory(msgs, rn.r.cfg.MaxHistory), rn.facts.TurnID)
	return nil
}

// append persists ms as part of this turn, in one transaction, and adds
// them to the history.
func (rn *run) append(ctx context.Context, ms ...store.Message) error {
	if len(ms) == 0 {
		return nil
	}
	now := rn.r.cfg.Now().UTC()
	for i := range ms {
		ms[i].ConversationID, ms[i].TurnID, ms[i].CreatedAt = rn.facts.Place.ConversationID, rn.facts.TurnID, now
	}
	if _, err := rn.r.cfg.Store.AppendMessages(ctx, rn.facts.Place.OrgID, ms); err != nil {
		return fmt.Errorf("record %s message: %w", ms[0].Role, err)
	}
	for _, m := range ms {
		rn.history = addMessage(rn.history, m, rn.facts.TurnID)
	}
	return nil
}

func (rn *run) saveTurn(ctx context.Context) error {
	if err := rn.r.cfg.Store.PutTurn(ctx, rn.rec); err != nil {
		return fmt.Errorf("record turn: %w", err)
	}
	return nil
}

// detached is ctx without its cancellation, bounded, for the writes that
// record how a cancelled turn ended.
func detached(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
}
