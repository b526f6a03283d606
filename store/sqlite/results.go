package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/quiverhq/quiver/store"
)

// errDuplicateRef reports a PutResult whose Ref is already stored.
var errDuplicateRef = errors.New("ref already exists")

// PutResult stores r. A Ref that is already stored, in any organisation,
// is an error and leaves the stored result unchanged.
func (s *Store) PutResult(ctx context.Context, r store.Result) error {
	const q = `INSERT INTO results (ref, org_id, conversation_id, turn_id, tool,
			body, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (ref) DO NOTHING`
	res, err := s.writer.ExecContext(ctx, q, r.Ref, r.OrgID, r.ConversationID,
		r.TurnID, r.Tool, r.Body, encodeTime(r.CreatedAt))
	if err != nil {
		return fmt.Errorf("sqlite: put result: %w", err)
	}
	n, err := res.RowsAffected()
	if err == nil && n == 0 {
		err = errDuplicateRef
	}
	if err != nil {
		return fmt.Errorf("sqlite: put result: %w", err)
	}
	return nil
}

// GetResult returns the result with that ref in that organisation and
// conversation, or an error wrapping store.ErrNotFound when there is none
// there, whether or not the ref exists elsewhere.
func (s *Store) GetResult(ctx context.Context, orgID, conversationID, ref string) (store.Result, error) {
	const q = `SELECT turn_id, tool, body, created_at FROM results
		WHERE ref = ? AND org_id = ? AND conversation_id = ?`
	r := store.Result{Ref: ref, OrgID: orgID, ConversationID: conversationID}
	var createdAt string
	err := s.reader.QueryRowContext(ctx, q, ref, orgID, conversationID).Scan(
		&r.TurnID, &r.Tool, &r.Body, &createdAt)
	if errors.Is(err, sql.ErrNoRows) {
		err = store.ErrNotFound
	}
	if err == nil {
		r.CreatedAt, err = decodeTime(createdAt)
	}
	if err != nil {
		return store.Result{}, fmt.Errorf("sqlite: get result: %w", err)
	}
	return r, nil
}
