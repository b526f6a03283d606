package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/quiverhq/quiver/store"
)

// PutShortTerm validates m (store.CheckShortTerm) and replaces the
// thread's memory with it in one statement; a blank text deletes it.
func (s *Store) PutShortTerm(ctx context.Context, m store.ShortTerm) error {
	m, err := store.CheckShortTerm(m)
	if err != nil {
		return fmt.Errorf("postgres: put short-term memory: %w", err)
	}
	if m.Text == "" {
		_, err = s.pool.Exec(ctx, `DELETE FROM short_term_memories WHERE org_id = $1 AND thread = $2`, m.OrgID, m.Thread)
	} else {
		_, err = s.pool.Exec(ctx, `INSERT INTO short_term_memories (org_id, thread, conversation_id, text, updated_at)
			VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (org_id, thread) DO UPDATE SET conversation_id = excluded.conversation_id,
				text = excluded.text, updated_at = excluded.updated_at`,
			m.OrgID, m.Thread, m.ConversationID, m.Text, m.UpdatedAt)
	}
	if err != nil {
		return wrapErr("put short-term memory", err)
	}
	return nil
}

// GetShortTerm returns the thread's memory, or store.ErrNotFound.
func (s *Store) GetShortTerm(ctx context.Context, orgID, thread string) (store.ShortTerm, error) {
	if err := ctx.Err(); err != nil {
		return store.ShortTerm{}, wrapErr("get short-term memory", err)
	}
	if !validKeys(orgID, thread) {
		return store.ShortTerm{}, wrapErr("get short-term memory", pgx.ErrNoRows)
	}
	m := store.ShortTerm{OrgID: orgID, Thread: thread}
	err := s.pool.QueryRow(ctx, `SELECT conversation_id, text, updated_at FROM short_term_memories
		WHERE org_id = $1 AND thread = $2`, orgID, thread).Scan(&m.ConversationID, &m.Text, &m.UpdatedAt)
	if err != nil {
		return store.ShortTerm{}, wrapErr("get short-term memory", err)
	}
	m.UpdatedAt = utc(m.UpdatedAt)
	return m, nil
}
