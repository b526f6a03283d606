package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quiverhq/quiver/store"
)

// Accounts: the credentials that authenticate users.
//
// Expiry. ExpiresAt is when a credential stops working: it works while
// now < ExpiresAt, and DeleteExpiredCredentials removes it once
// ExpiresAt <= now, the two conditions being exact complements in SQL.
// timestamptz keeps microseconds, so both ExpiresAt and now are cut down
// to the microsecond here (instant) before PostgreSQL sees them, the same
// way: the cut keeps their order, so a credential never works at or after
// its ExpiresAt (at worst it stops working up to a microsecond early,
// within the microsecond it expires in).

// credentialKinds are the kinds PutCredential stores.
var credentialKinds = []string{store.CredAPIToken, store.CredSession, store.CredLoginLink}

// credentialColumns are the columns scanCredential reads, in its order.
const credentialColumns = `kind, hash, org_id, user_id, label, csrf, created_at,
	expires_at`

// unexpired is the condition, on the parameter $3 holding now, of a
// credential still working: a credential expiring exactly at now has
// expired.
const unexpired = `(expires_at IS NULL OR expires_at > $3)`

// instant returns t cut down to the microsecond, the precision of
// timestamptz, for the instants whose order decides whether a credential
// works. Truncation is monotonic: t1 <= t2 gives instant(t1) <=
// instant(t2), so a credential never outlives its ExpiresAt.
func instant(t time.Time) time.Time {
	return t.Truncate(time.Microsecond)
}

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
		return fmt.Errorf("postgres: put credential: %w", err)
	}
	// READ COMMITTED with a share lock on the user's row from the check to
	// the commit (shareEnabledUser): a concurrent DisableUser, which locks
	// the row to update it, either waits for this commit and then deletes
	// the new credential with the others, or commits first and this check
	// finds the user disabled. The hash is a key (insertCredential).
	err := s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		if err := shareEnabledUser(ctx, tx, c.OrgID, c.UserID); err != nil {
			return err
		}
		return insertCredential(ctx, tx, c)
	})
	if err != nil {
		return wrapErr("put credential", err)
	}
	return nil
}

// shareEnabledUser returns store.ErrNotFound unless userID is a user of
// orgID who is not disabled, and share-locks the user's row until tx
// ends. FOR SHARE, not FOR KEY SHARE: DisableUser's update changes no key
// and so would not wait for a key share lock. Waiting on a row a
// concurrent transaction updated, READ COMMITTED checks the condition
// again on the row as that transaction left it.
func shareEnabledUser(ctx context.Context, tx pgx.Tx, orgID, userID string) error {
	const q = `SELECT id FROM users
		WHERE org_id = $1 AND id = $2 AND disabled_at IS NULL
		FOR SHARE`
	var id string
	err := tx.QueryRow(ctx, q, orgID, userID).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("no enabled user %q in %q: %w", userID, orgID, store.ErrNotFound)
	}
	return err
}

// insertCredential inserts c, checked already, or returns store.ErrExists
// when its hash is stored for its kind. The primary key (kind, hash)
// decides between concurrent inserts of one hash: the later waits for the
// earlier's commit, then does nothing.
func insertCredential(ctx context.Context, tx pgx.Tx, c store.Credential) error {
	const q = `INSERT INTO credentials (` + credentialColumns + `)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (kind, hash) DO NOTHING`
	tag, err := tx.Exec(ctx, q, c.Kind, c.Hash, c.OrgID, c.UserID, c.Label, c.CSRF,
		c.CreatedAt, optionalTime(instant(c.ExpiresAt)))
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("a %s of that hash: %w", c.Kind, store.ErrExists)
	}
	return nil
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
		WHERE kind = $1 AND hash = $2 AND ` + unexpired
	c, err := scanCredential(s.pool.QueryRow(ctx, q, kind, hash, instant(now)))
	if err != nil {
		return store.Credential{}, wrapErr("lookup credential", err)
	}
	return c, nil
}

// ConsumeCredential deletes the credential of that kind and hash that has
// not expired at now and returns it, or returns an error wrapping
// store.ErrNotFound. An expired credential is left for
// DeleteExpiredCredentials.
//
// One statement, DELETE ... RETURNING, decides: of concurrent calls, on
// any replica, the first takes the row's lock, and the others wait for
// it and, at READ COMMITTED, find the row gone once it commits, so
// exactly one gets the credential. It runs in a transaction only so that
// a row that fails to decode is rolled back rather than lost.
func (s *Store) ConsumeCredential(ctx context.Context, kind, hash string, now time.Time) (store.Credential, error) {
	const q = `DELETE FROM credentials WHERE kind = $1 AND hash = $2 AND ` + unexpired + `
		RETURNING ` + credentialColumns
	var c store.Credential
	err := s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		var err error
		c, err = scanCredential(tx.QueryRow(ctx, q, kind, hash, instant(now)))
		return err
	})
	if err != nil {
		return store.Credential{}, wrapErr("consume credential", err)
	}
	return c, nil
}

// DeleteCredential removes the credential of that kind and hash, expired
// or not, or returns an error wrapping store.ErrNotFound.
func (s *Store) DeleteCredential(ctx context.Context, kind, hash string) error {
	const q = `DELETE FROM credentials WHERE kind = $1 AND hash = $2`
	tag, err := s.pool.Exec(ctx, q, kind, hash)
	if err == nil && tag.RowsAffected() == 0 {
		err = fmt.Errorf("a %s of that hash: %w", kind, store.ErrNotFound)
	}
	if err != nil {
		return wrapErr("delete credential", err)
	}
	return nil
}

// ListCredentials returns the user's credentials of that kind in that
// organisation, newest (by CreatedAt) first and by hash among equals,
// expired ones included until DeleteExpiredCredentials removes them; none
// and no error when the user has none.
func (s *Store) ListCredentials(ctx context.Context, orgID, userID, kind string) ([]store.Credential, error) {
	const q = `SELECT ` + credentialColumns + ` FROM credentials
		WHERE org_id = $1 AND user_id = $2 AND kind = $3
		ORDER BY created_at DESC, hash`
	rows, err := s.pool.Query(ctx, q, orgID, userID, kind)
	if err != nil {
		return nil, wrapErr("list credentials", err)
	}
	cs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.Credential, error) {
		return scanCredential(row)
	})
	if err != nil {
		return nil, wrapErr("list credentials", err)
	}
	return cs, nil
}

// DeleteExpiredCredentials removes every credential, in every
// organisation, expired at now (ExpiresAt not zero and not after now) and
// returns how many. One statement: a credential a concurrent
// ConsumeCredential or DeleteCredential removes is counted by one of
// them only.
func (s *Store) DeleteExpiredCredentials(ctx context.Context, now time.Time) (int, error) {
	const q = `DELETE FROM credentials WHERE expires_at <= $1`
	tag, err := s.pool.Exec(ctx, q, instant(now))
	if err != nil {
		return 0, wrapErr("delete expired credentials", err)
	}
	return int(tag.RowsAffected()), nil
}

// scanCredential reads one row of credentialColumns, times in UTC.
func scanCredential(row pgx.Row) (store.Credential, error) {
	var c store.Credential
	var expiresAt *time.Time
	err := row.Scan(&c.Kind, &c.Hash, &c.OrgID, &c.UserID, &c.Label, &c.CSRF,
		&c.CreatedAt, &expiresAt)
	if err != nil {
		return store.Credential{}, err
	}
	c.CreatedAt = utc(c.CreatedAt)
	c.ExpiresAt = fromOptionalTime(expiresAt)
	return c, nil
}
