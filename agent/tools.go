package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/quiverhq/quiver/dispatch"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/tool"
)

// cancelledResult answers a call the turn's cancellation left unrun.
const cancelledResult = "cancelled: the turn was stopped before this call finished"

// toolStep runs the calls plan admits and records the result of every
// call it keeps, in call order. Calls past the step's or the turn's
// limit, and calls without a name, are not run: the ones kept are
// answered with a refusal (see Refusals). Consecutive read-only calls run
// concurrently, at most Config.MaxConcurrentCalls at once; a write waits
// for what came before it and runs alone, so writes happen in call order.
// Every kept call gets a recorded answer, cancellation included. It
// reports whether a result paused the turn; an error means the turn
// cannot go on.
func (rn *run) toolStep(ctx context.Context, plan *stepPlan) (paused bool, err error) {
	calls := plan.calls()
	results := make([]tool.Result, len(calls))
	errs := make([]error, len(calls))
	for _, batch := range batches(calls, rn.admit(plan, results), rn.isWrite) {
		rn.runBatch(ctx, calls, batch, results, errs)
	}
	dctx, cancel := detached(ctx)
	defer cancel()
	var firstErr error
	for i := range calls {
		if errs[i] != nil {
			results[i] = tool.Result{Content: cancelledResult, IsError: true}
			if ctx.Err() == nil {
				results[i].Content = "failed: an internal error stopped this call"
			}
			firstErr = firstNonNil(firstErr, errs[i])
		}
	}
	for i := range results {
		rn.grow(dctx, calls[i].ID, &results[i])
	}
	if err := rn.recordResults(dctx, plan, results); err != nil {
		return false, err
	}
	for _, res := range results {
		paused = rn.applyEffect(res.Effect) || paused
	}
	if firstErr != nil {
		return false, firstErr
	}
	return paused, ctx.Err()
}

// admit returns the indexes, among plan's kept calls, of the calls that
// run, in call order, and counts them against the turn's budget. The
// refused ones get their refusal in results.
func (rn *run) admit(plan *stepPlan, results []tool.Result) []int {
	var run []int
	for i, k := range plan.kept {
		if k.why == admitted {
			run = append(run, i)
			continue
		}
		results[i] = tool.Result{Content: plan.answer(k.why), IsError: true}
	}
	rn.callsRun += len(run)
	if refused := plan.asked - plan.ran; refused > 0 {
		cfg := rn.r.cfg
		cfg.Logger.Info("tool calls refused", "turn", rn.facts.TurnID, "asked", plan.asked, "refused", refused,
			"left_out", plan.leftOut(), "per_step", cfg.MaxCallsPerStep, "per_turn", cfg.MaxCallsPerTurn)
	}
	return run
}

// callsRan counts the tool calls turnID ran among msgs: its tool results
// other than the loop's refusals (store.Message.Refused). A resumed turn
// starts its budget there.
func callsRan(msgs []store.Message, turnID string) int {
	n := 0
	for _, m := range msgs {
		if m.TurnID == turnID && m.Role == string(llm.Tool) && !m.Refused {
			n++
		}
	}
	return n
}

// batches splits the call indexes admitted into groups that may run
// together: a run of read-only calls, or one write.
func batches(calls []llm.ToolCall, admitted []int, isWrite func(string) bool) [][]int {
	var out [][]int
	var reads []int
	for _, i := range admitted {
		if !isWrite(calls[i].Name) {
			reads = append(reads, i)
			continue
		}
		if len(reads) > 0 {
			out = append(out, reads)
			reads = nil
		}
		out = append(out, []int{i})
	}
	if len(reads) > 0 {
		out = append(out, reads)
	}
	return out
}

// isWrite reports whether the named tool writes. Names outside the
// toolset are refused by dispatch and change nothing.
func (rn *run) isWrite(name string) bool {
	t, ok := rn.toolset.Lookup(name)
	return ok && t.Spec().Access == tool.Write
}

