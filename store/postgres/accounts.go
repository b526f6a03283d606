package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quiverhq/quiver/store"
)

// Accounts: organisations and users (credentials are in credentials.go).
//
// Locking. Every rule here is one of two kinds:
//
//   - A key: an organisation's ID, a user's ID in it, a credential's hash
//     for its kind. The key's unique index referees concurrent writers
//     (INSERT ... ON CONFLICT DO NOTHING answers the loser at once, or
//     after the winner commits), so READ COMMITTED is enough.
//   - A read-then-write rule: ModifyUser edits the user as stored, and the
//     last-admin rule counts the organisation's enabled admins before a
//     demotion or a disable. These lock what they read, at READ COMMITTED:
//     the user's row (FOR NO KEY UPDATE) from the read to the commit, and,
//     for a write that removes an enabled admin, the organisation's row
//     (FOR NO KEY UPDATE, see lockAdmins) before counting. Locks are taken
//     in one order, the user's row first and then the organisation's, so
//     two of these transactions never wait for each other in a cycle.

// userColumns are the columns scanUser reads, in its order.
const userColumns = `org_id, id, display_name, department, timezone, role,
	created_at, updated_at, disabled_at`

// CreateOrg inserts o, or returns an error wrapping store.ErrExists when
// its ID is taken, leaving the stored organisation unchanged. An empty ID
// is an error. One statement: the primary key decides between concurrent
// creations of one ID.
func (s *Store) CreateOrg(ctx context.Context, o store.Org) error {
	if o.ID == "" {
		return errors.New("postgres: create org: empty id")
	}
	const q = `INSERT INTO orgs (id, name, created_at) VALUES ($1, $2, $3)
		ON CONFLICT (id) DO NOTHING`
	tag, err := s.pool.Exec(ctx, q, o.ID, o.Name, o.CreatedAt)
	if err == nil && tag.RowsAffected() == 0 {
		err = store.ErrExists
	}
	if err != nil {
		return wrapErr("create org", err)
	}
	return nil
}

// GetOrg returns the organisation with that ID, or an error wrapping
// store.ErrNotFound.
func (s *Store) GetOrg(ctx context.Context, id string) (store.Org, error) {
	const q = `SELECT name, created_at FROM orgs WHERE id = $1`
	o := store.Org{ID: id}
	if err := s.pool.QueryRow(ctx, q, id).Scan(&o.Name, &o.CreatedAt); err != nil {
		return store.Org{}, wrapErr("get org", err)
	}
	o.CreatedAt = utc(o.CreatedAt)
	return o, nil
}

