package postgres

import (
	"context"

	"github.com/quiverhq/quiver/store"
)

// PutResult is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) PutResult(_ context.Context, r store.Result) error {
	return unsupported("put result")
}

// GetResult is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) GetResult(_ context.Context, orgID, conversationID, ref string) (store.Result, error) {
	return store.Result{}, unsupported("get result")
}
