package postgres

import (
	"context"

	"github.com/quiverhq/quiver/store"
)

// AppendMessage is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) AppendMessage(_ context.Context, orgID string, m store.Message) (int64, error) {
	return 0, unsupported("append message")
}

// AppendMessages is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) AppendMessages(_ context.Context, orgID string, ms []store.Message) ([]int64, error) {
	return nil, unsupported("append messages")
}

// ListMessages is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) ListMessages(_ context.Context, orgID, conversationID string, beforeSeq int64) ([]store.Message, error) {
	return nil, unsupported("list messages")
}
