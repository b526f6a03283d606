package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/quiverhq/quiver/store"
)

// PutConversation inserts c or replaces the conversation with the same ID
// in c's organisation. A conversation with that ID in another organisation
// is a different record and is left alone.
func (s *Store) PutConversation(ctx context.Context, c store.Conversation) error {
	const q = `INSERT INTO conversations (org_id, id, user_id, agent, title,
			created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (org_id, id) DO UPDATE SET
			user_id = excluded.user_id,
			agent = excluded.agent,
			title = excluded.title,
			created_at = excluded.created_at,
			updated_at = excluded.updated_at`
	_, err := s.writer.ExecContext(ctx, q, c.OrgID, c.ID, c.UserID, c.Agent, c.Title,
		encodeTime(c.CreatedAt), encodeTime(c.UpdatedAt))
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

// claimConversation is ClaimConversation inside tx.
func claimConversation(ctx context.Context, tx *sql.Tx, c store.Conversation) (store.Conversation, error) {
	const insert = `INSERT INTO conversations (org_id, id, user_id, agent, title,
			created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (org_id, id) DO UPDATE SET updated_at = excluded.updated_at
		WHERE conversations.user_id = excluded.user_id`
	const get = `SELECT id, user_id, agent, title, created_at, updated_at
		FROM conversations WHERE org_id = ? AND id = ?`
	if _, err := tx.ExecContext(ctx, insert, c.OrgID, c.ID, c.UserID, c.Agent, c.Title,
		encodeTime(c.CreatedAt), encodeTime(c.UpdatedAt)); err != nil {
		return store.Conversation{}, err
	}
	return scanConversation(tx.QueryRowContext(ctx, get, c.OrgID, c.ID), c.OrgID)
}

// GetConversation returns the conversation with that ID in that
// organisation, or an error wrapping store.ErrNotFound when there is none
// there.
func (s *Store) GetConversation(ctx context.Context, orgID, id string) (store.Conversation, error) {
	const q = `SELECT id, user_id, agent, title, created_at, updated_at
		FROM conversations WHERE org_id = ? AND id = ?`
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
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	const q = `SELECT id, user_id, agent, title, created_at, updated_at
		FROM conversations WHERE org_id = ? AND user_id = ?
		ORDER BY updated_at DESC, id
		LIMIT ?`
	rows, err := s.reader.QueryContext(ctx, q, orgID, userID, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list conversations: %w", err)
	}
	defer rows.Close()
	var cs []store.Conversation
	for rows.Next() {
		c, err := scanConversation(rows, orgID)
		if err != nil {
			return nil, fmt.Errorf("sqlite: list conversations: %w", err)
		}
		cs = append(cs, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list conversations: %w", err)
	}
	return cs, nil
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface {
	Scan(dest ...any) error
}

// scanConversation reads one row of the columns GetConversation selects.
func scanConversation(row scanner, orgID string) (store.Conversation, error) {
	c := store.Conversation{OrgID: orgID}
	var createdAt, updatedAt string
	err := row.Scan(&c.ID, &c.UserID, &c.Agent, &c.Title, &createdAt, &updatedAt)
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
