package store

import (
	"context"
	"errors"
	"time"
)

// Conversation is a stored conversation, owned by one user.
type Conversation struct {
	ID     string
	OrgID  string
	UserID string
	Agent  string
	// Title is a short label for lists; empty until set. A store keeps it
	// as CleanTitle returns it.
	Title string
	// Model is the "provider:model" reference a person chose for the
	// conversation; "" follows the agent's model. The store keeps it as
	// given (its callers check it against what the agent allows).
	Model     string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ErrTurnRunning refuses deleting a conversation that has a Run (a turn
// of it is running, or a dead replica's run is not reaped yet): nothing
// is deleted.
var ErrTurnRunning = errors.New("a turn of the conversation is running")

// ConversationUpdate changes some fields of a conversation; a nil field
// is left as stored.
type ConversationUpdate struct {
	// Title is the new title, kept as CleanTitle returns it.
	Title *string
	// Model is the new model reference; "" follows the agent's again.
	Model *string
}

// ConversationQuery selects a user's conversations for FindConversations.
type ConversationQuery struct {
	OrgID, UserID string
	// Text, when not empty, keeps the conversations whose title or one of
	// whose user messages (never assistant text, tool calls nor tool
	// results) contains it, both folded by FoldText. The caller bounds
	// it (MaxSearchRunes).
	Text string
	// Empty includes the conversations that have no message yet; false
	// leaves them out (a conversation created and never written to).
	Empty bool
	// After, when its ID is set, continues a listing: only the
	// conversations after it in the order of the answer.
	After ConversationCursor
	// Limit bounds the answer; <= 0 means no bound.
	Limit int
}

// ConversationCursor is a place in FindConversations' order: the last
// conversation of the page before.
type ConversationCursor struct {
	UpdatedAt time.Time
	ID        string
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
	// title, agent, model or owner a conversation already has.
	ClaimConversation(ctx context.Context, c Conversation) (Conversation, error)
	// GetConversation returns the conversation with that ID in that
	// organisation, or ErrNotFound.
	GetConversation(ctx context.Context, orgID, id string) (Conversation, error)
	// ListConversations returns the user's conversations in that
	// organisation, most recently updated first, at most limit (all when
	// limit <= 0).
	ListConversations(ctx context.Context, orgID, userID string, limit int) ([]Conversation, error)
	// FindConversations returns the conversations q selects, most
	// recently updated first and by ID (byte order) among equals, at most
	// q.Limit.
	FindConversations(ctx context.Context, q ConversationQuery) ([]Conversation, error)
	// UpdateConversation applies u to the conversation with that ID when
	// userID owns it, and returns it as stored afterwards. UpdatedAt is
	// left alone: renaming is not activity. A conversation that does not
	// exist in orgID and one of another user are both ErrNotFound, and
	// nothing is written.
	UpdateConversation(ctx context.Context, orgID, userID, id string, u ConversationUpdate) (Conversation, error)
	// DeleteConversation deletes, in one transaction, the conversation
	// when userID owns it and everything recorded under it: its messages,
	// turns (the inspector's records with them), turn events, stored tool
	// results, Deliberate Tool Mode's open targets, blobs and what search
	// reads. Usage records are kept, detached (their ConversationID set to
	// ""): they are what was spent, and budgets and bills are summed from
	// them. A conversation that does not exist in orgID and one of another
	// user are both ErrNotFound; one with a Run is ErrTurnRunning. Either
	// way nothing is deleted.
	DeleteConversation(ctx context.Context, orgID, userID, id string) error
}
