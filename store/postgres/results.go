package postgres

import (
	"context"
	"fmt"

	"github.com/quiverhq/quiver/store"
)

// PutResult stores r. A Ref that is already stored, in any organisation,
// gives an error wrapping store.ErrExists and leaves the stored result
// unchanged.
func (s *Store) PutResult(ctx context.Context, r store.Result) error {
	const q = `INSERT INTO results (ref, org_id, conversation_id, turn_id, tool,
			body, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (ref) DO NOTHING`
	tag, err := s.pool.Exec(ctx, q, r.Ref, r.OrgID, r.ConversationID, r.TurnID, r.Tool,
		[]byte(r.Body), r.CreatedAt)
	if err != nil {
		return wrapErr("put result", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("postgres: put result: ref %w", store.ErrExists)
	}
	return nil
}

// GetResult returns the result with that ref in that organisation and
// conversation, or an error wrapping store.ErrNotFound when there is none
// there, whether or not the ref exists elsewhere.
func (s *Store) GetResult(ctx context.Context, orgID, conversationID, ref string) (store.Result, error) {
	const q = `SELECT turn_id, tool, body, created_at FROM results
		WHERE ref = $1 AND org_id = $2 AND conversation_id = $3`
	r := store.Result{Ref: ref, OrgID: orgID, ConversationID: conversationID}
	var body []byte
	err := s.pool.QueryRow(ctx, q, ref, orgID, conversationID).Scan(&r.TurnID, &r.Tool, &body, &r.CreatedAt)
	if err != nil {
		return store.Result{}, wrapErr("get result", err)
	}
	r.Body, r.CreatedAt = string(body), utc(r.CreatedAt)
	return r, nil
}
