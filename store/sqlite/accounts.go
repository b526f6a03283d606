package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/quiverhq/quiver/store"
)

// userColumns are the columns scanUser reads, in its order.
const userColumns = `org_id, id, display_name, department, timezone, role,
	created_at, updated_at, disabled_at`

// CreateOrg inserts o, or returns an error wrapping store.ErrExists when
// its ID is taken, leaving the stored organisation unchanged. An empty ID
// is an error.
func (s *Store) CreateOrg(ctx context.Context, o store.Org) error {
	if o.ID == "" {
		return errors.New("sqlite: create org: empty id")
	}
	const q = `INSERT INTO orgs (id, name, created_at) VALUES (?, ?, ?)
		ON CONFLICT (id) DO NOTHING`
	res, err := s.writer.ExecContext(ctx, q, o.ID, o.Name, encodeTime(o.CreatedAt))
	if err == nil {
		err = changedOr(res, store.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("sqlite: create org: %w", err)
	}
	return nil
}

// changedOr returns nil when res changed a row, and otherwise none: the
// sentinel of a statement that found its key taken or its row missing.
func changedOr(res sql.Result, none error) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return none
	}
	return nil
}

// GetOrg returns the organisation with that ID, or an error wrapping
// store.ErrNotFound.
func (s *Store) GetOrg(ctx context.Context, id string) (store.Org, error) {
	const q = `SELECT name, created_at FROM orgs WHERE id = ?`
	o := store.Org{ID: id}
	var createdAt string
	err := s.reader.QueryRowContext(ctx, q, id).Scan(&o.Name, &createdAt)
	if errors.Is(err, sql.ErrNoRows) {
		err = store.ErrNotFound
	}
	if err == nil {
		o.CreatedAt, err = decodeTime(createdAt)
	}
	if err != nil {
		return store.Org{}, fmt.Errorf("sqlite: get org: %w", err)
	}
	return o, nil
}

// CountOrgs returns how many organisations exist.
func (s *Store) CountOrgs(ctx context.Context) (int, error) {
	var n int
	if err := s.reader.QueryRowContext(ctx, `SELECT count(*) FROM orgs`).Scan(&n); err != nil {
		return 0, fmt.Errorf("sqlite: count orgs: %w", err)
	}
	return n, nil
}

