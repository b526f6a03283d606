package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quiverhq/quiver/store"
)

// takeAttempts bounds TakeToken's lock-or-insert loop: each further round
// means another take inserted the key's bucket between this one's read
// and its insert (or a sweep deleted it again).
const takeAttempts = 4

// errBucketChurn is TakeToken's error when the key's bucket kept being
// inserted and deleted under it for takeAttempts rounds.
var errBucketChurn = errors.New("the rate bucket changed under every attempt")

// TakeToken spends one token of key's bucket in one transaction at READ
// COMMITTED: SELECT … FOR UPDATE locks the bucket's row, so concurrent
// takers of the key, on any replica, queue on it and each reads the spend
// of the one before; the new state is an UPDATE under that lock. A key
// with no row gets one by INSERT … ON CONFLICT DO NOTHING, which waits
// for a concurrent insert of the key and, when that one committed,
// inserts nothing: the loop then locks the row it inserted. A refused
// take writes nothing.
func (s *Store) TakeToken(ctx context.Context, key string, burst int, every time.Duration, now time.Time) (time.Duration, bool, error) {
	if err := store.CheckTakeToken(key, burst, every, now); err != nil {
		return 0, false, wrapErr("take token", err)
	}
	now = instant(now) // the stored precision: the bucket's At is the now it counted with
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
	if err != nil {
		return 0, false, wrapErr("take token", err)
	}
	return wait, ok, nil
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
