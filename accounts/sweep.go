package accounts

import (
	"context"
	"log/slog"
	"time"

	"github.com/quiverhq/quiver/store"
)

// DefaultSweepPeriod is how often a Sweeper whose Period is zero deletes
// expired credentials.
const DefaultSweepPeriod = time.Hour

// RateBucketIdle is how long a rate bucket goes unspent before a sweep
// deletes it: a day, longer than any rate limit's Burst·Every in use, so
// the buckets deleted are full, the same as none.
const RateBucketIdle = 24 * time.Hour

// Sweeper deletes expired credentials (used login links, ended
// sessions, expired API tokens) now and then, so that the store keeps
// only live ones (Service.DeleteExpired), and rate buckets idle for
// RateBucketIdle. Accounts is required; every other zero value means the
// default its field names.
type Sweeper struct {
	// Accounts deletes the expired credentials; its clock (Now) is the
	// sweep's.
	Accounts *Service
	// RateLimits holds the rate buckets (the HTTP API's per-user
	// limit); nil deletes none.
	RateLimits store.RateLimits
	// Period is the time between two sweeps; 0 means
	// DefaultSweepPeriod.
	Period time.Duration
	// Logger records each sweep that deleted something and each failed
	// one; nil discards.
	Logger *slog.Logger
}

// Run sweeps at once and then every Period until ctx ends. A failed
// sweep (of credentials or of rate buckets, each tried whatever the
// other did) is logged and the next one is tried at its time; a sweep
// that fails because ctx ended is not logged. Run returns when ctx ends.
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
		w.sweep(ctx, logger)
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

// sweep deletes the expired credentials, then the idle rate buckets,
// logging what each deleted or why it failed.
func (w Sweeper) sweep(ctx context.Context, logger *slog.Logger) {
	report := func(what string, n int, err error) {
		switch {
		case err != nil && ctx.Err() == nil:
			logger.Error("delete "+what, "err", err)
		case n > 0:
			logger.Info(what+" deleted", "count", n)
		}
	}
	n, err := w.Accounts.DeleteExpired(ctx)
	report("expired credentials", n, err)
	if w.RateLimits == nil || ctx.Err() != nil {
		return
	}
	n, err = w.RateLimits.DeleteRateBucketsBefore(ctx, w.Accounts.now().Add(-RateBucketIdle))
	report("idle rate buckets", n, err)
}
