package postgres

import (
	"context"
	"time"

	"github.com/quiverhq/quiver/store"
)

// Accounts: the credentials that authenticate users.

// PutCredential is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) PutCredential(_ context.Context, c store.Credential) error {
	return unsupported("put credential")
}

// LookupCredential is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) LookupCredential(_ context.Context, kind, hash string, now time.Time) (store.Credential, error) {
	return store.Credential{}, unsupported("lookup credential")
}

// ConsumeCredential is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) ConsumeCredential(_ context.Context, kind, hash string, now time.Time) (store.Credential, error) {
	return store.Credential{}, unsupported("consume credential")
}

// DeleteCredential is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) DeleteCredential(_ context.Context, kind, hash string) error {
	return unsupported("delete credential")
}

// ListCredentials is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) ListCredentials(_ context.Context, orgID, userID, kind string) ([]store.Credential, error) {
	return nil, unsupported("list credentials")
}

// DeleteExpiredCredentials is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) DeleteExpiredCredentials(_ context.Context, now time.Time) (int, error) {
	return 0, unsupported("delete expired credentials")
}