// runBatch runs the batch's calls concurrently on at most
// Config.MaxConcurrentCalls workers (a bounded pool, not a goroutine per
// call); a call not started because the turn was cancelled gets the
// context's error.
func (rn *run) runBatch(ctx context.Context, calls []llm.ToolCall, batch []int, results []tool.Result, errs []error) {
	d := dispatch.Turn{Toolset: rn.toolset, Scope: scope(rn.facts)}
	if rn.expand != nil {
		ctx = tool.WithCatalog(ctx, turnCatalog{ts: rn.toolset, x: rn.expand})
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(len(batch), rn.r.cfg.MaxConcurrentCalls) {
		wg.Go(func() {
			for i := range next {
				c := calls[i]
				results[i], errs[i] = rn.r.cfg.Dispatcher.Call(ctx, d, dispatch.Call{ID: c.ID, Name: c.Name, Args: c.Args})
			}
		})
	}
	for _, i := range batch {
		if ctx.Err() == nil {
			select {
			case next <- i:
				continue
			case <-ctx.Done():
			}
		}
		errs[i] = ctx.Err()
	}
	close(next)
	wg.Wait()
}

// recordResults persists the results of plan's kept calls in call order,
// in one transaction (the model-visible bodies; dispatch has already
// stored oversized ones under Ref), refusals marked, then tells the
// surface.
func (rn *run) recordResults(ctx context.Context, plan *stepPlan, results []tool.Result) error {
	calls := plan.calls()
	msgs := make([]store.Message, len(calls))
	for i, c := range calls {
		res := results[i]
		msgs[i] = store.Message{Role: string(llm.Tool), ToolName: c.Name, ToolCallID: c.ID, Content: res.Content, Ref: res.Ref,
			IsError: res.IsError, Refused: plan.kept[i].why != admitted}
	}
	if err := rn.append(ctx, msgs...); err != nil {
		return err
	}
	rn.attachImages(calls, results)
	for i, c := range calls {
		res := results[i]
		rn.emit(Event{Kind: EventToolResult, Result: &Result{CallID: c.ID, Name: c.Name, Content: res.Content, IsError: res.IsError, Ref: res.Ref}})
	}
	return nil
}

// attachImages puts the results' images on their answers in the history,
// for a model with vision only (turn.Capabilities.Vision); others read the
// text alone. Images are not stored: they last the running turn, as the
// calls' signatures do, and a later turn sees the text.
func (rn *run) attachImages(calls []llm.ToolCall, results []tool.Result) {
	if !rn.facts.Model.Caps.Vision {
		return
	}
	n := len(rn.history)
	if n == 0 || rn.history[n-1].Role != llm.Tool {
		return
	}
	answers := rn.history[n-1].Results
	for i, c := range calls {
		if len(results[i].Images) == 0 {
			continue
		}
		for j := range answers {
			if answers[j].CallID == c.ID {
				answers[j].Images = slices.Clone(results[i].Images)
			}
		}
	}
}

// grow declares the tools a result's effect names (tool.Effect.Declare)
// from the next model step on, appended after the declared ones, within
// Config.MaxExpansions calls per turn, and says in the result which it
// declared; the effect's Declared hook runs only when it declared some.
// The turn's record lists them at its next write.
//
// With the provider's own deferred loading (Request.Deferred), the
// definitions are not appended: the call's result references the tools
// (llm.ToolResult.References) and the provider loads them.
func (rn *run) grow(ctx context.Context, callID string, res *tool.Result) {
	names := res.Effect.Declare
	if len(names) == 0 || res.IsError {
		return
	}
	switch {
	case rn.expand == nil:
		res.Content += "\n\nNo tool can be added on this turn."
		return
	case rn.expansions >= rn.r.cfg.MaxExpansions:
		res.Content += fmt.Sprintf("\n\nNothing more was declared: at most %d calls per turn may add tools.", rn.r.cfg.MaxExpansions)
		return
	}
	ts, added := rn.expand.Expand(rn.toolset, names)
	if len(added) == 0 {
		res.Content += "\n\nNo tool was added: the ones named are declared already or not available to this agent."
		return
	}
	rn.expansions++
	rn.toolset = ts
	var list []string
	for _, t := range added {
		list = append(list, t.Name())
	}
	if len(rn.req.Deferred) > 0 {
		if rn.refs == nil {
			rn.refs = map[string][]string{}
		}
		rn.refs[callID] = list
	} else {
		rn.req.Tools = slices.Clone(rn.req.Tools)
		for _, t := range added {
			rn.req.Tools = append(rn.req.Tools, t.Declaration())
			rn.req.Sizes.DefinitionsChars += t.DeclarationChars()
		}
	}
	rn.rec.Tools, rn.rec.Excluded = rn.toolset.Names(), StoredExclusions(rn.toolset)
	res.Content += "\n\nNow declared, from your next step: " + strings.Join(list, ", ") + "."
	rn.emit(Event{Kind: EventDeclared, Actions: list})
	if res.Effect.Declared == nil {
		return
	}
	if err := res.Effect.Declared(ctx, list); err != nil {
		rn.r.cfg.Logger.Warn("agent: keeping declared tools", "turn", rn.facts.TurnID, "err", err)
		res.Content += " They could not be kept for later turns of this conversation."
	}
}

// withReferences is msgs with each result of this turn that loaded
// deferred tools carrying their names (llm.ToolResult.References); msgs
// itself is not changed.
func (rn *run) withReferences(msgs []llm.Message) []llm.Message {
	if len(rn.refs) == 0 {
		return msgs
	}
	out := slices.Clone(msgs)
	for i, m := range out {
		if m.Role != llm.Tool || !slices.ContainsFunc(m.Results, func(r llm.ToolResult) bool { return rn.refs[r.CallID] != nil }) {
			continue
		}
		m.Results = slices.Clone(m.Results)
		for j, r := range m.Results {
			m.Results[j].References = rn.refs[r.CallID]
		}
		out[i] = m
	}
	return out
}

// turnCatalog is what the tool-discovery tools see of the running turn
// (tool.Catalog): the step's declared toolset and what it may grow from.
type turnCatalog struct {
	ts registry.Toolset
	x  Expander
}

func (c turnCatalog) Available() []*tool.Tool { return c.x.Available() }

func (c turnCatalog) Declared(name string) bool {
	_, ok := c.ts.Lookup(name)
	return ok
}

// applyEffect hands a result's effect to the surface and reports a pause.
func (rn *run) applyEffect(e tool.Effect) bool {
	if len(e.NextActions) > 0 {
		rn.emit(Event{Kind: EventNextActions, Actions: e.NextActions})
	}
	if e.Checklist != nil {
		rn.emit(Event{Kind: EventChecklist, Checklist: e.Checklist})
	}
	if len(e.Messages) > 0 {
		rn.emit(Event{Kind: EventMessages, Messages: e.Messages})
	}
	if e.Pause == nil || rn.out.Pause != nil {
		return rn.out.Pause != nil
	}
	p := *e.Pause
	rn.out.Pause = &p
	return true
}

func firstNonNil(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
