package postgres

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/quiverhq/quiver/store"
)

// Organisation settings. The version check is the row of org_settings
// itself: a save is one UPDATE ... WHERE version = $n (or, for the first,
// one INSERT ... ON CONFLICT DO NOTHING) that takes the row's lock, so of
// two saves over one version the second waits for the first, finds the
// version moved on and writes nothing. The row lock, held to the commit,
// also serialises the replacement of the organisation's secrets, and key
// rotation takes the same row locks first, so it never interleaves with
// a save either.

// orgSettingsOrgKey is the foreign key naming the organisation a save is
// for.
const orgSettingsOrgKey = "org_settings_org_id_fkey"

// GetOrgSettings returns the organisation's settings: the document byte
// for byte, the secrets by name, the version and UpdatedAt of the last
// save. An organisation that never saved any, or that does not exist,
// gets {OrgID, Version: 0, Secrets: empty non-nil map} and no error. The
// document and the secrets are read in one statement, which reads one
// snapshot, so they come from the same save.
func (s *Store) GetOrgSettings(ctx context.Context, orgID string) (store.OrgSettings, error) {
	const q = `SELECT doc, version, updated_at,
			ARRAY(SELECT name FROM org_secrets WHERE org_id = $1 ORDER BY name),
			ARRAY(SELECT sealed FROM org_secrets WHERE org_id = $1 ORDER BY name)
		FROM org_settings WHERE org_id = $1`
	set := store.OrgSettings{OrgID: orgID, Secrets: map[string]string{}}
	var names, sealed []string
	err := s.pool.QueryRow(ctx, q, orgID).Scan(&set.Doc, &set.Version, &set.UpdatedAt, &names, &sealed)
	if errors.Is(err, pgx.ErrNoRows) {
		return set, nil // never saved: no secrets either (they need the row)
	}
	if err == nil && len(names) != len(sealed) {
		err = fmt.Errorf("%d secret names and %d values", len(names), len(sealed))
	}
	if err != nil {
		return store.OrgSettings{}, wrapErr("get org settings", err)
	}
	if set.Doc == nil {
		set.Doc = []byte{} // saved empty; nil means never saved
	}
	set.UpdatedAt = utc(set.UpdatedAt)
	for i, name := range names {
		set.Secrets[name] = sealed[i]
	}
	return set, nil
}

// PutOrgSettings stores s as the organisation's settings when the stored
// version is s.Version (0 when never saved): the document byte for byte
// (nil as empty), exactly the secrets of s.Secrets, version s.Version+1
// and UpdatedAt = s.UpdatedAt, in one transaction, and returns the new
// version. Another stored version gives an error wrapping
// store.ErrConflict; an organisation that does not exist,
// store.ErrNotFound; an empty secret name or sealed value, an error. Each
// writes nothing.
func (s *Store) PutOrgSettings(ctx context.Context, set store.OrgSettings) (int64, error) {
	if err := checkSecrets(set.Secrets); err != nil {
		return 0, fmt.Errorf("postgres: put org settings: %w", err)
	}
	var version int64
	// READ COMMITTED: the version check is the save's own statement (see
	// saveSettingsRow), whose row lock is held to the commit.
	err := s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		var err error
		if version, err = saveSettingsRow(ctx, tx, set); err != nil {
			return err
		}
		return replaceSecrets(ctx, tx, set.OrgID, set.Secrets)
	})
	if err != nil {
		return 0, wrapErr("put org settings", err)
	}
	return version, nil
}

// checkSecrets refuses a secret the store must not keep: one without a
// name, or an empty sealed value, which no key could open and which
// would make every later RewrapOrgSecrets fail. The error may quote a
// name, never a value.
func checkSecrets(secrets map[string]string) error {
	for name, sealed := range secrets {
		if name == "" {
			return errors.New("secret with an empty name")
		}
		if sealed == "" {
			return fmt.Errorf("secret %q: empty sealed value", name)
		}
	}
	return nil
}

