package postgres

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/quiverhq/quiver/store"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// SQLSTATE codes the store tells apart.
const (
	codeSerializationFailure = "40001"
	codeDeadlockDetected     = "40P01"
	codeUniqueViolation      = "23505"
	codeForeignKeyViolation  = "23503"
	codeCheckViolation       = "23514"
	codeTooManyConnections   = "53300"
	codeLockNotAvailable     = "55P03"
)

// maxTxAttempts bounds how often inTx runs a transaction that keeps
// failing on serialization or deadlock: past it the failure is returned,
// so contention shows as an error instead of an endless loop.
const maxTxAttempts = 8

// retryBase is the first pause before a retry; each further one doubles,
// with jitter, so that the transactions that collided do not collide
// again in step.
const retryBase = 2 * time.Millisecond

// Isolation levels inTx runs at. ReadCommitted is PostgreSQL's default;
// a caller choosing another says, at the call, which invariant needs it.
const (
	readCommitted  = pgx.ReadCommitted
	repeatableRead = pgx.RepeatableRead
	serializable   = pgx.Serializable
)

// inTx runs fn in a transaction at iso and commits when fn returns nil;
// otherwise nothing fn wrote is kept and fn's error is returned. A
// serialization failure or a deadlock, from fn or from the commit, rolls
// back and runs fn again, at most maxTxAttempts times in all, so fn must
// be safe to repeat: it reads what it needs inside the transaction, keeps
// no effect outside it, and is quick (never a model call, a tool call or
// network I/O: a transaction holds locks and a connection while it runs).
//
// The wait for a pooled connection is bounded by store.WriteWait(ctx):
// past it, with ctx still live, inTx fails with store.ErrBusy having
// written nothing, as it does when PostgreSQL refuses a connection for
// their number (53300) or a lock wait past lock_timeout (55P03).
func (s *Store) inTx(ctx context.Context, iso pgx.TxIsoLevel, fn func(pgx.Tx) error) error {
	return retrying(ctx, func() error {
		wait := store.WriteWait(ctx)
		wctx, cancel := context.WithTimeout(ctx, wait)
		conn, err := s.pool.Acquire(wctx)
		cancel()
		if err != nil {
			if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
				return fmt.Errorf("%w: no database connection came free within %v", store.ErrBusy, wait)
			}
			return busy(err)
		}
		defer conn.Release()
		return busy(pgx.BeginTxFunc(ctx, conn, pgx.TxOptions{IsoLevel: iso}, fn))
	})
}

// busy is err, marked store.ErrBusy when PostgreSQL refused for load:
// too many connections (53300) or a lock not available in time (55P03).
func busy(err error) error {
	if err == nil || errors.Is(err, store.ErrBusy) {
		return err
	}
	if c := sqlState(err); c == codeTooManyConnections || c == codeLockNotAvailable {
		return fmt.Errorf("%w: %w", store.ErrBusy, err)
	}
	return err
}

// retrying calls run until it returns anything but a serialization
// failure or a deadlock, at most maxTxAttempts times, pausing between
// calls, and returns its last error. run is one transaction: a single
// statement, or inTx's BEGIN … COMMIT.
func retrying(ctx context.Context, run func() error) error {
	for attempt := 1; ; attempt++ {
		err := run()
		if err == nil || !retryable(err) || attempt == maxTxAttempts {
			return err
		}
		if err := pause(ctx, attempt); err != nil {
			return err
		}
	}
}

// retryable reports whether err is a transaction conflict that running
// the transaction again may resolve.
func retryable(err error) bool {
	code := sqlState(err)
	return code == codeSerializationFailure || code == codeDeadlockDetected
}

// pause waits before retry number attempt: retryBase·2^(attempt-1), plus
// up to as much again at random, or until ctx is done.
func pause(ctx context.Context, attempt int) error {
	d := retryBase << (attempt - 1)
	d += rand.N(d)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// sqlState returns the SQLSTATE of the PostgreSQL error err wraps, or "".
func sqlState(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}

// constraintOf returns the name of the constraint a PostgreSQL error
// wrapped by err names ("" when none), to tell one unique key from
// another.
func constraintOf(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.ConstraintName
	}
	return ""
}
