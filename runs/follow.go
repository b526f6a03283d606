package runs

import (
	"context"
	"errors"
	"fmt"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/store"
)

// ErrNoEnd is Follow's error when the turn stopped running without a
// recorded done or error event: its replica died (the turn was reaped as
// interrupted), its events outlived their retention, or some could not be
// stored.
var ErrNoEnd = errors.New("the turn stopped without a recorded end")

// Follow sends the turn's recorded events numbered above after, in
// order, to send, waiting for new ones while the turn runs on any
// replica, and returns nil after the turn's done or error event. It
// returns ErrNoEnd once the turn no longer runs and no end was recorded,
// ctx's error when ctx ends first, and send's error when send fails. The
// turn must be of that organisation and conversation (the caller checked
// it is the reader's).
func (r *Registry) Follow(ctx context.Context, orgID, conversationID, turnID string, after int64, send func(Event) error) error {
	for {
		n, end, err := r.page(ctx, orgID, turnID, &after, send)
		if err != nil || end {
			return err
		}
		if n > 0 {
			continue
		}
		sr, err := r.cfg.Runs.GetRun(ctx, orgID, conversationID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("read the conversation's run: %w", err)
		}
		if err != nil || sr.TurnID != turnID {
			// Not running any more: its replica stored everything before
			// it released the run, so one more page has the rest.
			if _, end, err := r.page(ctx, orgID, turnID, &after, send); err != nil || end {
				return err
			}
			return ErrNoEnd
		}
		// Wait for the next event, or a heartbeat at most, to see again
		// whether the turn still runs.
		wctx, cancel := context.WithTimeout(ctx, r.cfg.Heartbeat)
		err = r.cfg.Events.WaitTurnEvents(wctx, orgID, turnID, after)
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("wait for the turn's events: %w", err)
		}
	}
}

// page sends the stored events after *after and moves it on; end
// reports that the turn's done or error event was among them.
func (r *Registry) page(ctx context.Context, orgID, turnID string, after *int64, send func(Event) error) (n int, end bool, err error) {
	evs, err := r.cfg.Events.ListTurnEvents(ctx, orgID, turnID, *after, 0)
	if err != nil {
		return 0, false, fmt.Errorf("read the turn's events: %w", err)
	}
	for _, ev := range evs {
		k := agent.EventKind(ev.Kind)
		if err := send(Event{Seq: ev.Seq, Kind: k, Data: ev.Data}); err != nil {
			return n, false, err
		}
		*after = ev.Seq
		n++
		if k == agent.EventDone || k == agent.EventError {
			return n, true, nil
		}
	}
	return n, false, nil
}
