// Package accounts is who may use Quiver and how they prove it: users of
// an organisation, the credentials that authenticate them (API tokens,
// one-time login links, browser sessions), and the first start that makes
// an installation's first admin.
//
// Only a credential's SHA-256 hash is stored ([HashSecret]); its secret is
// shown once, to whoever asked for it. Every operation is a method of
// [Service]; transports (the HTTP API, the CLI) map its error values to
// their own wire.
package accounts

import (
	"errors"
	"time"

	"github.com/quiverhq/quiver/ids"
	"github.com/quiverhq/quiver/internal/clock"
	"github.com/quiverhq/quiver/store"
)

// Lifetimes of credentials.
const (
	// LoginLinkTTL is how long a login link works (once).
	LoginLinkTTL = 24 * time.Hour
	// DefaultSessionTTL is how long a browser session lasts when
	// Service.SessionTTL is zero.
	DefaultSessionTTL = 30 * 24 * time.Hour
)

// Service runs the accounts' operations over its repositories. Store is
// required; every other zero value means the default its field names.
// Its methods are safe for concurrent use when its repositories are.
type Service struct {
	// Store holds organisations, users and their credentials.
	Store store.Accounts
	// Agents receives the example agent of a first start (Bootstrap);
	// nil stores none.
	Agents store.Agents
	// Now is the clock stamping and expiring credentials and users; nil
	// means clock.Now. Stored times are its reading in UTC.
	Now func() time.Time
	// Secrets mints credential secrets (and sessions' CSRF tokens); nil
	// means NewSecret. What it returns must be unguessable.
	Secrets func() string
	// IDs makes a new user's id from its prefix ("usr_"); nil means
	// ids.Random.
	IDs func(prefix string) string
	// SessionTTL is how long a browser session lasts; 0 means
	// DefaultSessionTTL.
	SessionTTL time.Duration
}

// Errors of the operations, matched with errors.Is. A store failure is
// returned wrapped instead, prefixed with the operation.
var (
	// ErrInvalidLink: the login link is unknown, already used or expired,
	// or its user is disabled. Which one is not said.
	ErrInvalidLink = errors.New("accounts: invalid, used or expired login link")
	// ErrSignedInAsOther: the browser's live session is another user's
	// than the login link's; the link was left unused.
	ErrSignedInAsOther = errors.New("accounts: signed in as another user")
	// ErrInvalidCredential: no unexpired credential of that kind has
	// that secret, or its user no longer exists.
	ErrInvalidCredential = errors.New("accounts: invalid or expired credential")
	// ErrUserDisabled: the user is disabled; they hold no credentials and
	// get none until enabled.
	ErrUserDisabled = errors.New("accounts: user disabled")
	// ErrNoUser: no user with that id in the organisation (one of another
	// organisation is as absent).
	ErrNoUser = errors.New("accounts: no such user")
	// ErrNoToken: the user holds no API token with that id.
	ErrNoToken = errors.New("accounts: no such token")
	// ErrLastAdmin: the change would leave the organisation without an
	// enabled admin.
	ErrLastAdmin = errors.New("accounts: the organisation's last admin")
	// ErrDisableSelf: an admin tried to disable themselves.
	ErrDisableSelf = errors.New("accounts: cannot disable yourself")
)

// InvalidError is bad input: nothing was written. Error is the message
// for people, naming the field.
type InvalidError struct {
	// Field is the input's name: display_name, department, timezone,
	// role, label or expires_in_days.
	Field string
	// Msg says what is wrong, the field named.
	Msg string
}

// Error returns Msg.
func (e *InvalidError) Error() string { return e.Msg }

func invalid(field, msg string) *InvalidError { return &InvalidError{Field: field, Msg: msg} }

// now is the clock's reading in UTC.
func (s *Service) now() time.Time {
	if s.Now == nil {
		return clock.Now().UTC()
	}
	return s.Now().UTC()
}

func (s *Service) secret() string {
	if s.Secrets == nil {
		return NewSecret()
	}
	return s.Secrets()
}

func (s *Service) newID(prefix string) string {
	if s.IDs == nil {
		return ids.Random{}.New(prefix)
	}
	return s.IDs(prefix)
}

func (s *Service) sessionTTL() time.Duration {
	if s.SessionTTL <= 0 {
		return DefaultSessionTTL
	}
	return s.SessionTTL
}
