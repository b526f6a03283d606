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
	// pending is what the next write records with the turn: the
	// messages staged since the last one, and a model call's usage.
	pending pending
	emit    func(Event)
	out     Outcome
	// callsRun counts the tool calls this turn ran, for
	// Config.MaxCallsPerTurn.
	callsRun int
	// plan is the latest reply's: which of its calls run, and which the
	// transcript keeps.
	plan *stepPlan
	// fit fits each model call into the model's context window; it is
	// model, when the turn has one.
	fit *fitter
	// expand grows the declared tools (Start.Expand); expansions counts
	// the calls that did, for Config.MaxExpansions.
	expand Expander
	// refs are the deferred tools each call of this turn loaded, by call
	// id, when the provider loads them itself (Request.Deferred).
	refs       map[string][]string
	expansions int
	// branch and parent are Start's; head asks the next write to make
	// the turn its conversation's head (the write that starts it).
	branch bool
	parent string
	head   bool
}

// pending is a step's records not yet written, with the usage event to
// emit once they are.
type pending struct {
	msgs    []store.Message
	usage   *store.Usage
	usageEv *Event
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
	if started, err := rn.begin(ctx, s.Message); err != nil {
		if started {
			// The turn is recorded as running: end it as failed (or
			// interrupted), not left running.
			return rn.fail(ctx, err)
		}
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
	if err := rn.loadHistory(ctx, 0); err != nil {
		return rn.out, err
	}
	// The answer and the turn running again: one write.
	rn.stage(store.Message{Role: string(llm.User), Content: s.Message})
	if err := rn.commit(ctx); err != nil {
		return rn.out, err
	}
	return rn.loop(ctx)
}

func (r *Runner) newRun(s Start, emit func(Event)) *run {
	if emit == nil {
		emit = func(Event) {}
	}
	rn := &run{r: r, facts: s.Facts, toolset: s.Toolset, declared: s.Declared, req: s.Request, model: r.withIdle(s.Model), collected: s.History,
		branch: s.Branch, parent: s.Parent, expand: s.Expand}
	// The idle deadline watches the provider's stream; the window's cut
	// (and its one retry with a tighter cut) wraps it.
	rn.fit = &fitter{Model: rn.model, log: r.cfg.Logger}
	if s.Model != nil {
		rn.fit.win, rn.model = r.window(s.Model.Ref()), rn.fit
	}
	rn.emit = func(ev Event) {
		ev.ConversationID, ev.TurnID = s.Facts.Place.ConversationID, s.Facts.TurnID
		emit(ev)
	}
	rn.out.TurnID = s.Facts.TurnID
	return rn
}

// begin records the conversation, the turn, the context message and the
// user's message in one write, then reads the earlier history (the
// messages before the ones it wrote) unless the turn's start collected
// it.
// started reports that the write was made (the turn is recorded as
// running), so that a later error must end it.
func (rn *run) begin(ctx context.Context, message string) (started bool, err error) {
	f := rn.facts
	rn.rec = store.Turn{
		ID: f.TurnID, OrgID: f.Place.OrgID, UserID: f.Caller.UserID, ConversationID: f.Place.ConversationID,
		Agent: f.Agent.Name, Model: rn.model.Ref(), Timezone: f.Caller.Timezone, Payer: f.Payer,
		Tools: rn.toolset.Names(), Excluded: StoredExclusions(rn.toolset), Declared: rn.declared,
		Selected: rn.toolset.Selected(), ParentID: rn.parent,
		Status: store.TurnRunning, StartedAt: f.Start.UTC(),
	}
	rn.head = rn.branch
	rn.stage(store.Message{Role: roleContext, Content: rn.req.Context}, store.Message{Role: string(llm.User), Content: message})
	msgs := rn.pending.msgs
	w, err := rn.write(ctx, rn.claim())
	if err != nil {
		return false, err
	}
	if !w.Written(f.Caller.UserID) {
		return false, fmt.Errorf("conversation %s belongs to another user", w.Conversation.ID)
	}
	if err := rn.loadHistory(ctx, w.Seqs[0]); err != nil {
		return true, err
	}
	rn.addHistory(msgs)
	return true, nil
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

// claim is how the turn enters its conversation: one atomic claim, not
// a read and an upsert, so two callers racing on a new ID cannot both
// own it, and a title set meanwhile is kept.
func (rn *run) claim() *store.Conversation {
	f := rn.facts
	now := rn.r.cfg.Now().UTC()
	return &store.Conversation{ID: f.Place.ConversationID, OrgID: f.Place.OrgID,
		UserID: f.Caller.UserID, Agent: f.Agent.Name, CreatedAt: now, UpdatedAt: now}
}

// loadHistory reads the conversation's messages with Seq < beforeSeq
// (all when beforeSeq <= 0) into the model's view, or takes the ones the
// turn's start collected.
func (rn *run) loadHistory(ctx context.Context, beforeSeq int64) error {
	msgs := rn.collected
	if msgs == nil {
		var err error
		if msgs, err = rn.r.cfg.Store.ListMessages(ctx, rn.facts.Place.OrgID, rn.facts.Place.ConversationID, beforeSeq); err != nil {
			return fmt.Errorf("load history: %w", err)
		}
	}
	rn.fit.h = buildHistory(msgs, rn.r.cfg.MaxHistory, rn.facts.TurnID)
	rn.history, rn.fit.h.msgs = rn.fit.h.msgs, nil
	rn.callsRun = callsRan(msgs, rn.facts.TurnID)
	return nil
}

// stamp makes ms this turn's messages, created now.
func (rn *run) stamp(ms []store.Message) {
	now := rn.r.cfg.Now().UTC()
	for i := range ms {
		ms[i].ConversationID, ms[i].TurnID, ms[i].CreatedAt = rn.facts.Place.ConversationID, rn.facts.TurnID, now
	}
}

// append persists ms as part of this turn, in one transaction, and adds
// them to the history.
func (rn *run) append(ctx context.Context, ms ...store.Message) error {
	if len(ms) == 0 {
		return nil
	}
	rn.stamp(ms)
	if _, err := rn.r.cfg.Store.AppendMessages(ctx, rn.facts.Place.OrgID, ms); err != nil {
		return fmt.Errorf("record %s message: %w", ms[0].Role, err)
	}
	rn.addHistory(ms)
	return nil
}

// addHistory adds stored messages to the model's view.
func (rn *run) addHistory(ms []store.Message) {
	for _, m := range ms {
		rn.history = addMessage(rn.history, m, rn.facts.TurnID)
	}
}

// stage keeps ms for the next write (commit), which records them with
// the turn.
func (rn *run) stage(ms ...store.Message) {
	rn.stamp(ms)
	rn.pending.msgs = append(rn.pending.msgs, ms...)
}

// commit writes the turn record with what is staged, in one transaction,
// adds the staged messages to the history and emits the staged usage.
func (rn *run) commit(ctx context.Context) error {
	msgs := rn.pending.msgs
	if _, err := rn.write(ctx, nil); err != nil {
		return err
	}
	rn.addHistory(msgs)
	return nil
}

// write stores claim (when not nil), the turn record and what is staged
// in one transaction (store.TurnWriter), then emits the staged usage and
// clears what was staged. What is staged after a model step is sent
// again when its write fails (the turn's end writes it): the usage
// record's step is its key, so a write that had committed is not
// recorded twice (store.TurnWrite). Another user's conversation writes nothing and
// is no error here: the caller reads the answer.
func (rn *run) write(ctx context.Context, claim *store.Conversation) (store.TurnWritten, error) {
	p := rn.pending
	rec := rn.rec
	w, err := rn.r.cfg.Store.WriteTurn(ctx, rn.facts.Place.OrgID, store.TurnWrite{Claim: claim, Turn: &rec, Messages: p.msgs, Usage: p.usage,
		Head: rn.head})
	if err != nil {
		return w, fmt.Errorf("record turn: %w", err)
	}
	rn.head = false
	if !w.Written(rn.facts.Caller.UserID) {
		return w, nil
	}
	if w.Repeated {
		// A step written before whose answer was lost (the write is sent
		// again by the turn's end): the store kept it once.
		rn.r.cfg.Logger.Info("turn step already recorded", "turn", rn.facts.TurnID, "step", p.usage.Step)
	}
	rn.pending = pending{}
	if p.usageEv != nil {
		rn.emit(*p.usageEv)
	}
	return w, nil
}

// detached is ctx without its cancellation, bounded, for the writes that
// record how a cancelled turn ended.
func detached(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
}
