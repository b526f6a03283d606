package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/quiverhq/quiver/store"
)

// credentialKinds are the kinds PutCredential stores.
var credentialKinds = []string{store.CredAPIToken, store.CredSession, store.CredLoginLink}

// credentialColumns are the columns scanCredential reads, in its order.
const credentialColumns = `kind, hash, org_id, user_id, label, csrf, created_at,
	expires_at`

// unexpired is the condition, on the parameter ?3 holding now, of a
// credential still working: ExpiresAt is when it stops, so a credential
// expiring exactly at now has expired. Times compare as text (timeLayout).
const unexpired = `(expires_at IS NULL OR expires_at > ?3)`

// PutCredential stores c, or writes nothing and returns, wrapped,
// store.ErrNotFound when c.UserID is not an enabled user of c.OrgID (both
// checked in the write's transaction, so a user disabled meanwhile gets
// none), then store.ErrExists when its hash is stored for its kind
// (expired or not), leaving that credential unchanged. A kind other than
// the store's three, a hash that is not 64 lower-case hex digits (a
// secret passed by mistake is refused, never stored), or an empty
// organisation or user is an error.
func (s *Store) PutCredential(ctx context.Context, c store.Credential) error {
	if err := checkCredential(c); err != nil {
		return fmt.Errorf("sqlite: put credential: %w", err)
	}
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		if err := checkActiveUser(ctx, tx, c.OrgID, c.UserID); err != nil {
			return err
		}
		return insertCredential(ctx, tx, c)
	})
	if err != nil {
		return fmt.Errorf("sqlite: put credential: %w", err)
	}
	return nil
}

// insertCredential inserts c, checked already, or returns store.ErrExists
// when its hash is stored for its kind.
func insertCredential(ctx context.Context, tx *sql.Tx, c store.Credential) error {
	const q = `INSERT INTO credentials (` + credentialColumns + `)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (kind, hash) DO NOTHING`
	res, err := tx.ExecContext(ctx, q, c.Kind, c.Hash, c.OrgID, c.UserID, c.Label,
		c.CSRF, encodeTime(c.CreatedAt), encodeOptionalTime(c.ExpiresAt))
	if err != nil {
		return err
	}
	return changedOr(res, store.ErrExists)
}

// checkCredential refuses what PutCredential must not store.
func checkCredential(c store.Credential) error {
	if !slices.Contains(credentialKinds, c.Kind) {
		return fmt.Errorf("kind %q, want %s, %s or %s", c.Kind,
			store.CredAPIToken, store.CredSession, store.CredLoginLink)
	}
	if !isHexSHA256(c.Hash) {
		// Never quote it: it may be the secret itself.
		return fmt.Errorf("hash of %d bytes is not a lower-case hex SHA-256", len(c.Hash))
	}
	if c.OrgID == "" || c.UserID == "" {
		return errors.New("empty organisation or user")
	}
	return nil
}

// checkActiveUser returns store.ErrNotFound unless userID is a user of
// orgID who is not disabled.
func checkActiveUser(ctx context.Context, tx *sql.Tx, orgID, userID string) error {
	const q = `SELECT EXISTS (SELECT 1 FROM users
		WHERE org_id = ? AND id = ? AND disabled_at IS NULL)`
	var ok bool
	if err := tx.QueryRowContext(ctx, q, orgID, userID).Scan(&ok); err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("no enabled user %q in %q: %w", userID, orgID, store.ErrNotFound)
	}
	return nil
}

// isHexSHA256 reports whether h is 64 lower-case hex digits.
func isHexSHA256(h string) bool {
	if len(h) != 64 {
		return false
	}
	for _, r := range h {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return false
		}
	}
	return true
}

// LookupCredential returns the credential of that kind and hash that has
// not expired at now (its ExpiresAt is zero or after now), or an error
// wrapping store.ErrNotFound.
func (s *Store) LookupCredential(ctx context.Context, kind, hash string, now time.Time) (store.Credential, error) {
	const q = `SELECT ` + credentialColumns + ` FROM credentials
		WHERE kind = ?1 AND hash = ?2 AND ` + unexpired
	c, err := scanCredential(s.reader.QueryRowContext(ctx, q, kind, hash, encodeTime(now)))
	if errors.Is(err, sql.ErrNoRows) {
		err = store.ErrNotFound
	}
	if err != nil {
		return store.Credential{}, fmt.Errorf("sqlite: lookup credential: %w", err)
	}
	return c, nil
}

