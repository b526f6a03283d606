package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/quiverhq/quiver/store"
)

// conversationColumns are the columns scanConversation reads, in order.
const conversationColumns = `id, user_id, agent, title, created_at, updated_at`

// PutConversation inserts c or replaces the conversation with the same ID
// in c's organisation, in one statement. A conversation with that ID in
// another organisation is a different record and is left alone.
func (s *Store) PutConversation(ctx context.Context, c store.Conversation) error {
	const q = `INSERT INTO conversations (org_id, id, user_id, agent, title,
			created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (org_id, id) DO UPDATE SET
			user_id = excluded.user_id,
			agent = excluded.agent,
			title = excluded.title,
			created_at = excluded.created_at,
			updated_at = excluded.updated_at`
	_, err := s.pool.Exec(ctx, q, c.OrgID, c.ID, c.UserID, c.Agent, c.Title, c.CreatedAt, c.UpdatedAt)
	if err != nil {
		return wrapErr("put conversation", err)
	}
	return nil
}

// ClaimConversation creates c, or stamps its UpdatedAt on the stored
// conversation when c.UserID owns it, and returns the conversation as
// stored.
//
// READ COMMITTED is enough. The upsert either inserts, or finds the
// conflicting row — waiting for a concurrent claim's insert to commit or
// roll back, which ON CONFLICT does at any isolation — and locks it
// whether or not its owner matches; the owner's claim returns the row it
// updated. Another user's gets no row back and reads it in a second
// statement, which under READ COMMITTED takes a new snapshot, so it sees
// the row a concurrent claim just committed (a single statement's snapshot
// would not). The lock keeps the row as read until the commit.
func (s *Store) ClaimConversation(ctx context.Context, c store.Conversation) (store.Conversation, error) {
	const claim = claimConversationSQL
	const get = `SELECT ` + conversationColumns + ` FROM conversations WHERE org_id = $1 AND id = $2`
	var out store.Conversation
	err := s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		var err error
		out, err = scanConversation(tx.QueryRow(ctx, claim, c.OrgID, c.ID, c.UserID, c.Agent, c.Title,
			c.CreatedAt, c.UpdatedAt), c.OrgID)
		if errors.Is(err, pgx.ErrNoRows) { // another user's: read it as it is
			out, err = scanConversation(tx.QueryRow(ctx, get, c.OrgID, c.ID), c.OrgID)
		}
		return err
	})
	if err != nil {
		return store.Conversation{}, wrapErr("claim conversation", err)
	}
	return out, nil
}

// claimConversationSQL creates a conversation ($1..$7: org, id, user,
// agent, title, created and updated) or stamps updated_at on the stored
// one when the user owns it, returning the row; another user's returns
// no row.
const claimConversationSQL = `INSERT INTO conversations (org_id, id, user_id, agent, title,
		created_at, updated_at)
	VALUES ($1, $2, $3, $4, $5, $6, $7)
	ON CONFLICT (org_id, id) DO UPDATE SET updated_at = excluded.updated_at
	WHERE conversations.user_id = excluded.user_id
	RETURNING ` + conversationColumns

// GetConversation returns the conversation with that ID in that
// organisation, or an error wrapping store.ErrNotFound when there is none
// there.
func (s *Store) GetConversation(ctx context.Context, orgID, id string) (store.Conversation, error) {
	const q = `SELECT ` + conversationColumns + ` FROM conversations WHERE org_id = $1 AND id = $2`
	c, err := scanConversation(s.pool.QueryRow(ctx, q, orgID, id), orgID)
	if err != nil {
		return store.Conversation{}, wrapErr("get conversation", err)
	}
	return c, nil
}

// ListConversations returns the user's conversations in that organisation,
// most recently updated first and by ID (byte order) among equals, at most
// limit of them (all when limit <= 0). A user with none there yields none
// and no error.
func (s *Store) ListConversations(ctx context.Context, orgID, userID string, limit int) ([]store.Conversation, error) {
	var max *int // LIMIT NULL: no limit
	if limit > 0 {
		max = &limit
	}
	const q = `SELECT ` + conversationColumns + ` FROM conversations
		WHERE org_id = $1 AND user_id = $2
		ORDER BY updated_at DESC, id
		LIMIT $3`
	rows, err := s.pool.Query(ctx, q, orgID, userID, max)
	if err != nil {
		return nil, wrapErr("list conversations", err)
	}
	var cs []store.Conversation
	for rows.Next() {
		c, err := scanConversation(rows, orgID)
		if err != nil {
			rows.Close()
			return nil, wrapErr("list conversations", err)
		}
		cs = append(cs, c)
	}
	if err := rows.Err(); err != nil {
		return nil, wrapErr("list conversations", err)
	}
	return cs, nil
}

// scanConversation reads one row of conversationColumns.
func scanConversation(row pgx.Row, orgID string) (store.Conversation, error) {
	c := store.Conversation{OrgID: orgID}
	if err := row.Scan(&c.ID, &c.UserID, &c.Agent, &c.Title, &c.CreatedAt, &c.UpdatedAt); err != nil {
		return store.Conversation{}, err
	}
	c.CreatedAt, c.UpdatedAt = utc(c.CreatedAt), utc(c.UpdatedAt)
	return c, nil
}
