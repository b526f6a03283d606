package store

import (
	"context"
	"time"
)

// Conversation is a stored conversation, owned by one user.
type Conversation struct {
	ID     string
	OrgID  string
	UserID string
	Agent  string
	// Title is a short label for lists; empty until set.
	Title     string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Conversations stores conversations.
type Conversations interface {
	// PutConversation inserts the conversation or replaces the stored one
	// with the same ID in the same organisation.
	PutConversation(ctx context.Context, c Conversation) error
	// ClaimConversation is how a turn enters a conversation: atomically, it
	// creates c when its organisation holds no conversation with c's ID,
	// and otherwise stamps c.UpdatedAt on the stored one only when c.UserID
	// owns it. It returns the conversation as stored afterwards, so the
	// caller learns by its UserID whether the conversation is theirs; one
	// owned by another user is returned unchanged. Two claims of a new ID
	// create it once, for one of them, and a claim never overwrites the
	// title, agent or owner a conversation already has.
	ClaimConversation(ctx context.Context, c Conversation) (Conversation, error)
	// GetConversation returns the conversation with that ID in that
	// organisation, or ErrNotFound.
	GetConversation(ctx context.Context, orgID, id string) (Conversation, error)
	// ListConversations returns the user's conversations in that
	// organisation, most recently updated first, at most limit (all when
	// limit <= 0).
	ListConversations(ctx context.Context, orgID, userID string, limit int) ([]Conversation, error)
}
