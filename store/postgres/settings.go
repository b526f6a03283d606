package postgres

import (
	"context"

	"github.com/quiverhq/quiver/store"
)

// GetOrgSettings is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) GetOrgSettings(_ context.Context, orgID string) (store.OrgSettings, error) {
	return store.OrgSettings{}, unsupported("get org settings")
}

// PutOrgSettings is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) PutOrgSettings(_ context.Context, set store.OrgSettings) (int64, error) {
	return 0, unsupported("put org settings")
}

// CountOrgSecrets is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) CountOrgSecrets(_ context.Context) (int, error) {
	return 0, unsupported("count org secrets")
}

// RewrapOrgSecrets is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) RewrapOrgSecrets(_ context.Context, rewrap func(orgID, name, sealed string) (string, error)) (int, error) {
	return 0, unsupported("rewrap org secrets")
}
