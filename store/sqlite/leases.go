package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/quiverhq/quiver/store"
)

// TakeLease takes, renews or reads the lease in one write transaction
// (one writer: two takers never both see it free).
func (s *Store) TakeLease(ctx context.Context, name, holder string, now time.Time, ttl time.Duration) (store.Lease, bool, error) {
	if err := store.CheckLease(name, holder, now, ttl); err != nil {
		return store.Lease{}, false, fmt.Errorf("sqlite: take lease: %w", err)
	}
	var l store.Lease
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		var expires string
		err := tx.QueryRowContext(ctx, `INSERT INTO leases (name, holder, expires_at) VALUES (?1, ?2, ?3)
			ON CONFLICT (name) DO UPDATE SET holder = ?2, expires_at = ?3
				WHERE leases.holder = ?2 OR leases.expires_at <= ?4
			RETURNING holder, expires_at`, name, holder, encodeTime(now.Add(ttl)), encodeTime(now)).Scan(&l.Holder, &expires)
		if err == sql.ErrNoRows {
			err = tx.QueryRowContext(ctx, `SELECT holder, expires_at FROM leases WHERE name = ?`, name).Scan(&l.Holder, &expires)
		}
		if err != nil {
			return err
		}
		l.Name = name
		l.ExpiresAt, err = decodeTime(expires)
		return err
	})
	if err != nil {
		return store.Lease{}, false, fmt.Errorf("sqlite: take lease: %w", err)
	}
	return l, l.Holder == holder, nil
}

// ReleaseLease deletes the lease when holder holds it.
func (s *Store) ReleaseLease(ctx context.Context, name, holder string) error {
	if !validKeys(name, holder) {
		return nil
	}
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM leases WHERE name = ? AND holder = ?`, name, holder)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: release lease: %w", err)
	}
	return nil
}
