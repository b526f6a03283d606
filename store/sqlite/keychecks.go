package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/quiverhq/quiver/store"
)

// keyCheckName is the deployment row holding the keyring check.
const keyCheckName = store.KeyCheckName

// KeyCheck returns the stored keyring check, or "" when none is stored.
func (s *Store) KeyCheck(ctx context.Context) (string, error) {
	sealed, err := readKeyCheck(ctx, s.reader)
	if err != nil {
		return "", fmt.Errorf("sqlite: key check: %w", err)
	}
	return sealed, nil
}

// readKeyCheck reads the keyring check through q, "" when none is stored.
func readKeyCheck(ctx context.Context, q queryRower) (string, error) {
	var sealed string
	err := q.QueryRowContext(ctx, `SELECT value FROM deployment WHERE name = ?`, keyCheckName).Scan(&sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return sealed, err
}

// SetKeyCheck stores sealed as the keyring check when the stored one is
// old ("" meaning none; sealed "" removes it), in one transaction that
// holds the write lock from the comparison to the commit, so that of
// concurrent calls over one old value, in any process, the first wins
// and the others find the value changed. Another stored value gives an
// error wrapping store.ErrConflict; a value store.CheckKeyCheck refuses,
// an error. Each writes nothing.
func (s *Store) SetKeyCheck(ctx context.Context, old, sealed string) error {
	if err := store.CheckKeyCheck(sealed); err != nil {
		return fmt.Errorf("sqlite: set key check: %w", err)
	}
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		stored, err := readKeyCheck(ctx, tx)
		if err != nil {
			return err
		}
		if stored != old {
			return fmt.Errorf("keyring check: %w", store.ErrConflict)
		}
		return writeKeyCheck(ctx, tx, sealed)
	})
	if err != nil {
		return fmt.Errorf("sqlite: set key check: %w", err)
	}
	return nil
}

// writeKeyCheck stores sealed as the keyring check, or removes the check
// when sealed is "".
func writeKeyCheck(ctx context.Context, tx *sql.Tx, sealed string) error {
	if sealed == "" {
		_, err := tx.ExecContext(ctx, `DELETE FROM deployment WHERE name = ?`, keyCheckName)
		return err
	}
	const upsert = `INSERT INTO deployment (name, value) VALUES (?, ?)
		ON CONFLICT (name) DO UPDATE SET value = excluded.value`
	_, err := tx.ExecContext(ctx, upsert, keyCheckName, sealed)
	return err
}
