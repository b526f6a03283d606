package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/quiverhq/quiver/store"
)

// PutShortTerm validates m (store.CheckShortTerm) and replaces the
// thread's memory with it in one statement; a blank text deletes it.
func (s *Store) PutShortTerm(ctx context.Context, m store.ShortTerm) error {
	m, err := store.CheckShortTerm(m)
	if err != nil {
		return fmt.Errorf("sqlite: put short-term memory: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sqlite: put short-term memory: %w", err)
	}
	if m.Text == "" {
		_, err = s.writer.ExecContext(ctx, `DELETE FROM short_term_memories WHERE org_id = ? AND thread = ?`, m.OrgID, m.Thread)
	} else {
		_, err = s.writer.ExecContext(ctx, `INSERT INTO short_term_memories (org_id, thread, conversation_id, text, updated_at)
			VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (org_id, thread) DO UPDATE SET conversation_id = excluded.conversation_id,
				text = excluded.text, updated_at = excluded.updated_at`,
			m.OrgID, m.Thread, m.ConversationID, m.Text, encodeTime(m.UpdatedAt))
	}
	if err != nil {
		return fmt.Errorf("sqlite: put short-term memory: %w", err)
	}
	return nil
}

// GetShortTerm returns the thread's memory, or store.ErrNotFound.
func (s *Store) GetShortTerm(ctx context.Context, orgID, thread string) (store.ShortTerm, error) {
	if err := ctx.Err(); err != nil {
		return store.ShortTerm{}, fmt.Errorf("sqlite: get short-term memory: %w", err)
	}
	if !store.ValidBlobKey(orgID) || !store.ValidBlobKey(thread) {
		return store.ShortTerm{}, fmt.Errorf("sqlite: get short-term memory: %w", store.ErrNotFound)
	}
	m := store.ShortTerm{OrgID: orgID, Thread: thread}
	var updated string
	err := s.reader.QueryRowContext(ctx, `SELECT conversation_id, text, updated_at FROM short_term_memories
		WHERE org_id = ? AND thread = ?`, orgID, thread).Scan(&m.ConversationID, &m.Text, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		err = store.ErrNotFound
	}
	if err == nil {
		m.UpdatedAt, err = decodeTime(updated)
	}
	if err != nil {
		return store.ShortTerm{}, fmt.Errorf("sqlite: get short-term memory: %w", err)
	}
	return m, nil
}
