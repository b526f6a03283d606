package postgres

import (
	"context"
	"time"

	"github.com/quiverhq/quiver/store"
)

// PutTurn is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) PutTurn(_ context.Context, t store.Turn) error {
	return unsupported("put turn")
}

// GetTurn is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) GetTurn(_ context.Context, orgID, id string) (store.Turn, error) {
	return store.Turn{}, unsupported("get turn")
}

// InterruptTurns is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) InterruptTurns(_ context.Context, startedBefore, at time.Time) (int, error) {
	return 0, unsupported("interrupt turns")
}
