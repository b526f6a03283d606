package store

import (
	"context"
	"errors"
	"time"
)

// Roles a user may hold in an organisation.
const (
	RoleAdmin  = "admin"
	RoleMember = "member"
)

// Credential kinds.
const (
	// CredAPIToken is a bearer token for the HTTP API.
	CredAPIToken = "api_token"
	// CredSession is a web UI session (cookie), with its CSRF token.
	CredSession = "session"
	// CredLoginLink is a one-time login link, consumed on use.
	CredLoginLink = "login_link"
)

// ErrLastAdmin reports a change that would leave an organisation without
// an enabled admin.
var ErrLastAdmin = errors.New("the organisation's last admin")

// Org is an organisation (a community): every other record is scoped to one.
type Org struct {
	ID        string
	Name      string
	CreatedAt time.Time
}

// User is a person in one organisation.
type User struct {
	ID          string
	OrgID       string
	DisplayName string
	Department  string
	// Timezone is the user's IANA zone; "" means none set.
	Timezone string
	// Role is RoleAdmin or RoleMember.
	Role      string
	CreatedAt time.Time
	UpdatedAt time.Time
	// DisabledAt is when an admin disabled the user; zero means active.
	// A disabled user holds no credentials and cannot get new ones.
	DisabledAt time.Time
}

// Credential is a secret that authenticates a user: only its SHA-256 hash
// is stored, never the secret.
type Credential struct {
	// Hash is the lower-case hex SHA-256 of the secret; unique per Kind.
	Hash   string
	Kind   string
	OrgID  string
	UserID string
	// Label names an API token for people ("ci", "laptop"); empty otherwise.
	Label string
	// CSRF is a session's anti-forgery token (stored as is: it is not a
	// credential on its own); empty for other kinds.
	CSRF      string
	CreatedAt time.Time
	// ExpiresAt is when it stops working; zero means never.
	ExpiresAt time.Time
}

// Accounts stores organisations, users and their credentials.
type Accounts interface {
	// CreateOrg inserts an organisation; an ID in use gives ErrExists.
	CreateOrg(ctx context.Context, o Org) error
	// GetOrg returns an organisation or ErrNotFound.
	GetOrg(ctx context.Context, id string) (Org, error)
	// CountOrgs returns how many organisations exist (0 on first start).
	CountOrgs(ctx context.Context) (int, error)
	// CreateUser inserts a user and creds, the user's first credentials,
	// in one transaction: an ID in use in the organisation gives
	// ErrExists, a missing organisation ErrNotFound, a credential hash in
	// use for its kind ErrExists, each writing nothing (neither the user
	// nor any credential). Role must be RoleAdmin or RoleMember; each
	// credential must be for u (its OrgID and UserID) and u enabled when
	// there is any.
	CreateUser(ctx context.Context, u User, creds ...Credential) error
	// GetUser returns the user with that ID in that organisation, or
	// ErrNotFound.
	GetUser(ctx context.Context, orgID, id string) (User, error)
	// ListUsers returns the organisation's users ordered by ID.
	ListUsers(ctx context.Context, orgID string) ([]User, error)
	// ModifyUser reads the user with that ID in that organisation, calls
	// change with it, and stores the DisplayName, Department, Timezone and
	// Role change leaves, stamping UpdatedAt with at, all in one
	// transaction that concurrent writers wait for: change always edits
	// the user as stored, so no edit is lost. Other fields change sets are
	// ignored. It returns the user as stored afterwards. change's error is
	// returned as is, writing nothing; an unknown user gives ErrNotFound,
	// a role other than RoleAdmin and RoleMember an error, and demoting
	// the organisation's last enabled admin ErrLastAdmin, each writing
	// nothing. When change leaves the four fields as they were nothing is
	// written, UpdatedAt included. change runs inside the transaction: it
	// must be quick and must not call the store.
	ModifyUser(ctx context.Context, orgID, id string, at time.Time, change func(*User) error) (User, error)
	// DisableUser marks the user disabled at `at` and deletes every
	// credential they hold, in one transaction. An unknown user gives
	// ErrNotFound; the organisation's last enabled admin ErrLastAdmin,
	// writing nothing. Disabling a disabled user changes nothing.
	DisableUser(ctx context.Context, orgID, id string, at time.Time) error
	// EnableUser clears the user's DisabledAt and stamps UpdatedAt with
	// `at`, in one write. An unknown user gives ErrNotFound; enabling an
	// enabled user changes nothing, UpdatedAt included, and is no error.
	// The credentials DisableUser deleted stay deleted: the user signs in
	// again with a new login link.
	EnableUser(ctx context.Context, orgID, id string, at time.Time) error
	// PutCredential stores a credential; a Hash in use for that Kind gives
	// ErrExists, a user who is unknown or disabled ErrNotFound (checked in
	// the write's transaction).
	PutCredential(ctx context.Context, c Credential) error
	// LookupCredential returns the credential of that kind and hash that
	// has not expired at now, or ErrNotFound.
	LookupCredential(ctx context.Context, kind, hash string, now time.Time) (Credential, error)
	// ConsumeCredential returns the unexpired credential and deletes it,
	// atomically: of two concurrent calls exactly one succeeds, the other
	// gets ErrNotFound (one-time login links).
	ConsumeCredential(ctx context.Context, kind, hash string, now time.Time) (Credential, error)
	// DeleteCredential removes a credential; an unknown one gives
	// ErrNotFound.
	DeleteCredential(ctx context.Context, kind, hash string) error
	// ListCredentials returns a user's credentials of one kind, newest
	// first (hashes included; they are not secrets).
	ListCredentials(ctx context.Context, orgID, userID, kind string) ([]Credential, error)
	// DeleteExpiredCredentials removes every credential expired at now and
	// returns how many.
	DeleteExpiredCredentials(ctx context.Context, now time.Time) (int, error)
}
