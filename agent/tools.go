package agent

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/quiverhq/quiver/dispatch"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/tool"
)

// cancelledResult answers a call the turn's cancellation left unrun.
const cancelledResult = "cancelled: the turn was stopped before this call finished"

// notRun begins every answer to a call the loop refused to run, so that a
// resumed turn can tell the calls it ran from the ones it refused.
const notRun = "Not run: "

// The loop's refusals, each one line that says which limit, so that the
// model can ask again within it.
const (
	namelessCall  = notRun + "this tool call has no tool name; call again with the name of one of your tools."
	stepCallLimit = notRun + "this reply asked for %d tool calls, more than the limit of %d per step; ask again with at most %d calls at once."
	turnCallLimit = notRun + "this turn has used its limit of %d tool calls; answer with what you have."
)

// toolStep runs the model's calls and records every result, in call order.
// Calls past the step's or the turn's limit, and calls without a name, are
// not run: each is answered with a refusal (see admit). Consecutive
// read-only calls run concurrently, at most Config.MaxConcurrentCalls at
// once; a write waits for what came before it and runs alone, so writes
// happen in call order. Every call gets a recorded answer, cancellation
// included. It reports whether a result paused the turn; an error means
// the turn cannot go on.
func (rn *run) toolStep(ctx context.Context, calls []llm.ToolCall) (paused bool, err error) {
	results := make([]tool.Result, len(calls))
	errs := make([]error, len(calls))
	for _, batch := range batches(calls, rn.admit(calls, results), rn.isWrite) {
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
	if err := rn.recordResults(dctx, calls, results); err != nil {
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

// admit returns the indexes of the calls that may run, in call order, and
// counts them against the turn's budget. The others get their refusal in
// results: a call without a name (blank counts as none), then every call
// past Config.MaxCallsPerStep, then every call past what is left of
// Config.MaxCallsPerTurn. A refused call is not counted.
func (rn *run) admit(calls []llm.ToolCall, results []tool.Result) []int {
	cfg := rn.r.cfg
	var admitted []int
	refused := 0
	for i, c := range calls {
		switch {
		case strings.TrimSpace(c.Name) == "":
			results[i] = tool.Result{Content: namelessCall, IsError: true}
		case len(admitted) >= cfg.MaxCallsPerStep:
			results[i] = tool.Result{Content: fmt.Sprintf(stepCallLimit, len(calls), cfg.MaxCallsPerStep, cfg.MaxCallsPerStep), IsError: true}
		case rn.callsRun >= cfg.MaxCallsPerTurn:
			results[i] = tool.Result{Content: fmt.Sprintf(turnCallLimit, cfg.MaxCallsPerTurn), IsError: true}
		default:
			admitted = append(admitted, i)
			rn.callsRun++
			continue
		}
		refused++
	}
	if refused > 0 {
		cfg.Logger.Info("tool calls refused", "turn", rn.facts.TurnID, "asked", len(calls), "refused", refused,
			"per_step", cfg.MaxCallsPerStep, "per_turn", cfg.MaxCallsPerTurn)
	}
	return admitted
}

// callsRan counts the tool calls turnID ran among msgs: its tool results
// other than the loop's refusals. A resumed turn starts its budget there.
func callsRan(msgs []store.Message, turnID string) int {
	n := 0
	for _, m := range msgs {
		if m.TurnID == turnID && m.Role == string(llm.Tool) && !strings.HasPrefix(m.Content, notRun) {
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

// recordResults persists the step's results in call order, in one
// transaction (the model-visible bodies; dispatch has already stored
// oversized ones under Ref), then tells the surface.
func (rn *run) recordResults(ctx context.Context, calls []llm.ToolCall, results []tool.Result) error {
	msgs := make([]store.Message, len(calls))
	for i, c := range calls {
		res := results[i]
		msgs[i] = store.Message{Role: string(llm.Tool), ToolName: c.Name, ToolCallID: c.ID, Content: res.Content, Ref: res.Ref, IsError: res.IsError}
	}
	if err := rn.append(ctx, msgs...); err != nil {
		return err
	}
	for i, c := range calls {
		res := results[i]
		rn.emit(Event{Kind: EventToolResult, Result: &Result{CallID: c.ID, Name: c.Name, Content: res.Content, IsError: res.IsError, Ref: res.Ref}})
	}
	return nil
}

// applyEffect hands a result's effect to the surface and reports a pause.
func (rn *run) applyEffect(e tool.Effect) bool {
	if len(e.NextActions) > 0 {
		rn.emit(Event{Kind: EventNextActions, Actions: e.NextActions})
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
