package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/quiverhq/quiver/store"
)

// GetOrgSettings returns the organisation's settings: the document byte
// for byte, the secrets by name, the version and UpdatedAt of the last
// save. An organisation that never saved any, or that does not exist,
// gets {OrgID, Version: 0, Secrets: empty non-nil map} and no error. The
// document and the secrets are read in one transaction, so they come
// from the same save.
func (s *Store) GetOrgSettings(ctx context.Context, orgID string) (store.OrgSettings, error) {
	var set store.OrgSettings
	err := s.inReadTx(ctx, func(tx *sql.Tx) error {
		var err error
		set, err = readOrgSettings(ctx, tx, orgID)
		return err
	})
	if err != nil {
		return store.OrgSettings{}, fmt.Errorf("sqlite: get org settings: %w", err)
	}
	return set, nil
}

// inReadTx runs fn in a read transaction on the readers: in WAL mode it
// reads one snapshot of the database, whatever the writer commits
// meanwhile.
func (s *Store) inReadTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // it only ends the read
	return fn(tx)
}

// readOrgSettings reads the organisation's settings row and secrets.
func readOrgSettings(ctx context.Context, tx *sql.Tx, orgID string) (store.OrgSettings, error) {
	set := store.OrgSettings{OrgID: orgID, Secrets: map[string]string{}}
	const q = `SELECT doc, version, updated_at FROM org_settings WHERE org_id = ?`
	var updatedAt string
	err := tx.QueryRowContext(ctx, q, orgID).Scan(&set.Doc, &set.Version, &updatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return set, nil // never saved: no secrets either (they need the row)
	}
	if err != nil {
		return store.OrgSettings{}, err
	}
	if set.Doc == nil {
		set.Doc = []byte{} // saved empty; nil means never saved
	}
	if set.UpdatedAt, err = decodeTime(updatedAt); err != nil {
		return store.OrgSettings{}, err
	}
	if err := readOrgSecrets(ctx, tx, orgID, set.Secrets); err != nil {
		return store.OrgSettings{}, err
	}
	return set, nil
}

// readOrgSecrets adds the organisation's secrets to into.
func readOrgSecrets(ctx context.Context, tx *sql.Tx, orgID string, into map[string]string) error {
	const q = `SELECT name, sealed FROM org_secrets WHERE org_id = ?`
	rows, err := tx.QueryContext(ctx, q, orgID)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var name, sealed string
		if err := rows.Scan(&name, &sealed); err != nil {
			return err
		}
		into[name] = sealed
	}
	return rows.Err()
}

// PutOrgSettings stores s as the organisation's settings when the stored
// version is s.Version (0 when never saved): the document byte for byte
// (nil as empty), exactly the secrets of s.Secrets, version s.Version+1
// and UpdatedAt = s.UpdatedAt, in one transaction holding the write lock
// from the version check to the commit, and returns the new version.
// Another stored version gives an error wrapping store.ErrConflict; an
// organisation that does not exist, store.ErrNotFound; an empty secret
// name or sealed value, an error. Each writes nothing.
func (s *Store) PutOrgSettings(ctx context.Context, set store.OrgSettings) (int64, error) {
	if err := checkSecrets(set.Secrets); err != nil {
		return 0, fmt.Errorf("sqlite: put org settings: %w", err)
	}
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		if err := checkSettingsVersion(ctx, tx, set.OrgID, set.Version); err != nil {
			return err
		}
		return writeOrgSettings(ctx, tx, set)
	})
	if err != nil {
		return 0, fmt.Errorf("sqlite: put org settings: %w", err)
	}
	return set.Version + 1, nil
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

// checkSettingsVersion returns the sentinel error of a save based on
// version in orgID, or nil when it may go ahead.
func checkSettingsVersion(ctx context.Context, tx *sql.Tx, orgID string, version int64) error {
	const q = `SELECT
			EXISTS (SELECT 1 FROM orgs WHERE id = ?1),
			coalesce((SELECT version FROM org_settings WHERE org_id = ?1), 0)`
	var org bool
	var stored int64
	if err := tx.QueryRowContext(ctx, q, orgID).Scan(&org, &stored); err != nil {
		return err
	}
	if !org {
		return fmt.Errorf("organisation %q: %w", orgID, store.ErrNotFound)
	}
	if stored != version {
		return fmt.Errorf("version %d, stored %d: %w", version, stored, store.ErrConflict)
	}
	return nil
}

