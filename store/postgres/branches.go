package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/quiverhq/quiver/store"
)

// treeSQL reads a conversation's head and its turns that hold messages,
// in the order of their first message, in one statement (one snapshot);
// a conversation without turns answers one row with no turn.
const treeSQL = `SELECT COALESCE(c.head_turn_id, ''), t.id, COALESCE(t.parent_turn_id, '')
	FROM conversations c
	LEFT JOIN (SELECT turn_id, MIN(seq) AS first FROM messages
		WHERE org_id = $1 AND conversation_id = $2 AND turn_id <> ''
		GROUP BY turn_id) f ON true
	LEFT JOIN turns t ON t.org_id = c.org_id AND t.conversation_id = c.id AND t.id = f.turn_id
	WHERE c.org_id = $1 AND c.id = $2
	ORDER BY f.first`

// TurnTree reads the conversation's head and turns in one statement.
func (s *Store) TurnTree(ctx context.Context, orgID, conversationID string) (store.TurnTree, error) {
	rows, err := s.pool.Query(ctx, treeSQL, orgID, conversationID)
	if err != nil {
		return store.TurnTree{}, wrapErr("turn tree", err)
	}
	defer rows.Close()
	var out store.TurnTree
	for rows.Next() {
		var id, parent *string
		if err := rows.Scan(&out.Head, &id, &parent); err != nil {
			return store.TurnTree{}, wrapErr("turn tree", err)
		}
		if id != nil && parent != nil {
			out.Turns = append(out.Turns, store.TurnLink{ID: *id, ParentID: *parent})
		}
	}
	if err := rows.Err(); err != nil {
		return store.TurnTree{}, wrapErr("turn tree", err)
	}
	return out, nil
}

// SetHead moves the head in one transaction that locks the conversation's
// row, as DeleteConversation does.
func (s *Store) SetHead(ctx context.Context, orgID, userID, conversationID, turnID string) error {
	err := s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		var owner string
		err := tx.QueryRow(ctx, `SELECT user_id FROM conversations WHERE org_id = $1 AND id = $2 FOR UPDATE`,
			orgID, conversationID).Scan(&owner)
		switch {
		case errors.Is(err, pgx.ErrNoRows) || err == nil && owner != userID:
			return store.ErrNotFound
		case err != nil:
			return err
		}
		var running, held int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM runs WHERE org_id = $1 AND conversation_id = $2`,
			orgID, conversationID).Scan(&running); err != nil {
			return err
		}
		if running > 0 {
			return store.ErrTurnRunning
		}
		err = tx.QueryRow(ctx, `SELECT count(*) FROM turns t WHERE t.org_id = $1 AND t.id = $2 AND t.conversation_id = $3
			AND EXISTS (SELECT 1 FROM messages m WHERE m.org_id = t.org_id AND m.conversation_id = t.conversation_id AND m.turn_id = t.id)`,
			orgID, turnID, conversationID).Scan(&held)
		if err != nil {
			return err
		}
		if held == 0 {
			return store.ErrNoSuchTurn
		}
		_, err = tx.Exec(ctx, `UPDATE conversations SET head_turn_id = $3 WHERE org_id = $1 AND id = $2`,
			orgID, conversationID, turnID)
		return err
	})
	if err != nil {
		return wrapErr("set head", err)
	}
	return nil
}

// checkBranch checks that t may start a branch (store.TurnWrite's Head):
// its parent a turn of its conversation, and fewer than
// store.MaxSiblings other turns following that parent. It reads before
// WriteTurn's batch, which cannot branch on an answer: the run a turn
// holds (store.Runs) keeps two turns of a conversation from starting
// together, so nothing adds a sibling between the check and the write.
func (s *Store) checkBranch(ctx context.Context, t store.Turn) error {
	if t.ParentID != "" {
		var n int
		if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM turns WHERE org_id = $1 AND id = $2 AND conversation_id = $3`,
			t.OrgID, t.ParentID, t.ConversationID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("parent %s of turn %s: %w", t.ParentID, t.ID, store.ErrNoSuchTurn)
		}
	}
	var siblings int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM turns
		WHERE org_id = $1 AND conversation_id = $2 AND parent_turn_id IS NOT DISTINCT FROM NULLIF($3, '') AND id <> $4`,
		t.OrgID, t.ConversationID, t.ParentID, t.ID).Scan(&siblings); err != nil {
		return err
	}
	if siblings >= store.MaxSiblings {
		return fmt.Errorf("turn %s: %d turns already follow its parent: %w", t.ID, siblings, store.ErrTooManyBranches)
	}
	return nil
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
func linkTurns(ctx context.Context, tx pgx.Tx) error {
	for _, q := range linkTurnsSQL {
		if _, err := tx.Exec(ctx, q); err != nil {
			return fmt.Errorf("link turns: %w", err)
		}
	}
	return nil
}
