package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/quiverhq/quiver/store"
)

// TakeToken spends one token of key's bucket in one write transaction,
// which takes the write lock at BEGIN (_txlock=immediate): a read and the
// write after it, with no other writer in between, in this process or
// another on the same file. A refused take writes nothing.
func (s *Store) TakeToken(ctx context.Context, key string, burst int, every time.Duration, now time.Time) (time.Duration, bool, error) {
	if err := store.CheckTakeToken(key, burst, every, now); err != nil {
		return 0, false, fmt.Errorf("sqlite: take token: %w", err)
	}
	var wait time.Duration
	var ok bool
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		b, err := getRateBucket(ctx, tx, key)
		if errors.Is(err, store.ErrNotFound) {
			b, err = store.FullRateBucket(burst, now), nil
		}
		if err != nil {
			return err
		}
		var next store.RateBucket
		if next, wait, ok = b.Take(burst, every, now); !ok {
			return nil
		}
		const q = `INSERT OR REPLACE INTO rate_buckets (key, tokens, touched_at) VALUES (?, ?, ?)`
		_, err = tx.ExecContext(ctx, q, key, next.Tokens, encodeTime(next.At))
		return err
	})
	if err != nil {
		return 0, false, fmt.Errorf("sqlite: take token: %w", err)
	}
	return wait, ok, nil
}

// getRateBucket reads key's bucket, or store.ErrNotFound.
func getRateBucket(ctx context.Context, db queryRower, key string) (store.RateBucket, error) {
	const q = `SELECT tokens, touched_at FROM rate_buckets WHERE key = ?`
	var b store.RateBucket
	var at string
	err := db.QueryRowContext(ctx, q, key).Scan(&b.Tokens, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return store.RateBucket{}, store.ErrNotFound
	}
	if err != nil {
		return store.RateBucket{}, err
	}
	if b.At, err = decodeTime(at); err != nil {
		return store.RateBucket{}, err
	}
	return b, nil
}

// DeleteRateBucketsBefore deletes the idle buckets in one statement.
func (s *Store) DeleteRateBucketsBefore(ctx context.Context, before time.Time) (int, error) {
	if err := store.CheckDeleteRateBuckets(before); err != nil {
		return 0, fmt.Errorf("sqlite: delete rate buckets: %w", err)
	}
	res, err := s.writer.ExecContext(ctx, `DELETE FROM rate_buckets WHERE touched_at < ?`, encodeTime(before))
	var n int64
	if err == nil {
		n, err = res.RowsAffected()
	}
	if err != nil {
		return 0, fmt.Errorf("sqlite: delete rate buckets: %w", err)
	}
	return int(n), nil
}
