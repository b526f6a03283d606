package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quiverhq/quiver/store"
)

// TakeLease takes, renews or reads the lease. The upsert's conflict
// clause locks the row, so of concurrent takers of a free or expired
// lease exactly one's condition holds; the others read the winner.
func (s *Store) TakeLease(ctx context.Context, name, holder string, now time.Time, ttl time.Duration) (store.Lease, bool, error) {
	if err := store.CheckLease(name, holder, now, ttl); err != nil {
		return store.Lease{}, false, fmt.Errorf("postgres: take lease: %w", err)
	}
	l := store.Lease{Name: name}
	err := s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `INSERT INTO leases (name, holder, expires_at) VALUES ($1, $2, $3)
			ON CONFLICT (name) DO UPDATE SET holder = $2, expires_at = $3
				WHERE leases.holder = $2 OR leases.expires_at <= $4
			RETURNING holder, expires_at`, name, holder, now.Add(ttl), now).Scan(&l.Holder, &l.ExpiresAt)
		if errors.Is(err, pgx.ErrNoRows) {
			err = tx.QueryRow(ctx, `SELECT holder, expires_at FROM leases WHERE name = $1`, name).Scan(&l.Holder, &l.ExpiresAt)
		}
		return err
	})
	if err != nil {
		return store.Lease{}, false, wrapErr("take lease", err)
	}
	l.ExpiresAt = utc(l.ExpiresAt)
	return l, l.Holder == holder, nil
}

// ReleaseLease deletes the lease when holder holds it.
func (s *Store) ReleaseLease(ctx context.Context, name, holder string) error {
	if !validSkillKeys(name, holder) {
		return nil
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM leases WHERE name = $1 AND holder = $2`, name, holder); err != nil {
		return wrapErr("release lease", err)
	}
	return nil
}
