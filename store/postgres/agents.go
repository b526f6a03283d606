package postgres

import (
	"context"

	"github.com/quiverhq/quiver/store"
)

// PutAgent is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) PutAgent(_ context.Context, a store.StoredAgent) error {
	return unsupported("put agent")
}

// GetAgent is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) GetAgent(_ context.Context, orgID, name string) (store.StoredAgent, error) {
	return store.StoredAgent{}, unsupported("get agent")
}

// ListAgents is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) ListAgents(_ context.Context, orgID string) ([]store.StoredAgent, error) {
	return nil, unsupported("list agents")
}

// DeleteAgent is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) DeleteAgent(_ context.Context, orgID, name string) error {
	return unsupported("delete agent")
}