// CreateUser inserts u, DisabledAt included (a user may be created
// disabled), and creds, in one transaction, or writes nothing and
// returns, wrapped, store.ErrNotFound when u.OrgID is not an
// organisation, then store.ErrExists when u.ID is taken in it or a
// credential's hash is stored for its kind (expired or not), or given
// twice. An empty ID, a role other than store.RoleAdmin and
// store.RoleMember, a credential PutCredential would refuse or that is
// not u's, or a credential for a disabled u, is an error.
func (s *Store) CreateUser(ctx context.Context, u store.User, creds ...store.Credential) error {
	if err := checkNewUser(u, creds); err != nil {
		return fmt.Errorf("sqlite: create user: %w", err)
	}
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		if err := checkCreateUser(ctx, tx, u); err != nil {
			return err
		}
		const q = `INSERT INTO users (` + userColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`
		_, err := tx.ExecContext(ctx, q, u.OrgID, u.ID, u.DisplayName, u.Department,
			u.Timezone, u.Role, encodeTime(u.CreatedAt), encodeTime(u.UpdatedAt),
			encodeOptionalTime(u.DisabledAt))
		if err != nil {
			return err
		}
		for _, c := range creds {
			if err := insertCredential(ctx, tx, c); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: create user: %w", err)
	}
	return nil
}

// checkNewUser refuses what CreateUser must not store, before any
// statement runs.
func checkNewUser(u store.User, creds []store.Credential) error {
	if u.ID == "" {
		return errors.New("empty id")
	}
	if err := checkRole(u.Role); err != nil {
		return err
	}
	if len(creds) > 0 && !u.DisabledAt.IsZero() {
		return errors.New("credentials for a disabled user")
	}
	for _, c := range creds {
		if err := checkCredential(c); err != nil {
			return err
		}
		if c.OrgID != u.OrgID || c.UserID != u.ID {
			return fmt.Errorf("a credential of user %q in %q, not of the new user", c.UserID, c.OrgID)
		}
	}
	return nil
}

// checkRole refuses a role other than the store's two.
func checkRole(role string) error {
	if role != store.RoleAdmin && role != store.RoleMember {
		return fmt.Errorf("role %q, want %s or %s", role, store.RoleAdmin, store.RoleMember)
	}
	return nil
}

// checkCreateUser returns the sentinel error of the first rule u would
// break, or nil.
func checkCreateUser(ctx context.Context, tx *sql.Tx, u store.User) error {
	const q = `SELECT
			EXISTS (SELECT 1 FROM orgs WHERE id = ?1),
			EXISTS (SELECT 1 FROM users WHERE org_id = ?1 AND id = ?2)`
	var org, taken bool
	if err := tx.QueryRowContext(ctx, q, u.OrgID, u.ID).Scan(&org, &taken); err != nil {
		return err
	}
	if !org {
		return fmt.Errorf("organisation %q: %w", u.OrgID, store.ErrNotFound)
	}
	if taken {
		return store.ErrExists
	}
	return nil
}

// GetUser returns the user with that ID in that organisation, or an error
// wrapping store.ErrNotFound when there is none there.
func (s *Store) GetUser(ctx context.Context, orgID, id string) (store.User, error) {
	const q = `SELECT ` + userColumns + ` FROM users WHERE org_id = ? AND id = ?`
	u, err := scanUser(s.reader.QueryRowContext(ctx, q, orgID, id))
	if errors.Is(err, sql.ErrNoRows) {
		err = store.ErrNotFound
	}
	if err != nil {
		return store.User{}, fmt.Errorf("sqlite: get user: %w", err)
	}
	return u, nil
}

// ListUsers returns the organisation's users ordered by ID, byte by byte;
// none and no error for an organisation without users, or none at all.
func (s *Store) ListUsers(ctx context.Context, orgID string) ([]store.User, error) {
	us, err := s.listUsers(ctx, orgID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list users: %w", err)
	}
	return us, nil
}

// listUsers reads the organisation's users on the readers.
func (s *Store) listUsers(ctx context.Context, orgID string) ([]store.User, error) {
	const q = `SELECT ` + userColumns + ` FROM users WHERE org_id = ? ORDER BY id`
	rows, err := s.reader.QueryContext(ctx, q, orgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var us []store.User
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, err
		}
		us = append(us, u)
	}
	return us, rows.Err()
}

// ModifyUser reads the user id in orgID, calls change with it, and
// stores the DisplayName, Department, Timezone and Role change leaves,
// with UpdatedAt = at, in one transaction holding the write lock from
// the read to the commit, so concurrent writers (here or in another
// process) wait: change always edits the latest stored user. Every other
// field change sets is ignored. It returns the user as stored
// afterwards.
//
// change's error is returned as is (not wrapped), writing nothing. An
// unknown user gives an error wrapping store.ErrNotFound, a role other
// than store.RoleAdmin and store.RoleMember an error, and demoting the
// organisation's last enabled admin store.ErrLastAdmin; each writes
// nothing. When change leaves the four fields as they were nothing is
// written and the stored user is returned, UpdatedAt unchanged. change
// must not call the store: the transaction holds its only writer.
func (s *Store) ModifyUser(ctx context.Context, orgID, id string, at time.Time, change func(*store.User) error) (store.User, error) {
	var u store.User
	var changeErr error
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		before, err := readUser(ctx, tx, orgID, id)
		if err != nil {
			return err
		}
		edited := before
		if changeErr = change(&edited); changeErr != nil {
			return changeErr
		}
		u, err = modifyUser(ctx, tx, before, edited, at)
		return err
	})
	if changeErr != nil {
		return store.User{}, changeErr
	}
	if err != nil {
		return store.User{}, fmt.Errorf("sqlite: modify user: %w", err)
	}
	return u, nil
}

// readUser reads the user id in orgID in tx, or returns store.ErrNotFound.
func readUser(ctx context.Context, tx *sql.Tx, orgID, id string) (store.User, error) {
	const q = `SELECT ` + userColumns + ` FROM users WHERE org_id = ? AND id = ?`
	u, err := scanUser(tx.QueryRowContext(ctx, q, orgID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return store.User{}, store.ErrNotFound
	}
	return u, err
}

// modifyUser writes ModifyUser's change of before into edited's four
// editable fields, checking the role and the last-admin rule, and
// returns the user as stored.
func modifyUser(ctx context.Context, tx *sql.Tx, before, edited store.User, at time.Time) (store.User, error) {
	u := before
	u.DisplayName, u.Department, u.Timezone, u.Role = edited.DisplayName, edited.Department, edited.Timezone, edited.Role
	if u == before {
		return before, nil
	}
	if err := checkRole(u.Role); err != nil {
		return store.User{}, err
	}
	if u.Role != store.RoleAdmin {
		st, err := readAdminState(ctx, tx, u.OrgID, u.ID)
		if err != nil {
			return store.User{}, err
		}
		if st.lastAdmin() {
			return store.User{}, fmt.Errorf("demote %q: %w", u.ID, store.ErrLastAdmin)
		}
	}
	const q = `UPDATE users SET display_name = ?, department = ?, timezone = ?,
			role = ?, updated_at = ?
		WHERE org_id = ? AND id = ?`
	if _, err := tx.ExecContext(ctx, q, u.DisplayName, u.Department, u.Timezone,
		u.Role, encodeTime(at), u.OrgID, u.ID); err != nil {
		return store.User{}, err
	}
	// Read back: the caller gets UpdatedAt as GetUser will (UTC).
	return readUser(ctx, tx, u.OrgID, u.ID)
}

// DisableUser sets the DisabledAt of the user id in orgID to at and
// deletes every credential the user holds, of every kind, expired or not,
// in one transaction. An unknown user gives an error wrapping
// store.ErrNotFound, the organisation's last enabled admin
// store.ErrLastAdmin (checked in the transaction), and a zero at an
// error; each writes nothing. A user disabled already is left as is,
// DisabledAt included, and no error. UpdatedAt is left alone: it stamps
// ModifyUser's edits.
func (s *Store) DisableUser(ctx context.Context, orgID, id string, at time.Time) error {
	if at.IsZero() {
		// Stored as NULL, it would leave the user active.
		return errors.New("sqlite: disable user: zero time")
	}
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		st, err := readAdminState(ctx, tx, orgID, id)
		if err != nil || st.disabled {
			return err
		}
		if st.lastAdmin() {
			return fmt.Errorf("disable %q: %w", id, store.ErrLastAdmin)
		}
		return disableUser(ctx, tx, orgID, id, at)
	})
	if err != nil {
		return fmt.Errorf("sqlite: disable user: %w", err)
	}
	return nil
}

// EnableUser clears the DisabledAt of the user id in orgID and sets its
// UpdatedAt to at, in one statement. An unknown user gives an error
// wrapping store.ErrNotFound. A user enabled already is left as is,
// UpdatedAt included, and no error. Credentials are not restored:
// DisableUser deleted them.
func (s *Store) EnableUser(ctx context.Context, orgID, id string, at time.Time) error {
	// The CASE reads the row as it was: an enabled user keeps UpdatedAt.
	const q = `UPDATE users SET disabled_at = NULL,
			updated_at = CASE WHEN disabled_at IS NULL THEN updated_at ELSE ? END
		WHERE org_id = ? AND id = ?`
	res, err := s.writer.ExecContext(ctx, q, encodeTime(at), orgID, id)
	if err == nil {
		// SQLite counts a matched row as changed even when its values
		// stay the same, so only a missing user changes none.
		err = changedOr(res, store.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("sqlite: enable user: %w", err)
	}
	return nil
}

// disableUser writes DisableUser's changes.
func disableUser(ctx context.Context, tx *sql.Tx, orgID, id string, at time.Time) error {
	const disable = `UPDATE users SET disabled_at = ? WHERE org_id = ? AND id = ?`
	if _, err := tx.ExecContext(ctx, disable, encodeTime(at), orgID, id); err != nil {
		return err
	}
	const revoke = `DELETE FROM credentials WHERE org_id = ? AND user_id = ?`
	_, err := tx.ExecContext(ctx, revoke, orgID, id)
	return err
}

// adminState is what the last-admin rule needs to know of a user.
type adminState struct {
	admin    bool // holds store.RoleAdmin, enabled or not
	disabled bool
	// others counts the organisation's other enabled admins.
	others int
}

// lastAdmin reports whether the user is the organisation's only enabled
// admin.
func (st adminState) lastAdmin() bool {
	return st.admin && !st.disabled && st.others == 0
}

// readAdminState reads the user id in orgID, or returns store.ErrNotFound.
func readAdminState(ctx context.Context, tx *sql.Tx, orgID, id string) (adminState, error) {
	const q = `SELECT role = ?3, disabled_at IS NOT NULL,
			(SELECT count(*) FROM users
				WHERE org_id = ?1 AND id <> ?2 AND role = ?3 AND disabled_at IS NULL)
		FROM users WHERE org_id = ?1 AND id = ?2`
	var st adminState
	err := tx.QueryRowContext(ctx, q, orgID, id, store.RoleAdmin).Scan(&st.admin, &st.disabled, &st.others)
	if errors.Is(err, sql.ErrNoRows) {
		return adminState{}, store.ErrNotFound
	}
	return st, err
}

// scanUser reads one row of userColumns.
func scanUser(row scanner) (store.User, error) {
	var u store.User
	var createdAt, updatedAt string
	var disabledAt sql.NullString
	err := row.Scan(&u.OrgID, &u.ID, &u.DisplayName, &u.Department, &u.Timezone,
		&u.Role, &createdAt, &updatedAt, &disabledAt)
	if err != nil {
		return store.User{}, err
	}
	if u.CreatedAt, err = decodeTime(createdAt); err != nil {
		return store.User{}, err
	}
	if u.UpdatedAt, err = decodeTime(updatedAt); err != nil {
		return store.User{}, err
	}
	if u.DisabledAt, err = decodeOptionalTime(disabledAt); err != nil {
		return store.User{}, err
	}
	return u, nil
}
