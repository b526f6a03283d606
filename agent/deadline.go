package agent

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/store"
)

// Defaults of Config's deadlines.
const (
	// DefaultModelIdle is the longest a model stream may send nothing:
	// providers stream the first token within seconds and keep streaming.
	// Everything the provider sends counts (llm.Request.Progress: a tool
	// call's argument deltas, thinking, keep-alives), not only what
	// completes an event.
	DefaultModelIdle = 60 * time.Second
	// DefaultMaxDuration is the longest one Run or Resume may take: twelve
	// steps of slow models and tools at their timeouts fit inside it.
	DefaultMaxDuration = 15 * time.Minute
)

// StopTimeLimit is Outcome.Stop (and the done event's stop) of a turn
// stopped at Config.MaxDuration.
const StopTimeLimit = "time_limit"

// Timer is a timer started by Config.AfterFunc; *time.Timer is one.
type Timer interface {
	// Stop prevents the timer from firing; false when it already fired
	// or was stopped.
	Stop() bool
	// Reset makes the timer fire d from now, once more.
	Reset(d time.Duration) bool
}

// afterFunc is the real Config.AfterFunc.
func afterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// withDeadlines applies the deadlines' defaults to c.
func (c Config) withDeadlines() Config {
	if c.ModelIdle == 0 {
		c.ModelIdle = DefaultModelIdle
	}
	if c.MaxDuration == 0 {
		c.MaxDuration = DefaultMaxDuration
	}
	if c.AfterFunc == nil {
		c.AfterFunc = afterFunc
	}
	return c
}

// errTimeLimit is the cause a turn's context is cancelled with at
// Config.MaxDuration.
var errTimeLimit = errors.New("turn time limit reached")

// timeLimitError ends a turn stopped at its time limit.
type timeLimitError struct{ limit time.Duration }

func (e *timeLimitError) Error() string {
	return fmt.Sprintf("turn stopped after its time limit of %s", e.limit)
}

// bound returns ctx ended (with cause errTimeLimit) once the turn has run
// for Config.MaxDuration, and the function that releases its timer; a
// negative MaxDuration bounds nothing.
func (r *Runner) bound(ctx context.Context) (context.Context, func()) {
	if r.cfg.MaxDuration < 0 {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	t := r.cfg.AfterFunc(r.cfg.MaxDuration, func() { cancel(errTimeLimit) })
	return ctx, func() {
		t.Stop()
		cancel(nil)
	}
}

// ending returns how a turn that failed with err on ctx is recorded:
// cancelled turns as interrupted (stop "cancelled"), turns past their time
// limit as interrupted too, with a timeLimitError in place of err (stop
// StopTimeLimit), others as failed.
func (rn *run) ending(ctx context.Context, err error) (status, stop string, _ error) {
	switch {
	case errors.Is(context.Cause(ctx), errTimeLimit):
		return store.TurnInterrupted, StopTimeLimit, &timeLimitError{limit: rn.r.cfg.MaxDuration}
	case errors.Is(err, context.Canceled) || ctx.Err() != nil:
		return store.TurnInterrupted, StopCancelled, err
	}
	return store.TurnFailed, StopError, err
}

// idleModel is a Model whose streams fail, with an llm.ErrTimeout error,
// when the provider sends nothing for idle: the stream's context is
// cancelled, which ends the provider's request. The time the consumer
// spends on an event is not counted. A provider whose stream does not end
// when its context does is not bounded; the adapters' SDKs all end theirs.
type idleModel struct {
	llm.Model
	idle  time.Duration
	after func(time.Duration, func()) Timer
}

// errIdle is the cause a stream's context is cancelled with when it
// stays silent too long.
var errIdle = errors.New("model stream idle")

// withIdle returns m bounded by the runner's ModelIdle; a negative
// ModelIdle leaves m as it is.
func (r *Runner) withIdle(m llm.Model) llm.Model {
	if r.cfg.ModelIdle < 0 || m == nil {
		return m
	}
	return idleModel{Model: m, idle: r.cfg.ModelIdle, after: r.cfg.AfterFunc}
}

// Stream implements llm.Model.
func (m idleModel) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		sctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		t := m.after(m.idle, func() { cancel(errIdle) })
		defer t.Stop()
		// Whatever the provider sends resets the watch, not only what
		// completes an event: a long tool call's arguments stream for
		// minutes as deltas the adapter keeps to itself.
		inner := req.Progress
		req.Progress = func() {
			t.Reset(m.idle)
			if inner != nil {
				inner()
			}
		}
		for ev, err := range m.Model.Stream(sctx, req) {
			if err != nil && ctx.Err() == nil && errors.Is(context.Cause(sctx), errIdle) {
				err = &llm.Error{Kind: llm.ErrTimeout, Msg: fmt.Sprintf("the model sent nothing for %s", m.idle)}
			}
			t.Stop()
			if !yield(ev, err) || err != nil {
				return
			}
			t.Reset(m.idle)
		}
	}
}
