package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/quiverhq/quiver/budget"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/store"
)

// loop runs model steps and dispatch steps until the turn stops.
func (rn *run) loop(ctx context.Context) (Outcome, error) {
	for {
		if rn.rec.Steps >= rn.r.cfg.MaxSteps {
			return rn.stepLimit(ctx)
		}
		if out, stop, err := rn.checkBudget(ctx); stop {
			return out, err
		}
		resp, err := rn.modelStep(ctx)
		if err != nil {
			return rn.fail(ctx, err)
		}
		if len(resp.ToolCalls) == 0 {
			rn.out.Text = resp.Text
			return rn.finish(ctx, store.TurnDone, StopAnswer)
		}
		paused, err := rn.toolStep(ctx, rn.plan)
		if err != nil {
			return rn.fail(ctx, err)
		}
		if paused {
			return rn.pause(ctx)
		}
	}
}

// modelStep calls the model (retrying failures that happened before any
// output), streams its events out, and records the reply and its usage.
// rn.plan is then the reply's plan: which of its calls run, and which
// the transcript keeps.
func (rn *run) modelStep(ctx context.Context) (llm.Response, error) {
	req := llm.Request{System: rn.req.System, Messages: rn.withReferences(rn.history), Tools: rn.req.Tools, Deferred: rn.req.Deferred,
		CacheKey: rn.facts.Agent.Name}
	var resp llm.Response
	for attempt := 1; ; attempt++ {
		rn.plan = rn.newPlan()
		produced := false
		var err error
		resp, err = llm.Collect(rn.model.Stream(ctx, req), func(ev llm.Event) {
			produced = true
			rn.relay(ev)
		})
		if err == nil {
			break
		}
		wait, ok := rn.r.cfg.Retry.wait(err, attempt)
		if produced {
			rn.recordPartial(req, resp)
		}
		if produced || !ok || ctx.Err() != nil {
			return resp, err
		}
		rn.r.cfg.Logger.Info("retrying model call", "model", rn.model.Ref(), "attempt", attempt, "wait", wait, "error", err)
		if err := rn.r.cfg.Sleep(ctx, wait); err != nil {
			return resp, err
		}
	}
	rn.rec.Steps++
	return resp, rn.recordReply(ctx, resp)
}

// recordPartial stages the usage of a call that failed after it had
// produced output (cancelled, past a time limit, cut off): the provider
// bills it, so the turn's spend and budgets count it — what the provider
// reported, else an estimate (the request's input as EstimateTokens
// counts it, and the output produced so far). The turn's ending writes
// it (fail, then finish) as the step's record.
func (rn *run) recordPartial(req llm.Request, resp llm.Response) {
	u := resp.Usage
	if u.InputTokens == 0 && u.OutputTokens == 0 {
		out := len(resp.Text)
		for _, c := range resp.ToolCalls {
			out += len(c.Name) + len(c.Args)
		}
		u.InputTokens, u.OutputTokens = int64(EstimateTokens(req)), int64(ceilDiv(out, bytesPerToken))
	}
	rn.rec.Steps++
	cost := rn.r.cfg.Prices[rn.model.Ref()].CostMicros(u)
	rn.pending.usage = &store.Usage{
		OrgID: rn.facts.Place.OrgID, ConversationID: rn.facts.Place.ConversationID, TurnID: rn.facts.TurnID,
		Payer: rn.facts.Payer, UserID: rn.facts.Caller.UserID, Model: rn.model.Ref(), Step: rn.rec.Steps,
		InputTokens: u.InputTokens, CachedInputTokens: u.CachedInputTokens, CacheWriteTokens: u.CacheWriteTokens,
		OutputTokens: u.OutputTokens, CostMicros: cost, CreatedAt: rn.r.cfg.Now().UTC(),
	}
	rn.out.Usage = rn.out.Usage.Add(u)
	rn.out.CostMicros += cost
}

// relay forwards a model event to the surface: a tool call once the
// reply's plan has decided about it, and only one the transcript keeps.
func (rn *run) relay(ev llm.Event) {
	switch ev.Kind {
	case llm.EventText:
		rn.emit(Event{Kind: EventText, Text: ev.Text})
	case llm.EventToolCall:
		c := ev.ToolCall
		if rn.plan.add(c) {
			rn.emit(Event{Kind: EventToolCall, Call: &c})
		}
	}
}

