package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Result is a stored tool result body.
type Result struct {
	// Ref is the opaque reference the model sees ("res_…").
	Ref            string
	OrgID          string
	ConversationID string
	TurnID         string
	// UserID is whose quota the body counts against (the turn's caller);
	// empty counts it against its conversation's quota alone.
	UserID    string
	Tool      string
	Body      string
	CreatedAt time.Time
}

// ResultQuota bounds the stored bodies (len(Result.Body), in bytes) of one
// conversation and of one user in an organisation. A zero field bounds
// nothing.
type ResultQuota struct {
	ConversationBytes int64
	UserBytes         int64
}

// ErrEvicted reports a result whose body the quota evicted to make room
// for newer ones: the Ref was stored, its body is gone.
var ErrEvicted = errors.New("evicted by the stored results quota")

// ErrQuota reports a body larger on its own than a limit of the quota.
var ErrQuota = errors.New("larger than the stored results quota")

// Results stores full tool result bodies.
type Results interface {
	// PutResult stores r within q, atomically with every other writer:
	// when r's body would take its conversation past q.ConversationBytes,
	// that conversation's oldest bodies are evicted until it fits, then
	// likewise the oldest of r's user (in r's organisation, across their
	// conversations) past q.UserBytes. "Oldest" is by CreatedAt, then Ref;
	// r itself is never evicted by its own put. An evicted result keeps
	// its Ref and GetResult answers it with ErrEvicted. A body larger on
	// its own than a limit gives an error wrapping ErrQuota; a Ref that
	// already exists, in any organisation, an error wrapping ErrExists;
	// either way nothing changes.
	PutResult(ctx context.Context, r Result, q ResultQuota) error
	// GetResult returns the result with that ref in that organisation and
	// conversation, an error wrapping ErrEvicted when the quota evicted
	// its body, or ErrNotFound.
	GetResult(ctx context.Context, orgID, conversationID, ref string) (Result, error)
}

// CheckQuota returns an error wrapping ErrQuota when r's body alone is
// larger than a limit of q (the user limit only when r has a UserID):
// what every backend's PutResult checks before it writes.
func CheckQuota(r Result, q ResultQuota) error {
	n := int64(len(r.Body))
	switch {
	case q.ConversationBytes > 0 && n > q.ConversationBytes:
		return fmt.Errorf("a body of %d bytes, over the conversation's %d: %w", n, q.ConversationBytes, ErrQuota)
	case r.UserID != "" && q.UserBytes > 0 && n > q.UserBytes:
		return fmt.Errorf("a body of %d bytes, over the user's %d: %w", n, q.UserBytes, ErrQuota)
	}
	return nil
}
