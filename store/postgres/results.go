package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quiverhq/quiver/store"
)

// PutResult stores r within q, evicting the oldest bodies of r's
// conversation and then of r's user to make room (see store.Results).
// Writers of one user, and of one conversation, in any process on the
// database, take its advisory lock first and so run their
// check-then-evict one after another: none can pass the quota. A Ref that
// is already stored, in any organisation, gives an error wrapping
// store.ErrExists and leaves the stored result unchanged.
func (s *Store) PutResult(ctx context.Context, r store.Result, q store.ResultQuota) error {
	if err := store.CheckQuota(r, q); err != nil {
		return fmt.Errorf("postgres: put result: %w", err)
	}
	err := s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		// User before conversation, always: two puts never wait on each
		// other in opposite orders.
		if r.UserID != "" {
			if err := lockRule(ctx, tx, lockResultsUser, r.OrgID, r.UserID); err != nil {
				return err
			}
		}
		if err := lockRule(ctx, tx, lockResultsConversation, r.OrgID, r.ConversationID); err != nil {
			return err
		}
		const insert = `INSERT INTO results (ref, org_id, conversation_id, turn_id, user_id, tool,
				body, size, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
			ON CONFLICT (ref) DO NOTHING`
		tag, err := tx.Exec(ctx, insert, r.Ref, r.OrgID, r.ConversationID, r.TurnID, r.UserID, r.Tool,
			[]byte(r.Body), len(r.Body), r.CreatedAt)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("ref %w", store.ErrExists)
		}
		if q.ConversationBytes > 0 {
			if err := evictResults(ctx, tx, "conversation_id", r.OrgID, r.ConversationID, r.Ref, q.ConversationBytes, r.CreatedAt); err != nil {
				return err
			}
		}
		if q.UserBytes > 0 && r.UserID != "" {
			return evictResults(ctx, tx, "user_id", r.OrgID, r.UserID, r.Ref, q.UserBytes, r.CreatedAt)
		}
		return nil
	})
	if err != nil {
		return wrapErr("put result", err)
	}
	return nil
}

// evictResults empties the oldest held bodies whose column (conversation_id
// or user_id, a constant) is value in orgID, keeping the newest, with ref
// (the body just put) first, that fit in limit bytes; the put's own time
// (the caller's clock) stamps them. The running sum reads the covering
// index, never a body.
func evictResults(ctx context.Context, tx pgx.Tx, column, orgID, value, ref string, limit int64, now time.Time) error {
	q := `UPDATE results SET body = ''::bytea, size = 0, evicted_at = $1
		WHERE ref IN (
			SELECT ref FROM (
				SELECT ref, SUM(size) OVER (ORDER BY ref = $2 DESC, created_at DESC, ref DESC) AS kept
				FROM results WHERE org_id = $3 AND ` + column + ` = $4 AND evicted_at IS NULL
			) held WHERE kept > $5
		)`
	if _, err := tx.Exec(ctx, q, now, ref, orgID, value, limit); err != nil {
		return fmt.Errorf("evict by %s: %w", column, err)
	}
	return nil
}

// GetResult returns the result with that ref in that organisation and
// conversation, an error wrapping store.ErrEvicted when the quota evicted
// its body, or an error wrapping store.ErrNotFound when there is none
// there, whether or not the ref exists elsewhere.
func (s *Store) GetResult(ctx context.Context, orgID, conversationID, ref string) (store.Result, error) {
	const q = `SELECT turn_id, user_id, tool, body, created_at, evicted_at IS NOT NULL FROM results
		WHERE ref = $1 AND org_id = $2 AND conversation_id = $3`
	r := store.Result{Ref: ref, OrgID: orgID, ConversationID: conversationID}
	var body []byte
	var evicted bool
	err := s.pool.QueryRow(ctx, q, ref, orgID, conversationID).Scan(&r.TurnID, &r.UserID, &r.Tool, &body, &r.CreatedAt, &evicted)
	if err != nil {
		return store.Result{}, wrapErr("get result", err)
	}
	if evicted {
		return store.Result{}, fmt.Errorf("postgres: get result: %w", store.ErrEvicted)
	}
	r.Body, r.CreatedAt = string(body), utc(r.CreatedAt)
	return r, nil
}
