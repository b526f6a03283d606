package accounts

import (
	"context"
	"log/slog"
	"time"
)

// DefaultSweepPeriod is how often a Sweeper whose Period is zero deletes
// expired credentials.
const DefaultSweepPeriod = time.Hour

// Sweeper deletes expired credentials (used login links, ended
// sessions, expired API tokens) now and then, so that the store keeps
// only live ones (Service.DeleteExpired). Accounts is required; every
// other zero value means the default its field names.
type Sweeper struct {
	// Accounts deletes the expired credentials.
	Accounts *Service
	// Period is the time between two sweeps; 0 means
	// DefaultSweepPeriod.
	Period time.Duration
	// Logger records each sweep that deleted something and each failed
	// one; nil discards.
	Logger *slog.Logger
}

// Run sweeps at once and then every Period until ctx ends. A failed
// sweep is logged and the next one is tried at its time; a sweep that
// fails because ctx ended is not logged. Run returns when ctx ends.
func (w Sweeper) Run(ctx context.Context) {
	period, logger := w.Period, w.Logger
	if period == 0 {
		period = DefaultSweepPeriod
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		n, err := w.Accounts.DeleteExpired(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			logger.Error("delete expired credentials", "err", err)
		case n > 0:
			logger.Info("expired credentials deleted", "count", n)
		}
		if ctx.Err() != nil {
			return // before the select, which might take a tick instead
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
