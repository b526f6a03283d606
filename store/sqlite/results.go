package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/quiverhq/quiver/store"
)

// errDuplicateRef reports a PutResult whose Ref is already stored.
var errDuplicateRef = fmt.Errorf("ref %w", store.ErrExists)

// PutResult stores r within q, evicting the oldest bodies of r's
// conversation and then of r's user to make room (see store.Results). The
// write transaction holds SQLite's one writer, so concurrent puts, in this
// process or another, run one after another: none can pass the quota.
func (s *Store) PutResult(ctx context.Context, r store.Result, q store.ResultQuota) error {
	if err := store.CheckQuota(r, q); err != nil {
		return fmt.Errorf("sqlite: put result: %w", err)
	}
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		const insert = `INSERT INTO results (ref, org_id, conversation_id, turn_id, user_id, tool,
				body, size, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (ref) DO NOTHING`
		res, err := tx.ExecContext(ctx, insert, r.Ref, r.OrgID, r.ConversationID, r.TurnID, r.UserID,
			r.Tool, r.Body, len(r.Body), encodeTime(r.CreatedAt))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return errors.Join(err, errDuplicateRef)
		}
		// The put's own time stamps what it evicts: the caller's clock.
		now := encodeTime(r.CreatedAt)
		if q.ConversationBytes > 0 {
			if err := evictResults(ctx, tx, "conversation_id", r.OrgID, r.ConversationID, r.Ref, q.ConversationBytes, now); err != nil {
				return err
			}
		}
		if q.UserBytes > 0 && r.UserID != "" {
			return evictResults(ctx, tx, "user_id", r.OrgID, r.UserID, r.Ref, q.UserBytes, now)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: put result: %w", err)
	}
	return nil
}

// evictResults empties the oldest held bodies whose column (conversation_id
// or user_id, a constant) is value in orgID, keeping the newest, with ref
// (the body just put) first, that fit in limit bytes. The running sum
// reads the covering index, never a body.
func evictResults(ctx context.Context, tx *sql.Tx, column, orgID, value, ref string, limit int64, now string) error {
	q := `UPDATE results SET body = '', size = 0, evicted_at = ?
		WHERE ref IN (
			SELECT ref FROM (
				SELECT ref, SUM(size) OVER (ORDER BY ref = ? DESC, created_at DESC, ref DESC) AS kept
				FROM results WHERE org_id = ? AND ` + column + ` = ? AND evicted_at IS NULL
			) WHERE kept > ?
		)`
	if _, err := tx.ExecContext(ctx, q, now, ref, orgID, value, limit); err != nil {
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
		WHERE ref = ? AND org_id = ? AND conversation_id = ?`
	r := store.Result{Ref: ref, OrgID: orgID, ConversationID: conversationID}
	var createdAt string
	var evicted bool
	err := s.reader.QueryRowContext(ctx, q, ref, orgID, conversationID).Scan(
		&r.TurnID, &r.UserID, &r.Tool, &r.Body, &createdAt, &evicted)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		err = store.ErrNotFound
	case err == nil && evicted:
		err = store.ErrEvicted
	case err == nil:
		r.CreatedAt, err = decodeTime(createdAt)
	}
	if err != nil {
		return store.Result{}, fmt.Errorf("sqlite: get result: %w", err)
	}
	return r, nil
}
