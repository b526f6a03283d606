package postgres

import (
	"context"
	"time"

	"github.com/quiverhq/quiver/store"
)

// PutUsage is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) PutUsage(_ context.Context, u store.Usage) error {
	return unsupported("put usage")
}

// ListUsage is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) ListUsage(_ context.Context, orgID, turnID string) ([]store.Usage, error) {
	return nil, unsupported("list usage")
}

// SumUsage is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) SumUsage(_ context.Context, orgID, payer string, from, to time.Time) (store.UsageTotal, error) {
	return store.UsageTotal{}, unsupported("sum usage")
}
