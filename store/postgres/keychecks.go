package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/quiverhq/quiver/store"
)

// The keyring check is one row of the deployment table. Each change is
// one statement that compares and writes at once (READ COMMITTED is
// enough): an UPDATE or DELETE ... WHERE value = old takes the row's lock,
// so of two changes over one value the second waits for the first, then
// PostgreSQL evaluates the WHERE again on the committed row, which no
// longer matches, and changes nothing; of two first sets, the second
// INSERT waits on the key for the first, then does nothing.

// keyCheckName is the deployment row holding the keyring check.
const keyCheckName = store.KeyCheckName

// KeyCheck returns the stored keyring check, or "" when none is stored.
func (s *Store) KeyCheck(ctx context.Context) (string, error) {
	var sealed string
	err := s.pool.QueryRow(ctx, `SELECT value FROM deployment WHERE name = $1`, keyCheckName).Scan(&sealed)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", wrapErr("key check", err)
	}
	return sealed, nil
}

// SetKeyCheck stores sealed as the keyring check when the stored one is
// old ("" meaning none; sealed "" removes it), in one statement, so that
// of concurrent calls over one old value, on any replica, exactly one
// changes the row. Another stored value gives an error wrapping
// store.ErrConflict; a value store.CheckKeyCheck refuses, an error. Each
// writes nothing.
func (s *Store) SetKeyCheck(ctx context.Context, old, sealed string) error {
	if err := store.CheckKeyCheck(sealed); err != nil {
		return fmt.Errorf("postgres: set key check: %w", err)
	}
	q, args := setKeyCheckQuery(old, sealed)
	var one int
	err := s.pool.QueryRow(ctx, q, args...).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("postgres: set key check: keyring check: %w", store.ErrConflict)
	}
	if err != nil {
		return wrapErr("set key check", err)
	}
	return nil
}

// setKeyCheckQuery returns the one statement that replaces old with
// sealed, and its arguments: it returns a row when it made the change,
// none when the stored value is not old.
func setKeyCheckQuery(old, sealed string) (string, []any) {
	switch {
	case old == "" && sealed == "":
		// Nothing to write: only whether none is stored.
		return `SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM deployment WHERE name = $1)`, []any{keyCheckName}
	case old == "":
		return `INSERT INTO deployment (name, value) VALUES ($1, $2)
			ON CONFLICT (name) DO NOTHING RETURNING 1`, []any{keyCheckName, sealed}
	case sealed == "":
		return `DELETE FROM deployment WHERE name = $1 AND value = $2 RETURNING 1`, []any{keyCheckName, old}
	}
	return `UPDATE deployment SET value = $3 WHERE name = $1 AND value = $2 RETURNING 1`, []any{keyCheckName, old, sealed}
}
