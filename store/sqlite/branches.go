package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/quiverhq/quiver/store"
)

// treeSQL reads a conversation's turns that hold messages, in the order
// of their first message, through the messages' primary key.
const treeSQL = `SELECT t.id, COALESCE(t.parent_turn_id, '')
	FROM turns t
	JOIN (SELECT turn_id, MIN(seq) AS first FROM messages
		WHERE org_id = ? AND conversation_id = ? AND turn_id <> ''
		GROUP BY turn_id) f ON f.turn_id = t.id
	WHERE t.org_id = ? AND t.conversation_id = ?
	ORDER BY f.first`

// TurnTree reads the conversation's head and its turns in one read
// transaction, so that both are of one moment.
func (s *Store) TurnTree(ctx context.Context, orgID, conversationID string) (store.TurnTree, error) {
	var out store.TurnTree
	tx, err := s.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return out, fmt.Errorf("sqlite: turn tree: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only
	out, err = turnTree(ctx, tx, orgID, conversationID)
	if err != nil {
		return store.TurnTree{}, fmt.Errorf("sqlite: turn tree: %w", err)
	}
	return out, nil
}

// rowQuerier is a *sql.DB or a *sql.Tx.
type rowQuerier interface {
	querier
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// turnTree reads the tree through q.
func turnTree(ctx context.Context, q rowQuerier, orgID, conversationID string) (store.TurnTree, error) {
	var out store.TurnTree
	err := q.QueryRowContext(ctx, `SELECT COALESCE(head_turn_id, '') FROM conversations WHERE org_id = ? AND id = ?`,
		orgID, conversationID).Scan(&out.Head)
	if errors.Is(err, sql.ErrNoRows) {
		return store.TurnTree{}, nil
	}
	if err != nil {
		return out, err
	}
	rows, err := q.QueryContext(ctx, treeSQL, orgID, conversationID, orgID, conversationID)
	if err != nil {
		return out, err
	}
	defer rows.Close()
	for rows.Next() {
		var l store.TurnLink
		if err := rows.Scan(&l.ID, &l.ParentID); err != nil {
			return out, err
		}
		out.Turns = append(out.Turns, l)
	}
	return out, rows.Err()
}

// SetHead moves the head in one write transaction, which holds SQLite's
// write lock from BEGIN: no turn can claim the conversation's run
// between the check and the write.
func (s *Store) SetHead(ctx context.Context, orgID, userID, conversationID, turnID string) error {
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		var owner string
		err := tx.QueryRowContext(ctx, `SELECT user_id FROM conversations WHERE org_id = ? AND id = ?`, orgID, conversationID).Scan(&owner)
		switch {
		case errors.Is(err, sql.ErrNoRows) || err == nil && owner != userID:
			return store.ErrNotFound
		case err != nil:
			return err
		}
		var running int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM runs WHERE org_id = ? AND conversation_id = ?`, orgID, conversationID).Scan(&running); err != nil {
			return err
		}
		if running > 0 {
			return store.ErrTurnRunning
		}
		var held int
		err = tx.QueryRowContext(ctx, `SELECT count(*) FROM turns t WHERE t.org_id = ? AND t.id = ? AND t.conversation_id = ?
			AND EXISTS (SELECT 1 FROM messages m WHERE m.org_id = t.org_id AND m.conversation_id = t.conversation_id AND m.turn_id = t.id)`,
			orgID, turnID, conversationID).Scan(&held)
		if err != nil {
			return err
		}
		if held == 0 {
			return store.ErrNoSuchTurn
		}
		_, err = tx.ExecContext(ctx, `UPDATE conversations SET head_turn_id = ? WHERE org_id = ? AND id = ?`, turnID, orgID, conversationID)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: set head: %w", err)
	}
	return nil
}

// enterBranch checks, in tx, that t may start a branch (store.TurnWrite's
// Head): its parent a turn of its conversation, and fewer than
// store.MaxSiblings other turns following that parent; then makes t the
// conversation's head. t itself is put by the caller.
func enterBranch(ctx context.Context, tx *sql.Tx, t store.Turn) error {
	var parent any
	if t.ParentID != "" {
		parent = t.ParentID
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM turns WHERE org_id = ? AND id = ? AND conversation_id = ?`,
			t.OrgID, t.ParentID, t.ConversationID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("parent %s of turn %s: %w", t.ParentID, t.ID, store.ErrNoSuchTurn)
		}
	}
	var siblings int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM turns
		WHERE org_id = ? AND conversation_id = ? AND parent_turn_id IS ? AND id <> ?`,
		t.OrgID, t.ConversationID, parent, t.ID).Scan(&siblings); err != nil {
		return err
	}
	if siblings >= store.MaxSiblings {
		return fmt.Errorf("turn %s: %d turns already follow its parent: %w", t.ID, siblings, store.ErrTooManyBranches)
	}
	_, err := tx.ExecContext(ctx, `UPDATE conversations SET head_turn_id = ? WHERE org_id = ? AND id = ?`,
		t.ID, t.OrgID, t.ConversationID)
	return err
}

// linkTurnsSQL links the turns of every conversation marked unlinked (a
// head of ”: all of them when the migration that adds branches runs,
// those of an archive from before it on import) in order: each turn
// holding messages follows the turn before it (by first message), and
// the conversation's head is the turn of its last message (NULL when it
// has none). A conversation with a NULL head is left alone: a current
// archive imports as it was exported.
var linkTurnsSQL = []string{
	`UPDATE turns SET parent_turn_id = o.prev
	FROM (SELECT t.org_id, t.id, LAG(t.id) OVER (PARTITION BY t.org_id, t.conversation_id ORDER BY f.first) AS prev
		FROM turns t
		JOIN (SELECT org_id, conversation_id, turn_id, MIN(seq) AS first FROM messages
			WHERE turn_id <> '' GROUP BY org_id, conversation_id, turn_id) f
			ON f.org_id = t.org_id AND f.conversation_id = t.conversation_id AND f.turn_id = t.id
		JOIN conversations c ON c.org_id = t.org_id AND c.id = t.conversation_id
		WHERE c.head_turn_id = '') AS o
	WHERE turns.org_id = o.org_id AND turns.id = o.id AND turns.parent_turn_id IS NULL AND o.prev IS NOT NULL`,
	`UPDATE conversations SET head_turn_id = (
		SELECT m.turn_id FROM messages m
		JOIN turns t ON t.org_id = m.org_id AND t.id = m.turn_id AND t.conversation_id = m.conversation_id
		WHERE m.org_id = conversations.org_id AND m.conversation_id = conversations.id
		ORDER BY m.seq DESC LIMIT 1)
	WHERE head_turn_id = ''`,
}

// linkTurns runs linkTurnsSQL in tx: the Go part of the migration that
// adds branches, and of an import.
func linkTurns(ctx context.Context, tx *sql.Tx) error {
	for _, q := range linkTurnsSQL {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("link turns: %w", err)
		}
	}
	return nil
}
