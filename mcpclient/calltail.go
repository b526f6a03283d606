package mcpclient

import (
	"context"
	"errors"
	"sync"
	"time"
)

// The tail of a call: the SDK hands a Streamable HTTP call its answer as
// soon as the answer's event arrives, and reads the rest of the response
// stream (to its end, so that the TCP connection goes back to the pool)
// on a goroutine of its own, under the call's context. Cancelling that
// context as the call returns (a timeout's deferred cancel) aborts the
// read, and the transport then drops the connection: the next call dials
// a new one (profiles of BenchmarkMCPCall, internal/bench, showed a dial
// on most calls). Keeping the context alive for a fixed time instead kept
// what the SDK hangs on it alive too, a kilobyte a call. So a call runs
// under a detached context that ends when the caller's does while the call
// waits, and, once it is answered, as soon as every response body of the
// call has been closed (originTransport counts them), or drainGrace after
// the answer, whichever comes first.

// drainGrace is how long the rest of an answered call's response may
// take (the end of its event stream; a well-behaved server sends it right
// after the answer) before its request is cancelled anyway.
const drainGrace = 2 * time.Second

// errCallDone ends the context of an answered call whose responses were
// all read; errDrainGrace one whose stream did not end within drainGrace.
var (
	errCallDone   = errors.New("mcpclient: the call is done")
	errDrainGrace = errors.New("mcpclient: the answered call's stream did not end")
)

// callTail is one call's detached context's state: its response bodies
// still open, and whether the call has returned.
type callTail struct {
	cancel context.CancelCauseFunc

	mu       sync.Mutex
	open     int
	returned bool
	grace    *time.Timer
}

type callTailKey struct{}

// detach returns the context a call runs under and the release to call
// when the call returns (see the comment above).
func detach(ctx context.Context) (context.Context, func()) {
	cctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	t := &callTail{cancel: cancel}
	if ctx.Err() != nil {
		// AfterFunc would cancel on a goroutine of its own, a moment
		// after the call could have been written to an open connection.
		cancel(context.Cause(ctx))
	}
	stop := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	return context.WithValue(cctx, callTailKey{}, t), func() {
		stop()
		t.release()
	}
}

// tailOf is the call whose context ctx is, or descends from; nil when
// none (a listing, a connect).
func tailOf(ctx context.Context) *callTail {
	t, _ := ctx.Value(callTailKey{}).(*callTail)
	return t
}

// release marks the call returned: its context ends now when no response
// body is open, else when the last one closes or after drainGrace.
func (t *callTail) release() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.returned = true
	if t.open == 0 {
		t.cancel(errCallDone)
		return
	}
	t.grace = time.AfterFunc(drainGrace, func() { t.cancel(errDrainGrace) })
}

// opened counts a response body of the call.
func (t *callTail) opened() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.open++
}

// closed uncounts a response body; the last one of a returned call ends
// its context.
func (t *callTail) closed() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.open--
	if t.returned && t.open == 0 {
		if t.grace != nil {
			t.grace.Stop()
		}
		t.cancel(errCallDone)
	}
}
