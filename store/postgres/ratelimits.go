package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/quiverhq/quiver/store"
)

// takeAttempts bounds TakeToken's lock-or-insert loop: each further round
// means another take inserted the key's bucket between this one's read
// and its insert (or a sweep deleted it again).
const takeAttempts = 4

// errBucketChurn is TakeToken's error when the key's bucket kept being
// inserted and deleted under it for takeAttempts rounds.
var errBucketChurn = errors.New("the rate bucket changed under every attempt")

// casAttempts is how often TakeToken tries its lock-free path before it
// takes the row lock: each further try means another take of the key
// committed between this one's read and its write.
const casAttempts = 2

// TakeToken spends one token of key's bucket. First, with no
// transaction, it reads the bucket and writes the spend only if the row
// still holds what it read (a compare-and-swap UPDATE, or INSERT … ON
// CONFLICT DO NOTHING for a key with no row): two statements, no BEGIN
// or COMMIT, in the usual case of one taker at a time. A write that
// finds the row changed (another take, on any replica, committed in
// between) tries again, and after casAttempts takes the locking path
// (takeLocked), where concurrent takers queue on the row. Either way
// every spend is counted once and none is lost. A refused take writes
// nothing.
func (s *Store) TakeToken(ctx context.Context, key string, burst int, every time.Duration, now time.Time) (time.Duration, bool, error) {
	if err := store.CheckTakeToken(key, burst, every, now); err != nil {
		return 0, false, wrapErr("take token", err)
	}
	now = instant(now) // the stored precision: the bucket's At is the now it counted with
	for range casAttempts {
		wait, ok, done, err := s.takeSwap(ctx, key, burst, every, now)
		if err != nil {
			return 0, false, wrapErr("take token", err)
		}
		if done {
			return wait, ok, nil
		}
	}
	wait, ok, err := s.takeLocked(ctx, key, burst, every, now)
	if err != nil {
		return 0, false, wrapErr("take token", err)
	}
	return wait, ok, nil
}

// takeSwap is one lock-free try of TakeToken: done false means the row
// changed between the read and the write, which then wrote nothing.
func (s *Store) takeSwap(ctx context.Context, key string, burst int, every time.Duration, now time.Time) (wait time.Duration, ok, done bool, err error) {
	const read = `SELECT tokens, touched_at FROM rate_buckets WHERE key = $1`
	var b store.RateBucket
	err = busy(s.pool.QueryRow(ctx, read, key).Scan(&b.Tokens, &b.At))
	found := err == nil
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		b = store.FullRateBucket(burst, now)
	case err != nil:
		return 0, false, false, err
	}
	next, wait, ok := b.Take(burst, every, now)
	if !ok {
		return wait, false, true, nil
	}
	var tag pgconn.CommandTag
	if found {
		const q = `UPDATE rate_buckets SET tokens = $2, touched_at = $3
			WHERE key = $1 AND tokens = $4 AND touched_at = $5`
		tag, err = s.pool.Exec(ctx, q, key, next.Tokens, next.At, b.Tokens, b.At)
	} else {
		const q = `INSERT INTO rate_buckets (key, tokens, touched_at) VALUES ($1, $2, $3)
			ON CONFLICT (key) DO NOTHING`
		tag, err = s.pool.Exec(ctx, q, key, next.Tokens, next.At)
	}
	if err != nil {
		return 0, false, false, busy(err)
	}
	return wait, true, tag.RowsAffected() == 1, nil
}

// takeLocked is TakeToken in one transaction at READ COMMITTED: SELECT …
// FOR UPDATE locks the bucket's row, so concurrent takers of the key, on
// any replica, queue on it and each reads the spend of the one before;
// the new state is an UPDATE under that lock. A key with no row gets one
// by INSERT … ON CONFLICT DO NOTHING, which waits for a concurrent insert
// of the key and, when that one committed, inserts nothing: the loop then
// locks the row it inserted.
func (s *Store) takeLocked(ctx context.Context, key string, burst int, every time.Duration, now time.Time) (time.Duration, bool, error) {
	var wait time.Duration
	var ok bool
	err := s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		for range takeAttempts {
			b, err := lockRateBucket(ctx, tx, key)
			found := err == nil
			switch {
			case errors.Is(err, pgx.ErrNoRows):
				b = store.FullRateBucket(burst, now)
			case err != nil:
				return err
			}
			var next store.RateBucket
			if next, wait, ok = b.Take(burst, every, now); !ok {
				return nil
			}
			if found {
				const q = `UPDATE rate_buckets SET tokens = $2, touched_at = $3 WHERE key = $1`
				_, err := tx.Exec(ctx, q, key, next.Tokens, next.At)
				return err
			}
			const q = `INSERT INTO rate_buckets (key, tokens, touched_at) VALUES ($1, $2, $3)
				ON CONFLICT (key) DO NOTHING`
			tag, err := tx.Exec(ctx, q, key, next.Tokens, next.At)
			if err != nil || tag.RowsAffected() == 1 {
				return err
			}
		}
		return errBucketChurn
	})
	return wait, ok, err
}

// lockRateBucket reads key's bucket and locks its row until the
// transaction ends; no row is pgx.ErrNoRows.
func lockRateBucket(ctx context.Context, tx pgx.Tx, key string) (store.RateBucket, error) {
	const q = `SELECT tokens, touched_at FROM rate_buckets WHERE key = $1 FOR UPDATE`
	var b store.RateBucket
	err := tx.QueryRow(ctx, q, key).Scan(&b.Tokens, &b.At)
	return b, err
}

// DeleteRateBucketsBefore deletes the idle buckets in one statement; a
// bucket a take holds locked is deleted after that take commits, when it
// is still idle (DELETE re-checks a row changed meanwhile).
func (s *Store) DeleteRateBucketsBefore(ctx context.Context, before time.Time) (int, error) {
	if err := store.CheckDeleteRateBuckets(before); err != nil {
		return 0, wrapErr("delete rate buckets", err)
	}
	tag, err := s.pool.Exec(ctx, `DELETE FROM rate_buckets WHERE touched_at < $1`, before)
	if err != nil {
		return 0, wrapErr("delete rate buckets", err)
	}
	return int(tag.RowsAffected()), nil
}
