package accounts

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/quiverhq/quiver/store"
)

// NewSecret returns a fresh credential secret: 32 bytes from crypto/rand,
// base64url without padding. Only its HashSecret is ever stored.
func NewSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b)
}

// HashSecret is the stored form of a secret: lower-case hex SHA-256.
func HashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// Issue stores c under the hash of a fresh secret and returns the
// secret, which is stored nowhere: show it once. The caller sets every
// other field (Kind, OrgID, UserID, Label, CSRF, CreatedAt, ExpiresAt). A
// user who is unknown or disabled gives ErrUserDisabled, writing nothing.
func (s *Service) Issue(ctx context.Context, c store.Credential) (string, error) {
	secret := s.secret()
	c.Hash = HashSecret(secret)
	err := s.Store.PutCredential(ctx, c)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return "", ErrUserDisabled
	case err != nil:
		return "", fmt.Errorf("store credential: %w", err)
	}
	return secret, nil
}

// Identity is an authenticated caller: the credential they proved and
// their user record.
type Identity struct {
	// Credential is the stored credential (Hash, Kind, CSRF, ...).
	Credential store.Credential
	User       store.User
}

// Authenticate finds the unexpired credential of kind with that secret
// and its user. Unknown or expired gives ErrInvalidCredential; a disabled
// user gives ErrUserDisabled even when a credential of theirs survived:
// disabling deletes them, but the user record is what decides.
func (s *Service) Authenticate(ctx context.Context, kind, secret string) (Identity, error) {
	hash := HashSecret(secret)
	cred, err := s.Store.LookupCredential(ctx, kind, hash, s.now())
	var u store.User
	if err == nil {
		cred.Kind, cred.Hash = kind, hash
		u, err = s.Store.GetUser(ctx, cred.OrgID, cred.UserID)
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		return Identity{}, ErrInvalidCredential
	case err != nil:
		return Identity{}, fmt.Errorf("authenticate: %w", err)
	case !u.DisabledAt.IsZero():
		return Identity{}, ErrUserDisabled
	}
	return Identity{Credential: cred, User: u}, nil
}

// DeleteExpired deletes every credential expired now (login links nobody
// used, ended sessions, expired API tokens) and returns how many. Lookups
// already ignore expired credentials; this only keeps the store small.
func (s *Service) DeleteExpired(ctx context.Context) (int, error) {
	n, err := s.Store.DeleteExpiredCredentials(ctx, s.now())
	if err != nil {
		return 0, fmt.Errorf("delete expired credentials: %w", err)
	}
	return n, nil
}
