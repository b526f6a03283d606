package postgres

import (
	"context"
	"time"

	"github.com/quiverhq/quiver/store"
)

// Accounts: organisations and users (credentials are in credentials.go).

// CreateOrg is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) CreateOrg(_ context.Context, o store.Org) error {
	return unsupported("create org")
}

// GetOrg is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) GetOrg(_ context.Context, id string) (store.Org, error) {
	return store.Org{}, unsupported("get org")
}

// CountOrgs is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) CountOrgs(_ context.Context) (int, error) {
	return 0, unsupported("count orgs")
}

// CreateUser is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) CreateUser(_ context.Context, u store.User, creds ...store.Credential) error {
	return unsupported("create user")
}

// GetUser is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) GetUser(_ context.Context, orgID, id string) (store.User, error) {
	return store.User{}, unsupported("get user")
}

// ListUsers is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) ListUsers(_ context.Context, orgID string) ([]store.User, error) {
	return nil, unsupported("list users")
}

// ModifyUser is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) ModifyUser(_ context.Context, orgID, id string, at time.Time, change func(*store.User) error) (store.User, error) {
	return store.User{}, unsupported("modify user")
}

// DisableUser is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) DisableUser(_ context.Context, orgID, id string, at time.Time) error {
	return unsupported("disable user")
}

// EnableUser is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) EnableUser(_ context.Context, orgID, id string, at time.Time) error {
	return unsupported("enable user")
}
