package store

import (
	"context"
	"math"
	"time"
)

// Usage is what one model call consumed, and what it cost.
type Usage struct {
	OrgID          string
	ConversationID string
	TurnID         string
	// Payer is who is billed, copied from the turn.
	Payer string
	// UserID is the person whose turn made the call (the turn's caller):
	// what their budget counts. "" for records written before it was
	// kept whose conversation was gone by then.
	UserID string
	// Model is the "provider:model" reference called.
	Model string
	// Step numbers the model call within its turn, from 1.
	Step              int
	InputTokens       int64
	CachedInputTokens int64
	CacheWriteTokens  int64
	OutputTokens      int64
	// CostMicros is the cost in millionths of the configured currency unit
	// (USD unless configured otherwise); zero when no price is configured.
	CostMicros int64
	CreatedAt  time.Time
}

// UsageTotal sums usage records.
type UsageTotal struct {
	Calls             int64
	InputTokens       int64
	CachedInputTokens int64
	CacheWriteTokens  int64
	OutputTokens      int64
	CostMicros        int64
}

// Usages stores usage records.
type Usages interface {
	// PutUsage appends one record. A turn's (TurnID, Step) is the key of
	// its model step's record: when the store already holds a record of
	// them, that one is kept and u is not stored, with no error (a retry
	// of a write that committed).
	PutUsage(ctx context.Context, u Usage) error
	// ListUsage returns the turn's records in that organisation, by Step
	// (one per Step).
	ListUsage(ctx context.Context, orgID, turnID string) ([]Usage, error)
	// SumUsage totals the payer's records in that organisation created in
	// [from, to).
	SumUsage(ctx context.Context, orgID, payer string, from, to time.Time) (UsageTotal, error)
	// MonthSpend totals the organisation's records created in the
	// calendar month (UTC) holding month: every record when userID is "",
	// else only the person's (what the organisation's and the person's
	// budgets count). It reads the monthly totals the store keeps in the
	// transaction of every PutUsage and turn write, not the records, so
	// it costs the same however many calls the month holds.
	MonthSpend(ctx context.Context, orgID, userID string, month time.Time) (UsageTotal, error)
}

// Tokens is what a budget in tokens counts of t: input (cached and
// cache writes included) and output.
// The sum saturates at the largest int64 (stored sums saturate too), so
// a huge total never wraps below a budget.
func (t UsageTotal) Tokens() int64 {
	if t.InputTokens > math.MaxInt64-t.OutputTokens {
		return math.MaxInt64
	}
	return t.InputTokens + t.OutputTokens
}
