package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"math"

	"github.com/quiverhq/quiver/store"
)

// AppendMessage appends m to its conversation in orgID and returns the Seq
// it assigned: one more than the conversation's highest, starting at 1.
// m.Seq is ignored. Concurrent appends get distinct, increasing Seqs.
func (s *Store) AppendMessage(ctx context.Context, orgID string, m store.Message) (int64, error) {
	// The transaction holds the write lock from BEGIN: reading the
	// highest Seq and inserting the next cannot interleave with another
	// append, here or in another process.
	var seq int64
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		var err error
		seq, err = appendMessage(ctx, tx, orgID, m)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("sqlite: append message: %w", err)
	}
	return seq, nil
}

// AppendMessages appends ms in one transaction: all are stored, in order,
// or none. One commit instead of one per message is what makes recording a
// whole model step cheap.
func (s *Store) AppendMessages(ctx context.Context, orgID string, ms []store.Message) ([]int64, error) {
	seqs := make([]int64, len(ms))
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		for i, m := range ms {
			var err error
			if seqs[i], err = appendMessage(ctx, tx, orgID, m); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: append messages: %w", err)
	}
	return seqs, nil
}

// queryRower is a *sql.DB or a *sql.Tx.
type queryRower interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// appendMessage inserts m with the conversation's next Seq, and a user
// message's search row.
func appendMessage(ctx context.Context, tx *sql.Tx, orgID string, m store.Message) (int64, error) {
	const q = `INSERT INTO messages (org_id, conversation_id, seq, turn_id, role,
			content, tool_name, tool_call_id, ref, is_error, refused, created_at)
		SELECT ?1, ?2, COALESCE(MAX(seq), 0) + 1, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11
		FROM messages WHERE org_id = ?1 AND conversation_id = ?2
		RETURNING seq`
	var seq int64
	err := tx.QueryRowContext(ctx, q, orgID, m.ConversationID, m.TurnID, m.Role,
		m.Content, m.ToolName, m.ToolCallID, m.Ref, m.IsError, m.Refused, encodeTime(m.CreatedAt)).Scan(&seq)
	if err == nil && m.Role == store.RoleUser {
		err = putSearch(ctx, tx, orgID, m.ConversationID, seq, m.Content)
	}
	return seq, err
}

// ListMessages returns the messages of that conversation in that
// organisation with Seq < beforeSeq (all of them when beforeSeq <= 0),
// oldest first. A conversation with no messages there yields none and no
// error.
func (s *Store) ListMessages(ctx context.Context, orgID, conversationID string, beforeSeq int64) ([]store.Message, error) {
	if beforeSeq <= 0 {
		beforeSeq = math.MaxInt64
	}
	const q = `SELECT seq, turn_id, role, content, tool_name, tool_call_id, ref,
			is_error, refused, created_at
		FROM messages WHERE org_id = ? AND conversation_id = ? AND seq < ?
		ORDER BY seq`
	rows, err := s.reader.QueryContext(ctx, q, orgID, conversationID, beforeSeq)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list messages: %w", err)
	}
	defer rows.Close()
	ms, err := scanMessages(rows, conversationID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list messages: %w", err)
	}
	return ms, nil
}

// scanMessages reads every row of a ListMessages query.
func scanMessages(rows *sql.Rows, conversationID string) ([]store.Message, error) {
	var ms []store.Message
	for rows.Next() {
		m := store.Message{ConversationID: conversationID}
		var createdAt string
		err := rows.Scan(&m.Seq, &m.TurnID, &m.Role, &m.Content, &m.ToolName,
			&m.ToolCallID, &m.Ref, &m.IsError, &m.Refused, &createdAt)
		if err != nil {
			return nil, err
		}
		if m.CreatedAt, err = decodeTime(createdAt); err != nil {
			return nil, err
		}
		ms = append(ms, m)
	}
	return ms, rows.Err()
}

// LastMessageSeq returns the Seq of the conversation's last message in
// that organisation, 0 when it has none.
func (s *Store) LastMessageSeq(ctx context.Context, orgID, conversationID string) (int64, error) {
	const q = `SELECT COALESCE(MAX(seq), 0) FROM messages WHERE org_id = ? AND conversation_id = ?`
	var seq int64
	if err := s.reader.QueryRowContext(ctx, q, orgID, conversationID).Scan(&seq); err != nil {
		return 0, fmt.Errorf("sqlite: last message seq: %w", err)
	}
	return seq, nil
}