// saveSettingsRow writes set's document as the version after set.Version,
// when that is the stored one, and returns the new version; otherwise it
// returns store.ErrConflict (or store.ErrNotFound for an organisation that
// does not exist) and writes nothing.
//
// One statement both checks and writes. The first save inserts, and of
// two first saves the second waits on the key for the first, then does
// nothing. A later save updates WHERE version = set.Version: of two
// saves over one version the second waits on the row lock of the first,
// then PostgreSQL evaluates the WHERE again on the row the first
// committed, whose version no longer matches, and updates nothing.
func saveSettingsRow(ctx context.Context, tx pgx.Tx, set store.OrgSettings) (int64, error) {
	doc := set.Doc
	if doc == nil {
		doc = []byte{} // a nil []byte is NULL to the driver
	}
	var q string
	if set.Version == 0 {
		q = `INSERT INTO org_settings (org_id, doc, version, updated_at)
			VALUES ($1, $2, $4 + 1, $3)
			ON CONFLICT (org_id) DO NOTHING
			RETURNING version`
	} else {
		q = `UPDATE org_settings SET doc = $2, version = version + 1, updated_at = $3
			WHERE org_id = $1 AND version = $4
			RETURNING version`
	}
	var version int64
	err := tx.QueryRow(ctx, q, set.OrgID, doc, set.UpdatedAt, set.Version).Scan(&version)
	switch {
	case isForeignKeyViolation(err, orgSettingsOrgKey):
		return 0, fmt.Errorf("organisation %q: %w", set.OrgID, store.ErrNotFound)
	case errors.Is(err, pgx.ErrNoRows):
		return 0, settingsRefusal(ctx, tx, set.OrgID, set.Version)
	case err != nil:
		return 0, err
	}
	return version, nil
}

// settingsRefusal returns the error of a save over version that wrote
// nothing: store.ErrNotFound when the organisation does not exist,
// store.ErrConflict naming the stored version otherwise.
func settingsRefusal(ctx context.Context, tx pgx.Tx, orgID string, version int64) error {
	const q = `SELECT
			EXISTS (SELECT 1 FROM orgs WHERE id = $1),
			coalesce((SELECT version FROM org_settings WHERE org_id = $1), 0)`
	var org bool
	var stored int64
	if err := tx.QueryRow(ctx, q, orgID).Scan(&org, &stored); err != nil {
		return err
	}
	if !org {
		return fmt.Errorf("organisation %q: %w", orgID, store.ErrNotFound)
	}
	return fmt.Errorf("version %d, stored %d: %w", version, stored, store.ErrConflict)
}

// replaceSecrets makes secrets the organisation's whole set of secrets.
// The caller holds the organisation's org_settings row lock.
func replaceSecrets(ctx context.Context, tx pgx.Tx, orgID string, secrets map[string]string) error {
	if _, err := tx.Exec(ctx, `DELETE FROM org_secrets WHERE org_id = $1`, orgID); err != nil {
		return err
	}
	if len(secrets) == 0 {
		return nil
	}
	names := slices.Sorted(maps.Keys(secrets))
	sealed := make([]string, len(names))
	for i, name := range names {
		sealed[i] = secrets[name]
	}
	const q = `INSERT INTO org_secrets (org_id, name, sealed)
		SELECT $1, s.name, s.sealed FROM unnest($2::text[], $3::text[]) AS s (name, sealed)`
	_, err := tx.Exec(ctx, q, orgID, names, sealed)
	return err
}