// CountOrgs returns how many organisations exist.
func (s *Store) CountOrgs(ctx context.Context) (int, error) {
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM orgs`).Scan(&n); err != nil {
		return 0, wrapErr("count orgs", err)
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
// not u's, or a credential for a disabled u, is an error, refused before
// any statement runs.
func (s *Store) CreateUser(ctx context.Context, u store.User, creds ...store.Credential) error {
	if err := checkNewUser(u, creds); err != nil {
		return fmt.Errorf("postgres: create user: %w", err)
	}
	// READ COMMITTED: every rule is a key the inserts check themselves.
	// The foreign key finds the organisation (and share-locks its row to
	// the commit), the primary keys the user's ID and each hash; a
	// concurrent creation of the same key waits for this one and then
	// finds it taken.
	err := s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		if err := insertUser(ctx, tx, u); err != nil {
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
		return wrapErr("create user", err)
	}
	return nil
}

// insertUser inserts u, checked already, or returns store.ErrNotFound
// when its organisation does not exist, store.ErrExists when its ID is
// taken there.
func insertUser(ctx context.Context, tx pgx.Tx, u store.User) error {
	const q = `INSERT INTO users (` + userColumns + `)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (org_id, id) DO NOTHING`
	tag, err := tx.Exec(ctx, q, u.OrgID, u.ID, u.DisplayName, u.Department, u.Timezone,
		u.Role, u.CreatedAt, u.UpdatedAt, optionalTime(u.DisabledAt))
	switch {
	case isForeignKeyViolation(err, "users_org_id_fkey"):
		return fmt.Errorf("organisation %q: %w", u.OrgID, store.ErrNotFound)
	case err != nil:
		return err
	case tag.RowsAffected() == 0:
		return fmt.Errorf("user %q: %w", u.ID, store.ErrExists)
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

// GetUser returns the user with that ID in that organisation, or an error
// wrapping store.ErrNotFound when there is none there.
func (s *Store) GetUser(ctx context.Context, orgID, id string) (store.User, error) {
	const q = `SELECT ` + userColumns + ` FROM users WHERE org_id = $1 AND id = $2`
	u, err := scanUser(s.pool.QueryRow(ctx, q, orgID, id))
	if err != nil {
		return store.User{}, wrapErr("get user", err)
	}
	return u, nil
}

// ListUsers returns the organisation's users ordered by ID, byte by byte;
// none and no error for an organisation without users, or none at all.
func (s *Store) ListUsers(ctx context.Context, orgID string) ([]store.User, error) {
	const q = `SELECT ` + userColumns + ` FROM users WHERE org_id = $1 ORDER BY id`
	rows, err := s.pool.Query(ctx, q, orgID)
	if err != nil {
		return nil, wrapErr("list users", err)
	}
	us, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.User, error) {
		return scanUser(row)
	})
	if err != nil {
		return nil, wrapErr("list users", err)
	}
	return us, nil
}

// ModifyUser reads the user id in orgID, calls change with it, and
// stores the DisplayName, Department, Timezone and Role change leaves,
// with UpdatedAt = at, in one transaction that holds the user's row lock
// from the read to the commit, so concurrent writers (in this process or
// another replica) wait: change always edits the latest stored user.
// Every other field change sets is ignored. It returns the user as stored
// afterwards.
//
// change's error is returned as is (not wrapped), writing nothing. An
// unknown user gives an error wrapping store.ErrNotFound without calling
// change, a role other than store.RoleAdmin and store.RoleMember an
// error, and demoting the organisation's last enabled admin
// store.ErrLastAdmin; each writes nothing. When change leaves the four
// fields as they were nothing is written and the stored user is
// returned, UpdatedAt unchanged.
//
// change runs inside the transaction: it must be quick and must not call
// the store. Should PostgreSQL abort the transaction for a deadlock or a
// serialization failure (this package's locks are ordered so that its own
// writers cause neither), change is called again with the user as stored
// then, so it must not count its calls.
func (s *Store) ModifyUser(ctx context.Context, orgID, id string, at time.Time, change func(*store.User) error) (store.User, error) {
	var u store.User
	var changeErr error
	// READ COMMITTED with row locks: lockUser holds the user's row, and a
	// demotion of an enabled admin the organisation's (lockAdmins).
	err := s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		before, err := lockUser(ctx, tx, orgID, id)
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
		return store.User{}, wrapErr("modify user", err)
	}
	return u, nil
}

// lockUser reads the user id in orgID in tx and locks its row until tx
// ends (FOR NO KEY UPDATE: what an UPDATE of the row takes, so every
// writer of the user queues on it, while nothing waits that only needs
// the key to exist), or returns store.ErrNotFound.
func lockUser(ctx context.Context, tx pgx.Tx, orgID, id string) (store.User, error) {
	const q = `SELECT ` + userColumns + ` FROM users WHERE org_id = $1 AND id = $2
		FOR NO KEY UPDATE`
	u, err := scanUser(tx.QueryRow(ctx, q, orgID, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return store.User{}, fmt.Errorf("user %q: %w", id, store.ErrNotFound)
	}
	return u, err
}

// modifyUser writes ModifyUser's change of before, locked by lockUser,
// into edited's four editable fields, checking the role and the
// last-admin rule, and returns the user as stored.
func modifyUser(ctx context.Context, tx pgx.Tx, before, edited store.User, at time.Time) (store.User, error) {
	u := before
	u.DisplayName, u.Department, u.Timezone, u.Role = edited.DisplayName, edited.Department, edited.Timezone, edited.Role
	if u == before {
		return before, nil
	}
	if err := checkRole(u.Role); err != nil {
		return store.User{}, err
	}
	if enabledAdmin(before) && u.Role != store.RoleAdmin {
		if err := checkNotLastAdmin(ctx, tx, u.OrgID, u.ID); err != nil {
			return store.User{}, fmt.Errorf("demote %q: %w", u.ID, err)
		}
	}
	const q = `UPDATE users SET display_name = $1, department = $2, timezone = $3,
			role = $4, updated_at = $5
		WHERE org_id = $6 AND id = $7
		RETURNING ` + userColumns
	return scanUser(tx.QueryRow(ctx, q, u.DisplayName, u.Department, u.Timezone,
		u.Role, at, u.OrgID, u.ID))
}

// enabledAdmin reports whether u counts for the last-admin rule.
func enabledAdmin(u store.User) bool {
	return u.Role == store.RoleAdmin && u.DisabledAt.IsZero()
}

// checkNotLastAdmin returns store.ErrLastAdmin when the user id is the
// only enabled admin of orgID, the user's row being locked already. It
// first locks the organisation's admins (lockAdmins), then counts them
// in a statement of its own: at READ COMMITTED each statement reads a
// snapshot taken when it starts, so the count, taken once the lock is
// held, sees every removal that committed before. (A single statement
// locking the organisation and counting in a subquery would count from
// a snapshot taken before it waited.)
func checkNotLastAdmin(ctx context.Context, tx pgx.Tx, orgID, id string) error {
	if err := lockAdmins(ctx, tx, orgID); err != nil {
		return err
	}
	const q = `SELECT count(*) FROM users
		WHERE org_id = $1 AND id <> $2 AND role = $3 AND disabled_at IS NULL`
	var others int
	if err := tx.QueryRow(ctx, q, orgID, id, store.RoleAdmin).Scan(&others); err != nil {
		return err
	}
	if others == 0 {
		return store.ErrLastAdmin
	}
	return nil
}

// lockAdmins locks the organisation's set of enabled admins until tx
// ends, for a write that removes one of them: it locks the organisation's
// row FOR NO KEY UPDATE, the lock every such write (a demotion in
// ModifyUser, DisableUser of an enabled admin) takes before counting, so
// that in one organisation they run one at a time, on every replica.
// Locking the admins' rows themselves would not do: each remover holds
// its own user's row already, so two of them would wait for each other.
// Writes that add an admin (a promotion, EnableUser, CreateUser) take no
// such lock: running beside a count, they can only make it lower than it
// is by the time of the commit, never leave the organisation without an
// admin. FOR NO KEY UPDATE does not conflict with the FOR KEY SHARE lock
// that foreign keys to orgs take, so inserts of users and settings do not
// wait for it.
func lockAdmins(ctx context.Context, tx pgx.Tx, orgID string) error {
	const q = `SELECT id FROM orgs WHERE id = $1 FOR NO KEY UPDATE`
	var id string
	return tx.QueryRow(ctx, q, orgID).Scan(&id)
}

// DisableUser sets the DisabledAt of the user id in orgID to at and
// deletes every credential the user holds, of every kind, expired or not,
// in one transaction. An unknown user gives an error wrapping
// store.ErrNotFound, the organisation's last enabled admin
// store.ErrLastAdmin (checked in the transaction, under the locks that
// make it hold against concurrent removals), and a zero at an error; each
// writes nothing. A user disabled already is left as is, DisabledAt
// included, and no error. UpdatedAt is left alone: it stamps ModifyUser's
// edits.
//
// A credential PutCredential stores concurrently is deleted too, or
// refused: PutCredential share-locks the user's row, which DisableUser
// locks to update it.
func (s *Store) DisableUser(ctx context.Context, orgID, id string, at time.Time) error {
	if at.IsZero() {
		// Stored as NULL, it would leave the user active.
		return errors.New("postgres: disable user: zero time")
	}
	// READ COMMITTED with row locks: the user's row, then, for an enabled
	// admin, the organisation's (lockAdmins). The credentials are deleted
	// by a statement that starts once the user's row is held, so it sees
	// every credential a PutCredential holding the row committed.
	err := s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		u, err := lockUser(ctx, tx, orgID, id)
		if err != nil || !u.DisabledAt.IsZero() {
			return err
		}
		if enabledAdmin(u) {
			if err := checkNotLastAdmin(ctx, tx, orgID, id); err != nil {
				return fmt.Errorf("disable %q: %w", id, err)
			}
		}
		return disableUser(ctx, tx, orgID, id, at)
	})
	if err != nil {
		return wrapErr("disable user", err)
	}
	return nil
}

// disableUser writes DisableUser's changes.
func disableUser(ctx context.Context, tx pgx.Tx, orgID, id string, at time.Time) error {
	const disable = `UPDATE users SET disabled_at = $1 WHERE org_id = $2 AND id = $3`
	if _, err := tx.Exec(ctx, disable, at, orgID, id); err != nil {
		return err
	}
	const revoke = `DELETE FROM credentials WHERE org_id = $1 AND user_id = $2`
	_, err := tx.Exec(ctx, revoke, orgID, id)
	return err
}

// EnableUser clears the DisabledAt of the user id in orgID and sets its
// UpdatedAt to at, in one statement. An unknown user gives an error
// wrapping store.ErrNotFound. A user enabled already is left as is,
// UpdatedAt included, and no error. Credentials are not restored:
// DisableUser deleted them.
func (s *Store) EnableUser(ctx context.Context, orgID, id string, at time.Time) error {
	// One statement, on the user's row lock: the CASE reads the row as it
	// is once the lock is held (READ COMMITTED re-reads a row updated
	// meanwhile), so an enabled user keeps UpdatedAt. It matches, and
	// counts, an enabled user too: no count is a missing user.
	const q = `UPDATE users SET disabled_at = NULL,
			updated_at = CASE WHEN disabled_at IS NULL THEN updated_at ELSE $1 END
		WHERE org_id = $2 AND id = $3`
	tag, err := s.pool.Exec(ctx, q, at, orgID, id)
	if err == nil && tag.RowsAffected() == 0 {
		err = fmt.Errorf("user %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return wrapErr("enable user", err)
	}
	return nil
}

// scanUser reads one row of userColumns, times in UTC.
func scanUser(row pgx.Row) (store.User, error) {
	var u store.User
	var disabledAt *time.Time
	err := row.Scan(&u.OrgID, &u.ID, &u.DisplayName, &u.Department, &u.Timezone,
		&u.Role, &u.CreatedAt, &u.UpdatedAt, &disabledAt)
	if err != nil {
		return store.User{}, err
	}
	u.CreatedAt, u.UpdatedAt = utc(u.CreatedAt), utc(u.UpdatedAt)
	u.DisabledAt = fromOptionalTime(disabledAt)
	return u, nil
}
