package postgres

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

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
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (org_id, id) DO UPDATE SET
			user_id = excluded.user_id,
			agent = excluded.agent,
			title = excluded.title,
			model = excluded.model,
			created_at = excluded.created_at,
			updated_at = excluded.updated_at`
	c.Title = store.CleanTitle(c.Title)
	err := s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, q, c.OrgID, c.ID, c.UserID, c.Agent, c.Title, c.Model, c.CreatedAt, c.UpdatedAt); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, putTitleSearchSQL, c.OrgID, c.ID, c.Title, store.FoldText(c.Title))
		return err
	})
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
	c = cleanClaim(c)
	var out store.Conversation
	err := s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		var err error
		out, err = scanConversation(tx.QueryRow(ctx, claim, claimArgs(c)...), c.OrgID)
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

// cleanClaim is c with its title as the store keeps it.
func cleanClaim(c store.Conversation) store.Conversation {
	c.Title = store.CleanTitle(c.Title)
	return c
}

// claimArgs are claimConversationSQL's parameters for c (cleaned).
func claimArgs(c store.Conversation) []any {
	return []any{c.OrgID, c.ID, c.UserID, c.Agent, c.Title, c.Model, c.CreatedAt, c.UpdatedAt, store.FoldText(c.Title)}
}

// claimConversationSQL creates a conversation ($1..$8: org, id, user,
// agent, title, model, created and updated) or stamps updated_at on the
// stored one when the user owns it, returning the row; another user's
// returns no row. A claim that leaves the conversation with its own
// non-empty title writes the title's search row ($9, the folded title)
// unless one is there already.
const claimConversationSQL = `WITH claimed AS (
		INSERT INTO conversations (org_id, id, user_id, agent, title, model,
			created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (org_id, id) DO UPDATE SET updated_at = excluded.updated_at
		WHERE conversations.user_id = excluded.user_id
		RETURNING ` + conversationColumns + `),
	searched AS (
		INSERT INTO conversation_search (org_id, conversation_id, seq, text)
		SELECT $1, $2, 0, $9 FROM claimed WHERE claimed.title = $5 AND $5 <> ''
		ON CONFLICT (org_id, conversation_id, seq) DO NOTHING)
	SELECT ` + conversationColumns + ` FROM claimed`

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
	cs, err := s.findConversations(ctx, store.ConversationQuery{OrgID: orgID, UserID: userID, Empty: true, Limit: limit})
	if err != nil {
		return nil, wrapErr("list conversations", err)
	}
	return cs, nil
}

// FindConversations returns the conversations q selects, in the order of
// the conversations_by_user index. The statement holds only the
// conditions q sets, so each shape gets a plan of its own.
func (s *Store) FindConversations(ctx context.Context, q store.ConversationQuery) ([]store.Conversation, error) {
	cs, err := s.findConversations(ctx, q)
	if err != nil {
		return nil, wrapErr("find conversations", err)
	}
	return cs, nil
}

// findConversations is FindConversations without the error's prefix.
func (s *Store) findConversations(ctx context.Context, q store.ConversationQuery) ([]store.Conversation, error) {
	query, args := findConversationsSQL(q)
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	var cs []store.Conversation
	for rows.Next() {
		c, err := scanConversation(rows, q.OrgID)
		if err != nil {
			rows.Close()
			return nil, err
		}
		cs = append(cs, c)
	}
	return cs, rows.Err()
}

// findConversationsSQL is FindConversations' statement and arguments.
// Text is matched with LIKE on folded text (store.FoldText) in COLLATE
// "C": byte for byte, as SQLite compares it.
func findConversationsSQL(q store.ConversationQuery) (string, []any) {
	var b strings.Builder
	args := []any{q.OrgID, q.UserID}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	b.WriteString(`SELECT ` + conversationColumns + ` FROM conversations c
		WHERE c.org_id = $1 AND c.user_id = $2`)
	if !q.Empty {
		b.WriteString(` AND EXISTS (SELECT 1 FROM messages m
			WHERE m.org_id = c.org_id AND m.conversation_id = c.id)`)
	}
	if q.Text != "" {
		b.WriteString(` AND EXISTS (SELECT 1 FROM conversation_search s
			WHERE s.org_id = c.org_id AND s.conversation_id = c.id AND s.text LIKE ` +
			arg(store.LikeContains(store.FoldText(q.Text))) + ` ESCAPE '\')`)
	}
	if q.After.ID != "" {
		at := arg(q.After.UpdatedAt)
		b.WriteString(` AND (c.updated_at < ` + at + ` OR (c.updated_at = ` + at + ` AND c.id > ` + arg(q.After.ID) + `))`)
	}
	b.WriteString(` ORDER BY c.updated_at DESC, c.id`)
	if q.Limit > 0 {
		b.WriteString(` LIMIT ` + arg(q.Limit))
	}
	return b.String(), args
}

