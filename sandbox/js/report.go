package js

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"modernc.org/quickjs"

	"github.com/quiverhq/quiver/sandbox"
)

// maxErrorBytes bounds Result.Error: a script may throw a huge string.
const maxErrorBytes = 4 << 10

// report turns how the run ended into a Result: err is the first failure
// of setup, evaluation or draining, nil when they all returned.
func (r *run) report(ctx context.Context, err error) (sandbox.Result, error) {
	res := sandbox.Result{Stdout: r.out.text.String(), Truncated: r.out.truncated}
	if r.infra != nil {
		return res, r.infra
	}
	if err == nil && r.rejected != nil {
		err = r.rejected
	}
	switch {
	case r.out.full:
		res.Stop = sandbox.StopOutput
		res.Error = fmt.Sprintf("stopped: the script printed more than its %s output limit", size(int64(r.lim.OutputBytes)))
	case ctx.Err() != nil && (err != nil || !r.settled):
		res.Stop = sandbox.StopCancelled
		res.Error = "stopped: the run was cancelled"
		return res, fmt.Errorf("sandbox/js: run: %w", context.Cause(ctx))
	case err == nil && !r.settled:
		res.Error = "the script never finished: its top-level code awaits a promise that nothing settles (there are no timers or I/O to wait for)"
	case err == nil:
	case errors.Is(err, errWall) || isEngineError(err, "interrupted"):
		res.Stop = sandbox.StopWall
		res.Error = fmt.Sprintf("stopped: the script ran past its %v limit", r.lim.Wall)
	case isOOM(err):
		res.Stop = sandbox.StopMemory
		res.Error = fmt.Sprintf("stopped: the script ran out of memory (its limit is %s)", size(r.lim.MemoryBytes))
	default:
		res.Error = describe(err)
	}
	return res, nil
}

// isOOM reports an allocation past the memory limit: the engine's
// exception, or the library's own "OOM" when it could not allocate for a
// call.
func isOOM(err error) bool {
	if errors.Is(err, errMemory) {
		return true
	}
	var qe *quickjs.Error
	if errors.As(err, &qe) {
		return qe.Name == "InternalError" && qe.Message == "out of memory"
	}
	return strings.HasSuffix(err.Error(), "OOM")
}

// isEngineError reports an InternalError the engine throws with message.
func isEngineError(err error, message string) bool {
	var qe *quickjs.Error
	return errors.As(err, &qe) && qe.Name == "InternalError" && qe.Message == message
}

// describe renders what the script threw, with its stack when it has one.
func describe(err error) string {
	msg := err.Error()
	var qe *quickjs.Error
	if errors.As(err, &qe) {
		if stack := strings.TrimRight(qe.Stack, "\n"); stack != "" {
			msg += "\n" + stack
		}
	}
	msg = "uncaught " + msg
	if len(msg) > maxErrorBytes {
		msg = cut(msg, maxErrorBytes) + "…"
	}
	return msg
}

// size renders a byte count for messages: "64 KiB", "1 MiB".
func size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