// ConsumeCredential deletes the credential of that kind and hash that has
// not expired at now and returns it, or returns an error wrapping
// store.ErrNotFound. The select and the delete are one statement on the
// single writer, so of concurrent calls exactly one gets the credential.
// An expired credential is left for DeleteExpiredCredentials.
func (s *Store) ConsumeCredential(ctx context.Context, kind, hash string, now time.Time) (store.Credential, error) {
	const q = `DELETE FROM credentials WHERE kind = ?1 AND hash = ?2 AND ` + unexpired + `
		RETURNING ` + credentialColumns
	var c store.Credential
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		// In the transaction, a row that fails to decode is not lost:
		// the error rolls the delete back.
		var err error
		c, err = scanCredential(tx.QueryRowContext(ctx, q, kind, hash, encodeTime(now)))
		return err
	})
	if errors.Is(err, sql.ErrNoRows) {
		err = store.ErrNotFound
	}
	if err != nil {
		return store.Credential{}, fmt.Errorf("sqlite: consume credential: %w", err)
	}
	return c, nil
}

// DeleteCredential removes the credential of that kind and hash, expired
// or not, or returns an error wrapping store.ErrNotFound.
func (s *Store) DeleteCredential(ctx context.Context, kind, hash string) error {
	const q = `DELETE FROM credentials WHERE kind = ? AND hash = ?`
	res, err := s.writer.ExecContext(ctx, q, kind, hash)
	if err == nil {
		err = changedOr(res, store.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("sqlite: delete credential: %w", err)
	}
	return nil
}

// ListCredentials returns the user's credentials of that kind in that
// organisation, newest (by CreatedAt) first and by hash among equals,
// expired ones included until DeleteExpiredCredentials removes them; none
// and no error when the user has none.
func (s *Store) ListCredentials(ctx context.Context, orgID, userID, kind string) ([]store.Credential, error) {
	cs, err := s.listCredentials(ctx, orgID, userID, kind)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list credentials: %w", err)
	}
	return cs, nil
}

// listCredentials reads the user's credentials of kind on the readers.
func (s *Store) listCredentials(ctx context.Context, orgID, userID, kind string) ([]store.Credential, error) {
	const q = `SELECT ` + credentialColumns + ` FROM credentials
		WHERE org_id = ? AND user_id = ? AND kind = ?
		ORDER BY created_at DESC, hash`
	rows, err := s.reader.QueryContext(ctx, q, orgID, userID, kind)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var cs []store.Credential
	for rows.Next() {
		c, err := scanCredential(rows)
		if err != nil {
			return nil, err
		}
		cs = append(cs, c)
	}
	return cs, rows.Err()
}

// DeleteExpiredCredentials removes every credential, in every
// organisation, expired at now (ExpiresAt not zero and not after now) and
// returns how many.
func (s *Store) DeleteExpiredCredentials(ctx context.Context, now time.Time) (int, error) {
	const q = `DELETE FROM credentials WHERE expires_at <= ?`
	res, err := s.writer.ExecContext(ctx, q, encodeTime(now))
	if err != nil {
		return 0, fmt.Errorf("sqlite: delete expired credentials: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("sqlite: delete expired credentials: %w", err)
	}
	return int(n), nil
}

// scanCredential reads one row of credentialColumns.
func scanCredential(row scanner) (store.Credential, error) {
	var c store.Credential
	var createdAt string
	var expiresAt sql.NullString
	err := row.Scan(&c.Kind, &c.Hash, &c.OrgID, &c.UserID, &c.Label, &c.CSRF,
		&createdAt, &expiresAt)
	if err != nil {
		return store.Credential{}, err
	}
	if c.CreatedAt, err = decodeTime(createdAt); err != nil {
		return store.Credential{}, err
	}
	if c.ExpiresAt, err = decodeOptionalTime(expiresAt); err != nil {
		return store.Credential{}, err
	}
	return c, nil
}
