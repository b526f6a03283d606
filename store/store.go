// Package store defines Quiver's repositories and the records they hold.
// Implementations (store/sqlite, later store/postgres) pass the shared
// conformance suite in store/storetest. All methods are safe for concurrent
// use and honour ctx cancellation.
package store

import (
	"context"
	"errors"
	"time"
)

// ErrNotFound is returned (wrapped) when a record does not exist in the
// scope it was asked for. It never says whether the record exists elsewhere.
var ErrNotFound = errors.New("not found")

// Store is every repository together.
type Store interface {
	Turns
	Messages
	Results
	// Close releases the store's resources.
	Close() error
}

// Turn is a stored turn: who started it, in which zone, with which toolset.
type Turn struct {
	ID             string
	OrgID          string
	UserID         string
	ConversationID string
	Agent          string
	// Timezone is the IANA zone captured at turn start; "" means UTC.
	Timezone string
	// Payer is who is billed; data only.
	Payer string
	// Tools is the frozen toolset, in declaration order.
	Tools     []string
	Status    string // "running", "paused", "done", "interrupted"
	StartedAt time.Time
}

// Turns stores turns.
type Turns interface {
	// PutTurn inserts the turn or replaces the stored one with the same ID.
	PutTurn(ctx context.Context, t Turn) error
	// GetTurn returns the turn with that ID in that organisation.
	GetTurn(ctx context.Context, orgID, id string) (Turn, error)
}

// Message is one transcript entry.
type Message struct {
	ConversationID string
	TurnID         string
	// Seq orders messages within a conversation; AppendMessage assigns it.
	Seq int64
	// Role is "user", "assistant", "tool" or "context".
	Role string
	// Content is the text; for tool messages, the (possibly truncated) result.
	Content string
	// ToolName and ToolCallID are set on tool calls and tool results.
	ToolName   string
	ToolCallID string
	CreatedAt  time.Time
}

// Messages stores transcripts.
type Messages interface {
	// AppendMessage appends m to its conversation and returns its Seq.
	AppendMessage(ctx context.Context, orgID string, m Message) (int64, error)
	// ListMessages returns the conversation's messages with Seq < beforeSeq
	// (all when beforeSeq <= 0), oldest first.
	ListMessages(ctx context.Context, orgID, conversationID string, beforeSeq int64) ([]Message, error)
}

// Result is a stored tool result body.
type Result struct {
	// Ref is the opaque reference the model sees ("res_…").
	Ref            string
	OrgID          string
	ConversationID string
	TurnID         string
	Tool           string
	Body           string
	CreatedAt      time.Time
}

// Results stores full tool result bodies.
type Results interface {
	// PutResult stores r; a Ref that already exists is an error.
	PutResult(ctx context.Context, r Result) error
	// GetResult returns the result with that ref in that organisation and
	// conversation, or ErrNotFound.
	GetResult(ctx context.Context, orgID, conversationID, ref string) (Result, error)
}
