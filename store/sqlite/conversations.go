package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/quiverhq/quiver/store"
)

// conversationColumns are the columns scanConversation reads, in order.
const conversationColumns = `id, user_id, agent, title, model, created_at, updated_at`

// PutConversation inserts c or replaces the conversation with the same ID
// in c's organisation, with its title's search row, in one transaction.
// A conversation with that ID in another organisation is a different
// record and is left alone.
func (s *Store) PutConversation(ctx context.Context, c store.Conversation) error {
	const q = `INSERT INTO conversations (org_id, id, user_id, agent, title, model,
			created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (org_id, id) DO UPDATE SET
			user_id = excluded.user_id,
			agent = excluded.agent,
			title = excluded.title,
			model = excluded.model,
			created_at = excluded.created_at,
			updated_at = excluded.updated_at`
	c.Title = store.CleanTitle(c.Title)
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, q, c.OrgID, c.ID, c.UserID, c.Agent, c.Title, c.Model,
			encodeTime(c.CreatedAt), encodeTime(c.UpdatedAt)); err != nil {
			return err
		}
		return putTitleSearch(ctx, tx, c.OrgID, c.ID, c.Title)
	})
	if err != nil {
		return fmt.Errorf("sqlite: put conversation: %w", err)
	}
	return nil
}

// ClaimConversation creates c or stamps its UpdatedAt on the stored
// conversation the same user owns, in one write transaction (which holds
// SQLite's write lock from BEGIN), and returns the conversation as stored.
func (s *Store) ClaimConversation(ctx context.Context, c store.Conversation) (store.Conversation, error) {
	var out store.Conversation
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = claimConversation(ctx, tx, c)
		return err
	})
	if err != nil {
		return store.Conversation{}, fmt.Errorf("sqlite: claim conversation: %w", err)
	}
	return out, nil
}

// claimConversation is ClaimConversation inside tx. A claim that created
// a titled conversation writes its title's search row.
func claimConversation(ctx context.Context, tx *sql.Tx, c store.Conversation) (store.Conversation, error) {
	const insert = `INSERT INTO conversations (org_id, id, user_id, agent, title, model,
			created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (org_id, id) DO UPDATE SET updated_at = excluded.updated_at
		WHERE conversations.user_id = excluded.user_id`
	const get = `SELECT ` + conversationColumns + ` FROM conversations WHERE org_id = ? AND id = ?`
	c.Title = store.CleanTitle(c.Title)
	if _, err := tx.ExecContext(ctx, insert, c.OrgID, c.ID, c.UserID, c.Agent, c.Title, c.Model,
		encodeTime(c.CreatedAt), encodeTime(c.UpdatedAt)); err != nil {
		return store.Conversation{}, err
	}
	got, err := scanConversation(tx.QueryRowContext(ctx, get, c.OrgID, c.ID), c.OrgID)
	if err != nil {
		return store.Conversation{}, err
	}
	if c.Title != "" && got.UserID == c.UserID && got.Title == c.Title {
		err = putTitleSearch(ctx, tx, c.OrgID, c.ID, c.Title)
	}
	return got, err
}

// GetConversation returns the conversation with that ID in that
// organisation, or an error wrapping store.ErrNotFound when there is none
// there.
func (s *Store) GetConversation(ctx context.Context, orgID, id string) (store.Conversation, error) {
	const q = `SELECT ` + conversationColumns + ` FROM conversations WHERE org_id = ? AND id = ?`
	c, err := scanConversation(s.reader.QueryRowContext(ctx, q, orgID, id), orgID)
	if errors.Is(err, sql.ErrNoRows) {
		err = store.ErrNotFound
	}
	if err != nil {
		return store.Conversation{}, fmt.Errorf("sqlite: get conversation: %w", err)
	}
	return c, nil
}

// ListConversations returns the user's conversations in that organisation,
// most recently updated first and by ID among equals, at most limit of them
// (all when limit <= 0). A user with none there yields none and no error.
func (s *Store) ListConversations(ctx context.Context, orgID, userID string, limit int) ([]store.Conversation, error) {
	cs, err := s.findConversations(ctx, store.ConversationQuery{OrgID: orgID, UserID: userID, Empty: true, Limit: limit})
	if err != nil {
		return nil, fmt.Errorf("sqlite: list conversations: %w", err)
	}
	return cs, nil
}

// FindConversations returns the conversations q selects, in the order of
// the conversations_by_user index. The statement holds only the
// conditions q sets.
func (s *Store) FindConversations(ctx context.Context, q store.ConversationQuery) ([]store.Conversation, error) {
	cs, err := s.findConversations(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("sqlite: find conversations: %w", err)
	}
	return cs, nil
}

// findConversations is FindConversations without the error's prefix.
func (s *Store) findConversations(ctx context.Context, q store.ConversationQuery) ([]store.Conversation, error) {
	query, args := findConversationsSQL(q)
	rows, err := s.reader.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var cs []store.Conversation
	for rows.Next() {
		c, err := scanConversation(rows, q.OrgID)
		if err != nil {
			return nil, err
		}
		cs = append(cs, c)
	}
	return cs, rows.Err()
}