// CountOrgSecrets returns how many sealed secrets are stored, in every
// organisation.
func (s *Store) CountOrgSecrets(ctx context.Context) (int, error) {
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM org_secrets`).Scan(&n); err != nil {
		return 0, wrapErr("count org secrets", err)
	}
	return n, nil
}

// RewrapOrgSecrets calls rewrap for every stored secret, in every
// organisation, ordered by organisation and name, and stores each value
// it returns that differs, all in one transaction. When rewrap fails, or
// returns an empty value, nothing is written and the error is returned
// wrapped. The version of every organisation with a changed secret goes
// up by one in that transaction: a save based on a read from before,
// whose secrets are sealed under the old key, must get store.ErrConflict
// rather than write them back. UpdatedAt is left alone: re-sealing is not
// an edit. It returns how many secrets changed.
func (s *Store) RewrapOrgSecrets(ctx context.Context, rewrap func(orgID, name, sealed string) (string, error)) (int, error) {
	var changed int
	// READ COMMITTED with the org_settings row of every organisation that
	// has secrets locked first, in key order, as a save locks its one row
	// before it touches secrets: saves of those organisations wait for
	// the rotation (and then find the version bumped), a second rotation
	// waits too, and no lock order is ever reversed. The secrets read
	// after the locks are granted are those of the last committed saves.
	err := s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		orgs, err := lockOrgsWithSecrets(ctx, tx)
		if err != nil || len(orgs) == 0 {
			return err
		}
		secrets, err := orgSecretsOf(ctx, tx, orgs)
		if err != nil {
			return err
		}
		changed, err = rewrapSecrets(ctx, tx, secrets, rewrap)
		return err
	})
	if err != nil {
		return 0, wrapErr("rewrap org secrets", err)
	}
	return changed, nil
}

// lockOrgsWithSecrets locks, in key order, the org_settings row of every
// organisation holding a secret, and returns their IDs in that order.
func lockOrgsWithSecrets(ctx context.Context, tx pgx.Tx) ([]string, error) {
	const q = `SELECT org_id FROM org_settings
		WHERE org_id IN (SELECT org_id FROM org_secrets)
		ORDER BY org_id FOR UPDATE`
	rows, err := tx.Query(ctx, q)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// orgSecret is one stored secret, as RewrapOrgSecrets reads it.
type orgSecret struct {
	orgID, name, sealed string
}

// orgSecretsOf reads the secrets of orgs, by organisation and name.
func orgSecretsOf(ctx context.Context, tx pgx.Tx, orgs []string) ([]orgSecret, error) {
	const q = `SELECT org_id, name, sealed FROM org_secrets WHERE org_id = ANY ($1)
		ORDER BY org_id, name`
	rows, err := tx.Query(ctx, q, orgs)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (orgSecret, error) {
		var sec orgSecret
		err := row.Scan(&sec.orgID, &sec.name, &sec.sealed)
		return sec, err
	})
}

// rewrapSecrets stores rewrap's answer for each of secrets where it
// differs, bumps the settings version of each organisation with a changed
// secret, and returns how many secrets it stored.
func rewrapSecrets(ctx context.Context, tx pgx.Tx, secrets []orgSecret, rewrap func(orgID, name, sealed string) (string, error)) (int, error) {
	var orgs, names, values, bumped []string
	for _, sec := range secrets {
		sealed, err := rewrap(sec.orgID, sec.name, sec.sealed)
		if err == nil && sealed == "" {
			err = errors.New("rewrap returned an empty value")
		}
		if err != nil {
			return 0, fmt.Errorf("secret %q in %s: %w", sec.name, sec.orgID, err)
		}
		if sealed == sec.sealed {
			continue
		}
		orgs, names, values = append(orgs, sec.orgID), append(names, sec.name), append(values, sealed)
		if len(bumped) == 0 || bumped[len(bumped)-1] != sec.orgID { // secrets are by organisation
			bumped = append(bumped, sec.orgID)
		}
	}
	if len(names) == 0 {
		return 0, nil
	}
	const set = `UPDATE org_secrets AS s SET sealed = u.sealed
		FROM unnest($1::text[], $2::text[], $3::text[]) AS u (org_id, name, sealed)
		WHERE s.org_id = u.org_id AND s.name = u.name`
	if _, err := tx.Exec(ctx, set, orgs, names, values); err != nil {
		return 0, err
	}
	const bump = `UPDATE org_settings SET version = version + 1 WHERE org_id = ANY ($1)`
	if _, err := tx.Exec(ctx, bump, bumped); err != nil {
		return 0, err
	}
	return len(names), nil
}