// UpdateConversation applies u to the user's conversation, with its
// title's search row, in one transaction; the row lock taken by the read
// keeps a concurrent update from being lost.
func (s *Store) UpdateConversation(ctx context.Context, orgID, userID, id string, u store.ConversationUpdate) (store.Conversation, error) {
	var out store.Conversation
	err := s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		const get = `SELECT ` + conversationColumns + ` FROM conversations WHERE org_id = $1 AND id = $2 FOR UPDATE`
		c, err := scanConversation(tx.QueryRow(ctx, get, orgID, id), orgID)
		switch {
		case errors.Is(err, pgx.ErrNoRows) || err == nil && c.UserID != userID:
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
		const set = `UPDATE conversations SET title = $3, model = $4 WHERE org_id = $1 AND id = $2`
		if _, err := tx.Exec(ctx, set, orgID, id, c.Title, c.Model); err != nil {
			return err
		}
		out = c
		_, err = tx.Exec(ctx, putTitleSearchSQL, orgID, id, c.Title, store.FoldText(c.Title))
		return err
	})
	if err != nil {
		return store.Conversation{}, wrapErr("update conversation", err)
	}
	return out, nil
}

// conversationTables are the tables DeleteConversation deletes a
// conversation's rows from, by (org_id, conversation_id), each through
// an index that leads with those columns.
func conversationTables() []string {
	return []string{"messages", "message_counters", "conversation_search", "turns", "turn_events",
		"results", "conversation_intent_targets", "blobs", "short_term_memories",
		"attachments", "attachment_chunks", "attachment_chunk_search", "artifacts", "artifact_versions", "scheduled_tasks",
		"message_reactions", "message_pins", "message_marks", "conversation_threads"}
}

// DeleteConversation deletes the user's conversation and what is
// recorded under it in one transaction. The conversation's row is locked
// first, so a concurrent update or delete waits. The conversation's run
// key is held too, by a placeholder run inserted (and deleted again) in
// the same transaction: a run already there is ErrTurnRunning, and a
// claim made meanwhile (ClaimRun's insert of the same key) waits for the
// delete to commit, so no turn, new or resumed, writes between the check
// and the deletes (READ COMMITTED would let a run claimed after a mere
// read of runs write into rows this transaction is deleting).
func (s *Store) DeleteConversation(ctx context.Context, orgID, userID, id string) error {
	err := s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		var owner string
		err := tx.QueryRow(ctx, `SELECT user_id FROM conversations WHERE org_id = $1 AND id = $2 FOR UPDATE`, orgID, id).Scan(&owner)
		switch {
		case errors.Is(err, pgx.ErrNoRows) || err == nil && owner != userID:
			return store.ErrNotFound
		case err != nil:
			return err
		}
		const hold = `INSERT INTO runs (` + runColumns + `)
			VALUES ($1, $2, '', $3, 'deleting', now(), now() + interval '1 minute', false)
			ON CONFLICT (org_id, conversation_id) DO NOTHING`
		tag, err := tx.Exec(ctx, hold, orgID, id, userID)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return store.ErrTurnRunning
		}
		if err := deleteConversationRows(ctx, tx, orgID, id); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM runs WHERE org_id = $1 AND conversation_id = $2`, orgID, id)
		return err
	})
	if err != nil {
		return wrapErr("delete conversation", err)
	}
	return nil
}

// deleteConversationRows deletes the conversation's rows of every table
// and detaches its usage records, in one batch.
func deleteConversationRows(ctx context.Context, tx pgx.Tx, orgID, id string) error {
	b := &pgx.Batch{}
	for _, t := range conversationTables() {
		b.Queue(`DELETE FROM `+t+` WHERE org_id = $1 AND conversation_id = $2`, orgID, id)
	}
	// Its threads stay, as conversations of their own.
	b.Queue(`DELETE FROM conversation_threads WHERE org_id = $1 AND parent_id = $2`, orgID, id)
	b.Queue(`UPDATE usage SET conversation_id = '' WHERE org_id = $1 AND conversation_id = $2`, orgID, id)
	b.Queue(`DELETE FROM conversations WHERE org_id = $1 AND id = $2`, orgID, id)
	return tx.SendBatch(ctx, b).Close()
}

// scanConversation reads one row of conversationColumns.
func scanConversation(row pgx.Row, orgID string) (store.Conversation, error) {
	c := store.Conversation{OrgID: orgID}
	if err := row.Scan(&c.ID, &c.UserID, &c.Agent, &c.Title, &c.Model, &c.CreatedAt, &c.UpdatedAt); err != nil {
		return store.Conversation{}, err
	}
	c.CreatedAt, c.UpdatedAt = utc(c.CreatedAt), utc(c.UpdatedAt)
	return c, nil
}
