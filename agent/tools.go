package agent

import (
	"context"
	"sync"

	"github.com/quiverhq/quiver/dispatch"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/tool"
)

// cancelledResult answers a call the turn's cancellation left unrun.
const cancelledResult = "cancelled: the turn was stopped before this call finished"

// toolStep runs the model's calls and records every result, in call order.
// Consecutive read-only calls run concurrently; a write waits for what came
// before it and runs alone, so writes happen in call order. Every call gets
// a recorded answer, cancellation included. It reports whether a result
// paused the turn; an error means the turn cannot go on.
func (rn *run) toolStep(ctx context.Context, calls []llm.ToolCall) (paused bool, err error) {
	results := make([]tool.Result, len(calls))
	errs := make([]error, len(calls))
	for _, batch := range batches(calls, rn.isWrite) {
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

// batches splits call indexes into groups that may run together: a run of
// read-only calls, or one write.
func batches(calls []llm.ToolCall, isWrite func(string) bool) [][]int {
	var out [][]int
	var reads []int
	for i, c := range calls {
		if !isWrite(c.Name) {
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

// runBatch runs the batch's calls concurrently; a call not started because
// the turn was cancelled gets context.Canceled.
func (rn *run) runBatch(ctx context.Context, calls []llm.ToolCall, batch []int, results []tool.Result, errs []error) {
	d := dispatch.Turn{Toolset: rn.toolset, Scope: scope(rn.facts)}
	var wg sync.WaitGroup
	for _, i := range batch {
		if ctx.Err() != nil {
			errs[i] = ctx.Err()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := calls[i]
			results[i], errs[i] = rn.r.cfg.Dispatcher.Call(ctx, d, dispatch.Call{ID: c.ID, Name: c.Name, Args: c.Args})
		}()
	}
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
