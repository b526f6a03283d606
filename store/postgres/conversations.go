package postgres

import (
	"context"

	"github.com/quiverhq/quiver/store"
)

// PutConversation is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) PutConversation(_ context.Context, c store.Conversation) error {
	return unsupported("put conversation")
}

// ClaimConversation is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) ClaimConversation(_ context.Context, c store.Conversation) (store.Conversation, error) {
	return store.Conversation{}, unsupported("claim conversation")
}

// GetConversation is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) GetConversation(_ context.Context, orgID, id string) (store.Conversation, error) {
	return store.Conversation{}, unsupported("get conversation")
}

// ListConversations is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) ListConversations(_ context.Context, orgID, userID string, limit int) ([]store.Conversation, error) {
	return nil, unsupported("list conversations")
}
