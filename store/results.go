package store

import (
	"context"
	"time"
)

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