// recordReply records the assistant's reply, one message per tool call
// the plan keeps, the usage record and the turn's step count, in one
// write. A reply that calls no tool ends the turn: it is staged and
// written with the turn's final status by finish, so the last step costs
// one write too.
func (rn *run) recordReply(ctx context.Context, resp llm.Response) error {
	msgs := []store.Message{{Role: string(llm.Assistant), Content: resp.Text}}
	calls := rn.plan.calls()
	for _, c := range calls {
		msgs = append(msgs, store.Message{Role: roleToolCall, ToolName: c.Name, ToolCallID: c.ID, Content: string(c.Args)})
	}
	rn.stage(msgs...)
	cost := rn.r.cfg.Prices[rn.model.Ref()].CostMicros(resp.Usage)
	rn.pending.usage = &store.Usage{
		OrgID: rn.facts.Place.OrgID, ConversationID: rn.facts.Place.ConversationID, TurnID: rn.facts.TurnID,
		Payer: rn.facts.Payer, UserID: rn.facts.Caller.UserID, Model: rn.model.Ref(), Step: rn.rec.Steps,
		InputTokens: resp.Usage.InputTokens, CachedInputTokens: resp.Usage.CachedInputTokens,
		CacheWriteTokens: resp.Usage.CacheWriteTokens, OutputTokens: resp.Usage.OutputTokens,
		CostMicros: cost, CreatedAt: rn.r.cfg.Now().UTC(),
	}
	rn.out.Usage = rn.out.Usage.Add(resp.Usage)
	rn.out.CostMicros += cost
	usage := resp.Usage
	rn.pending.usageEv = &Event{Kind: EventUsage, Usage: &usage, CostMicros: cost}
	if len(resp.ToolCalls) == 0 {
		return nil // finish writes it
	}
	if err := rn.commit(ctx); err != nil {
		return err
	}
	rn.keepSignatures(calls)
	return nil
}

// stepLimit ends a turn that used all its steps, telling the user so.
func (rn *run) stepLimit(ctx context.Context) (Outcome, error) {
	msg := fmt.Sprintf("I stopped after %d steps, the limit for one turn. Say \"continue\" if you want me to go on.", rn.r.cfg.MaxSteps)
	rn.stage(store.Message{Role: string(llm.Assistant), Content: msg}) // finish writes it
	rn.emit(Event{Kind: EventText, Text: msg})
	rn.out.Text = msg
	return rn.finish(ctx, store.TurnDone, StopStepLimit)
}

// checkBudget asks Config.Budget whether the next model call may be
// made; stop is true when the turn ended instead (over budget, or the
// check failed).
func (rn *run) checkBudget(ctx context.Context) (out Outcome, stop bool, err error) {
	if rn.r.cfg.Budget == nil {
		return Outcome{}, false, nil
	}
	err = rn.r.cfg.Budget.Check(ctx, rn.facts)
	var over *budget.ExceededError
	switch {
	case err == nil:
		return Outcome{}, false, nil
	case errors.As(err, &over):
		out, err = rn.overBudget(ctx, over)
	default:
		out, err = rn.fail(ctx, err)
	}
	return out, true, err
}

// overBudget ends a turn whose budget is used up, telling the user so.
func (rn *run) overBudget(ctx context.Context, over *budget.ExceededError) (Outcome, error) {
	msg := over.Error()
	rn.stage(store.Message{Role: string(llm.Assistant), Content: msg}) // finish writes it
	rn.emit(Event{Kind: EventText, Text: msg})
	rn.out.Text = msg
	return rn.finish(ctx, store.TurnDone, StopBudget)
}

// pause stores the turn as waiting for the user's answer.
func (rn *run) pause(ctx context.Context) (Outcome, error) {
	rn.rec.Question, rn.rec.Suggested = rn.out.Pause.Question, rn.out.Pause.Suggested
	rn.emit(Event{Kind: EventPause, Pause: rn.out.Pause})
	return rn.finish(ctx, store.TurnPaused, StopPause)
}

// fail ends the turn on err: cancelled turns are saved as interrupted and
// end with done (stop "cancelled") alone — a cancel is not an error —
// turns past their time limit as interrupted, and others as failed, both
// with one clear message for the user before done.
func (rn *run) fail(ctx context.Context, err error) (Outcome, error) {
	status, stop, err := rn.ending(ctx, err)
	if stop != StopCancelled {
		rn.emit(Event{Kind: EventError, Error: userMessage(err)})
	}
	rn.r.cfg.Logger.Warn("turn ended early", "turn", rn.facts.TurnID, "error", err)
	out, saveErr := rn.finish(ctx, status, stop)
	if saveErr != nil {
		return out, saveErr
	}
	if _, ok := llm.AsError(err); ok || stop != StopError {
		return out, nil
	}
	return out, err
}

// finish records the turn's final status with what is staged (the last
// reply), in one write with a context that survives cancellation, and
// emits done.
func (rn *run) finish(ctx context.Context, status, stop string) (Outcome, error) {
	dctx, cancel := detached(ctx)
	defer cancel()
	rn.rec.Status = status
	if status != store.TurnPaused {
		rn.rec.EndedAt = rn.r.cfg.Now().UTC()
	}
	rn.out.Stop = stop
	if err := rn.commit(dctx); err != nil {
		return rn.out, err
	}
	rn.emit(Event{Kind: EventDone, Stop: stop, Usage: &rn.out.Usage, CostMicros: rn.out.CostMicros})
	return rn.out, nil
}

// keepSignatures puts the provider's opaque call signatures back on the
// calls just added to the history: they are not stored, but the provider
// needs them in the rest of this turn's requests.
func (rn *run) keepSignatures(calls []llm.ToolCall) {
	n := len(rn.history)
	if n == 0 || rn.history[n-1].Role != llm.Assistant {
		return
	}
	in := rn.history[n-1].ToolCalls
	for i := range in {
		if i < len(calls) && in[i].ID == calls[i].ID {
			in[i].Signature = calls[i].Signature
		}
	}
}