// findConversationsSQL is FindConversations' statement and arguments.
// Text is matched with LIKE on folded text (store.FoldText): both sides
// are lower case, so SQLite's ASCII case folding in LIKE changes nothing.
func findConversationsSQL(q store.ConversationQuery) (string, []any) {
	var b strings.Builder
	b.WriteString(`SELECT ` + conversationColumns + ` FROM conversations c
		WHERE c.org_id = ? AND c.user_id = ?`)
	args := []any{q.OrgID, q.UserID}
	if !q.Empty {
		b.WriteString(` AND EXISTS (SELECT 1 FROM messages m
			WHERE m.org_id = c.org_id AND m.conversation_id = c.id)`)
	}
	if q.Text != "" {
		b.WriteString(` AND EXISTS (SELECT 1 FROM conversation_search s
			WHERE s.org_id = c.org_id AND s.conversation_id = c.id AND s.text LIKE ? ESCAPE '\')`)
		args = append(args, store.LikeContains(store.FoldText(q.Text)))
	}
	if q.After.ID != "" {
		at := encodeTime(q.After.UpdatedAt)
		b.WriteString(` AND (c.updated_at < ? OR (c.updated_at = ? AND c.id > ?))`)
		args = append(args, at, at, q.After.ID)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	b.WriteString(` ORDER BY c.updated_at DESC, c.id LIMIT ?`)
	return b.String(), append(args, limit)
}

// UpdateConversation applies u to the user's conversation, with its
// title's search row, in one write transaction.
func (s *Store) UpdateConversation(ctx context.Context, orgID, userID, id string, u store.ConversationUpdate) (store.Conversation, error) {
	var out store.Conversation
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		const get = `SELECT ` + conversationColumns + ` FROM conversations WHERE org_id = ? AND id = ?`
		c, err := scanConversation(tx.QueryRowContext(ctx, get, orgID, id), orgID)
		switch {
		case errors.Is(err, sql.ErrNoRows) || err == nil && c.UserID != userID:
			return store.ErrNotFound
		case err != nil:
			return err
		}
		if u.Title != nil {
			c.Title = store.CleanTitle(*u.Title)
		}
		if u.Model != nil {
			c.Model = *u.Model
		}
		const set = `UPDATE conversations SET title = ?, model = ? WHERE org_id = ? AND id = ?`
		if _, err := tx.ExecContext(ctx, set, c.Title, c.Model, orgID, id); err != nil {
			return err
		}
		out = c
		return putTitleSearch(ctx, tx, orgID, id, c.Title)
	})
	if err != nil {
		return store.Conversation{}, fmt.Errorf("sqlite: update conversation: %w", err)
	}
	return out, nil
}

// conversationTables are the tables DeleteConversation deletes a
// conversation's rows from, by (org_id, conversation_id), each through
// an index that leads with those columns.
func conversationTables() []string {
	return []string{"messages", "conversation_search", "turns", "turn_events", "results",
		"conversation_intent_targets", "blobs", "short_term_memories", "attachments", "attachment_chunks",
		"artifacts", "artifact_versions", "scheduled_tasks", "message_reactions", "message_pins", "message_marks", "conversation_threads"}
}

// DeleteConversation deletes the user's conversation and what is
// recorded under it in one write transaction, which holds SQLite's write
// lock from BEGIN: no turn can claim the conversation's run between the
// check and the deletes.
func (s *Store) DeleteConversation(ctx context.Context, orgID, userID, id string) error {
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		var owner string
		err := tx.QueryRowContext(ctx, `SELECT user_id FROM conversations WHERE org_id = ? AND id = ?`, orgID, id).Scan(&owner)
		switch {
		case errors.Is(err, sql.ErrNoRows) || err == nil && owner != userID:
			return store.ErrNotFound
		case err != nil:
			return err
		}
		var running int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM runs WHERE org_id = ? AND conversation_id = ?`, orgID, id).Scan(&running); err != nil {
			return err
		}
		if running > 0 {
			return store.ErrTurnRunning
		}
		return deleteConversationRows(ctx, tx, orgID, id)
	})
	if err != nil {
		return fmt.Errorf("sqlite: delete conversation: %w", err)
	}
	return nil
}

// deleteConversationRows deletes the conversation's rows of every table
// and detaches its usage records.
func deleteConversationRows(ctx context.Context, tx *sql.Tx, orgID, id string) error {
	// The full-text rows of the chunks go by rowid, before the chunks.
	if err := deleteAttachmentSearch(ctx, tx, `org_id = ? AND conversation_id = ?`, orgID, id); err != nil {
		return fmt.Errorf("attachment_chunk_search: %w", err)
	}
	for _, t := range conversationTables() {
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+t+` WHERE org_id = ? AND conversation_id = ?`, orgID, id); err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
	}
	// Its threads stay, as conversations of their own.
	if _, err := tx.ExecContext(ctx, `DELETE FROM conversation_threads WHERE org_id = ? AND parent_id = ?`, orgID, id); err != nil {
		return fmt.Errorf("conversation_threads: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE usage SET conversation_id = '' WHERE org_id = ? AND conversation_id = ?`, orgID, id); err != nil {
		return fmt.Errorf("usage: %w", err)
	}
	_, err := tx.ExecContext(ctx, `DELETE FROM conversations WHERE org_id = ? AND id = ?`, orgID, id)
	return err
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface {
	Scan(dest ...any) error
}

// scanConversation reads one row of conversationColumns.
func scanConversation(row scanner, orgID string) (store.Conversation, error) {
	c := store.Conversation{OrgID: orgID}
	var createdAt, updatedAt string
	err := row.Scan(&c.ID, &c.UserID, &c.Agent, &c.Title, &c.Model, &createdAt, &updatedAt)
	if err != nil {
		return store.Conversation{}, err
	}
	if c.CreatedAt, err = decodeTime(createdAt); err != nil {
		return store.Conversation{}, err
	}
	if c.UpdatedAt, err = decodeTime(updatedAt); err != nil {
		return store.Conversation{}, err
	}
	return c, nil
}
