package runs

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// farFuture is the cutoff Recover gives ReapRuns when no other process
// can be alive: every lease counts as expired.
var farFuture = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// Recover records what the last stop of the deployment's servers cut
// short, as a server starts. When the registry is Exclusive (SQLite,
// under the server lock) every run left over is reaped, whatever its
// lease says, since the process that held it is gone. Otherwise
// (replicas on PostgreSQL) only expired
// leases are reaped, and the live replicas' runs are left alone. Either
// way running turns with no run (cut short before runs were recorded, or
// whose last write failed) are recorded as interrupted. It returns how
// many turns it recorded as interrupted, and logs a warning when any.
func (r *Registry) Recover(ctx context.Context) (int, error) {
	now := r.cfg.Now()
	cutoff := now
	if r.cfg.Exclusive {
		cutoff = farFuture
	}
	reaped, err := r.cfg.Runs.ReapRuns(ctx, cutoff, now)
	if err != nil {
		return 0, fmt.Errorf("reap the runs the last stop left: %w", err)
	}
	n := len(reaped)
	if r.cfg.Turns != nil {
		m, err := r.cfg.Turns.InterruptTurns(ctx, now, now)
		if err != nil {
			return n, fmt.Errorf("record interrupted turns: %w", err)
		}
		n += m
	}
	if n > 0 {
		r.cfg.Logger.Warn("turns cut short by the last stop recorded as interrupted", "turns", n)
	}
	return n, nil
}

// Loop renews this replica's leases every heartbeat, picking up cancel
// requests from other replicas, and, on a goroutine of its own (so that a
// slow sweep never delays a renewal), every reap interval reaps the runs
// of replicas that stopped renewing and deletes events past their
// retention, until ctx ends. Then every run still held here is cancelled
// with ErrStopping, and Loop returns.
func (r *Registry) Loop(ctx context.Context) {
	defer r.stopCancel(ErrStopping)
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		reap := time.NewTicker(r.cfg.Reap)
		defer reap.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-reap.C:
				r.Reap(ctx)
			}
		}
	})
	beat := time.NewTicker(r.cfg.Heartbeat)
	defer beat.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-beat.C:
			r.Heartbeat(ctx)
		}
	}
}

// Heartbeat renews the leases of the runs held here once: a run whose
// cancel was requested elsewhere is cancelled (ErrCancelled), and one
// the store no longer holds for this replica stops (ErrLeaseLost); each
// renewed run's watchdog moves on to the new end of its lease. The
// renewal is bounded by a heartbeat: one that takes longer is abandoned,
// and the next tries again (a run whose lease passes meanwhile stops by
// its watchdog). Loop calls it every heartbeat; tests call it directly.
func (r *Registry) Heartbeat(ctx context.Context) {
	now := r.cfg.Now()
	r.mu.Lock()
	claimsBefore := r.claims
	r.mu.Unlock()
	rctx, cancel := context.WithTimeout(ctx, r.cfg.Heartbeat)
	renewed, err := r.cfg.Runs.RenewRuns(rctx, r.cfg.Replica, now, now.Add(r.cfg.Lease))
	cancel()
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		if ctx.Err() == nil {
			r.cfg.Logger.Error("renew this replica's turn leases", "err", err)
		}
		for _, run := range r.local {
			if run.leaseEnd(r.cfg.Lease).Before(now) {
				run.cancel(ErrLeaseLost)
			}
		}
		return
	}
	held := make(map[string]bool, len(renewed))
	for _, sr := range renewed {
		k := runKey(sr.OrgID, sr.ConversationID)
		run := r.local[k]
		if run == nil || run.sr.TurnID != sr.TurnID {
			continue
		}
		held[k] = true
		run.renew(now, now.Add(r.cfg.Lease).Sub(r.cfg.Now()))
		if sr.CancelRequested {
			run.cancel(ErrCancelled)
		}
	}
	for k, run := range r.local {
		if !held[k] && run.claim <= claimsBefore {
			r.cfg.Logger.Warn("a turn lost its lease and stops here", "conversation", run.sr.ConversationID, "turn", run.sr.TurnID)
			run.cancel(ErrLeaseLost)
		}
	}
}

// Reap records the turns of replicas that stopped renewing as
// interrupted, and deletes events past their retention, once. Loop calls
// it every reap interval; tests call it directly.
func (r *Registry) Reap(ctx context.Context) {
	now := r.cfg.Now()
	ctx, cancel := context.WithTimeout(ctx, max(r.cfg.Reap, time.Minute))
	defer cancel()
	reaped, err := r.cfg.Runs.ReapRuns(ctx, now, now)
	if err != nil && ctx.Err() == nil {
		r.cfg.Logger.Error("reap the turns of stopped replicas", "err", err)
	}
	for _, sr := range reaped {
		r.cfg.Logger.Warn("turn of a replica that stopped renewing recorded as interrupted",
			"conversation", sr.ConversationID, "turn", sr.TurnID, "replica", sr.Replica)
	}
	if _, err := r.cfg.Events.DeleteTurnEventsBefore(ctx, now.Add(-r.cfg.Retention)); err != nil && ctx.Err() == nil {
		r.cfg.Logger.Error("delete turn events past their retention", "err", err)
	}
}

// renew records a renewal made at t and moves the run's watchdog to fire
// after d, the time left of the lease it granted.
func (run *Run) renew(t time.Time, d time.Duration) {
	run.mu.Lock()
	defer run.mu.Unlock()
	run.renewed = t
	run.watchdog.Reset(max(d, 0))
}

// leaseEnd is when the run's lease passes unless renewed again.
func (run *Run) leaseEnd(lease time.Duration) time.Time {
	run.mu.Lock()
	defer run.mu.Unlock()
	return run.renewed.Add(lease)
}