// writeOrgSettings stores set as the next version and replaces the
// organisation's secrets with set.Secrets, in name order.
func writeOrgSettings(ctx context.Context, tx *sql.Tx, set store.OrgSettings) error {
	doc := set.Doc
	if doc == nil {
		doc = []byte{} // a nil []byte is NULL to the driver
	}
	const upsert = `INSERT INTO org_settings (org_id, doc, version, updated_at)
		VALUES (?, ?, ?, ?)
		ON CONFLICT (org_id) DO UPDATE SET
			doc = excluded.doc,
			version = excluded.version,
			updated_at = excluded.updated_at`
	_, err := tx.ExecContext(ctx, upsert, set.OrgID, doc, set.Version+1, encodeTime(set.UpdatedAt))
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM org_secrets WHERE org_id = ?`, set.OrgID); err != nil {
		return err
	}
	const insert = `INSERT INTO org_secrets (org_id, name, sealed) VALUES (?, ?, ?)`
	for _, name := range slices.Sorted(maps.Keys(set.Secrets)) {
		if _, err := tx.ExecContext(ctx, insert, set.OrgID, name, set.Secrets[name]); err != nil {
			return err
		}
	}
	return nil
}

// CountOrgSecrets returns how many sealed secrets are stored, in every
// organisation.
func (s *Store) CountOrgSecrets(ctx context.Context) (int, error) {
	var n int
	if err := s.reader.QueryRowContext(ctx, `SELECT count(*) FROM org_secrets`).Scan(&n); err != nil {
		return 0, fmt.Errorf("sqlite: count org secrets: %w", err)
	}
	return n, nil
}

// orgSecret is one stored secret, as RewrapOrgSecrets reads it.
type orgSecret struct {
	orgID, name, sealed string
}

// RewrapOrgSecrets calls rewrap for every stored secret, in every
// organisation, ordered by organisation and name, and stores each value
// it returns that differs, all in one transaction that holds the write
// lock throughout. When rewrap fails, or returns an empty value, nothing
// is written and the error is returned wrapped. The version of every
// organisation with a changed secret goes up by one in that transaction:
// a save based on a read from before, whose secrets are sealed under the
// old key, must get store.ErrConflict rather than write them back.
// UpdatedAt is left alone: re-sealing is not an edit. It returns how many
// secrets changed.
func (s *Store) RewrapOrgSecrets(ctx context.Context, rewrap func(orgID, name, sealed string) (string, error)) (int, error) {
	var changed int
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		secrets, err := allOrgSecrets(ctx, tx) // all read before the first write
		if err != nil {
			return err
		}
		var orgs []string
		changed, orgs, err = rewrapSecrets(ctx, tx, secrets, rewrap)
		if err != nil {
			return err
		}
		return bumpSettingsVersions(ctx, tx, orgs)
	})
	if err != nil {
		return 0, fmt.Errorf("sqlite: rewrap org secrets: %w", err)
	}
	return changed, nil
}

// allOrgSecrets reads every stored secret, by organisation and name.
func allOrgSecrets(ctx context.Context, tx *sql.Tx) ([]orgSecret, error) {
	const q = `SELECT org_id, name, sealed FROM org_secrets ORDER BY org_id, name`
	rows, err := tx.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var secrets []orgSecret
	for rows.Next() {
		var sec orgSecret
		if err := rows.Scan(&sec.orgID, &sec.name, &sec.sealed); err != nil {
			return nil, err
		}
		secrets = append(secrets, sec)
	}
	return secrets, rows.Err()
}

// rewrapSecrets stores rewrap's answer for each of secrets where it
// differs and returns how many it stored, and the organisations whose
// secrets changed, each once, in order.
func rewrapSecrets(ctx context.Context, tx *sql.Tx, secrets []orgSecret, rewrap func(orgID, name, sealed string) (string, error)) (int, []string, error) {
	const q = `UPDATE org_secrets SET sealed = ? WHERE org_id = ? AND name = ?`
	changed := 0
	var orgs []string
	for _, sec := range secrets {
		sealed, err := rewrap(sec.orgID, sec.name, sec.sealed)
		if err == nil && sealed == "" {
			err = errors.New("rewrap returned an empty value")
		}
		if err != nil {
			return 0, nil, fmt.Errorf("secret %q in %s: %w", sec.name, sec.orgID, err)
		}
		if sealed == sec.sealed {
			continue
		}
		if _, err := tx.ExecContext(ctx, q, sealed, sec.orgID, sec.name); err != nil {
			return 0, nil, err
		}
		changed++
		if len(orgs) == 0 || orgs[len(orgs)-1] != sec.orgID { // secrets are by organisation
			orgs = append(orgs, sec.orgID)
		}
	}
	return changed, orgs, nil
}

// bumpSettingsVersions adds one to the settings version of each of orgs.
func bumpSettingsVersions(ctx context.Context, tx *sql.Tx, orgs []string) error {
	const q = `UPDATE org_settings SET version = version + 1 WHERE org_id = ?`
	for _, org := range orgs {
		if _, err := tx.ExecContext(ctx, q, org); err != nil {
			return err
		}
	}
	return nil
}
