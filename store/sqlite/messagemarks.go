package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/quiverhq/quiver/store"
)

// visibleMessage checks, inside tx, that seq is a message of the
// conversation a person sees, and returns its role and whether it is
// deleted; store.ErrNotFound otherwise.
func visibleMessage(ctx context.Context, tx *sql.Tx, orgID, conversationID string, seq int64) (role string, deleted bool, err error) {
	var del sql.NullString
	err = tx.QueryRowContext(ctx, `SELECT m.role, k.deleted_at FROM messages m
		LEFT JOIN message_marks k ON k.org_id = m.org_id AND k.conversation_id = m.conversation_id AND k.seq = m.seq
		WHERE m.org_id = ? AND m.conversation_id = ? AND m.seq = ?`, orgID, conversationID, seq).Scan(&role, &del)
	if errors.Is(err, sql.ErrNoRows) || err == nil && !store.VisibleRole(role) {
		return "", false, store.ErrNotFound
	}
	return role, del.Valid, err
}

// AddReaction validates r and adds it in one write transaction, which
// checks the message and the cap first.
func (s *Store) AddReaction(ctx context.Context, r store.Reaction) error {
	r, err := store.CheckReaction(r)
	if err != nil {
		return fmt.Errorf("sqlite: add reaction: %w", err)
	}
	err = s.inWriteTx(ctx, func(tx *sql.Tx) error {
		if _, deleted, err := visibleMessage(ctx, tx, r.OrgID, r.ConversationID, r.Seq); err != nil || deleted {
			return errors.Join(err, notFoundIf(deleted))
		}
		var have, n int
		err := tx.QueryRowContext(ctx, `SELECT count(*), count(*) FILTER (WHERE emoji = ? AND actor = ?) FROM message_reactions
			WHERE org_id = ? AND conversation_id = ? AND seq = ?`, r.Emoji, r.Actor, r.OrgID, r.ConversationID, r.Seq).Scan(&n, &have)
		switch {
		case err != nil:
			return err
		case have > 0:
			return nil
		case n >= store.MaxReactionsPerMessage:
			return fmt.Errorf("%w: a message holds at most %d reactions", store.ErrMarkLimit, store.MaxReactionsPerMessage)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO message_reactions (org_id, conversation_id, seq, emoji, actor, created_at)
			VALUES (?, ?, ?, ?, ?, ?)`, r.OrgID, r.ConversationID, r.Seq, r.Emoji, r.Actor, encodeTime(r.CreatedAt))
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: add reaction: %w", err)
	}
	return nil
}

// notFoundIf is store.ErrNotFound when cond holds, else nil: a deleted
// message takes no new marks.
func notFoundIf(cond bool) error {
	if cond {
		return store.ErrNotFound
	}
	return nil
}

// RemoveReaction removes the actor's emoji from the message.
func (s *Store) RemoveReaction(ctx context.Context, r store.Reaction) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sqlite: remove reaction: %w", err)
	}
	_, err := s.writer.ExecContext(ctx, `DELETE FROM message_reactions
		WHERE org_id = ? AND conversation_id = ? AND seq = ? AND emoji = ? AND actor = ?`,
		r.OrgID, r.ConversationID, r.Seq, r.Emoji, r.Actor)
	if err != nil {
		return fmt.Errorf("sqlite: remove reaction: %w", busy(err))
	}
	return nil
}

// PinMessage validates p and pins the message in one write transaction,
// which checks the message and the cap first.
func (s *Store) PinMessage(ctx context.Context, p store.Pin) error {
	p, err := store.CheckPin(p)
	if err != nil {
		return fmt.Errorf("sqlite: pin message: %w", err)
	}
	err = s.inWriteTx(ctx, func(tx *sql.Tx) error {
		if _, deleted, err := visibleMessage(ctx, tx, p.OrgID, p.ConversationID, p.Seq); err != nil || deleted {
			return errors.Join(err, notFoundIf(deleted))
		}
		var n, have int
		err := tx.QueryRowContext(ctx, `SELECT count(*), count(*) FILTER (WHERE seq = ?) FROM message_pins
			WHERE org_id = ? AND conversation_id = ?`, p.Seq, p.OrgID, p.ConversationID).Scan(&n, &have)
		switch {
		case err != nil:
			return err
		case have > 0:
			return nil
		case n >= store.MaxPinsPerConversation:
			return fmt.Errorf("%w: a conversation holds at most %d pins", store.ErrMarkLimit, store.MaxPinsPerConversation)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO message_pins (org_id, conversation_id, seq, pinned_by, pinned_at)
			VALUES (?, ?, ?, ?, ?)`, p.OrgID, p.ConversationID, p.Seq, p.PinnedBy, encodeTime(p.PinnedAt))
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: pin message: %w", err)
	}
	return nil
}

// UnpinMessage unpins the message.
func (s *Store) UnpinMessage(ctx context.Context, orgID, conversationID string, seq int64) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sqlite: unpin message: %w", err)
	}
	_, err := s.writer.ExecContext(ctx, `DELETE FROM message_pins WHERE org_id = ? AND conversation_id = ? AND seq = ?`,
		orgID, conversationID, seq)
	if err != nil {
		return fmt.Errorf("sqlite: unpin message: %w", busy(err))
	}
	return nil
}

// ListPins returns the conversation's pins, latest first.
func (s *Store) ListPins(ctx context.Context, orgID, conversationID string) ([]store.Pin, error) {
	rows, err := s.reader.QueryContext(ctx, `SELECT seq, pinned_by, pinned_at FROM message_pins
		WHERE org_id = ? AND conversation_id = ? ORDER BY pinned_at DESC, seq DESC`, orgID, conversationID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list pins: %w", err)
	}
	defer rows.Close()
	var out []store.Pin
	for rows.Next() {
		p := store.Pin{OrgID: orgID, ConversationID: conversationID}
		var at string
		if err := rows.Scan(&p.Seq, &p.PinnedBy, &at); err != nil {
			return nil, fmt.Errorf("sqlite: list pins: %w", err)
		}
		if p.PinnedAt, err = decodeTime(at); err != nil {
			return nil, fmt.Errorf("sqlite: list pins: %w", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list pins: %w", err)
	}
	return out, nil
}

// EditMessage validates e and edits or deletes the message in one write
// transaction.
func (s *Store) EditMessage(ctx context.Context, e store.MessageEdit) error {
	e, err := store.CheckMessageEdit(e)
	if err != nil {
		return fmt.Errorf("sqlite: edit message: %w", err)
	}
	err = s.inWriteTx(ctx, func(tx *sql.Tx) error {
		role, deleted, err := visibleMessage(ctx, tx, e.OrgID, e.ConversationID, e.Seq)
		switch {
		case err != nil:
			return err
		case role != "assistant" || deleted:
			return store.ErrNotEditable
		}
		key := []any{e.OrgID, e.ConversationID, e.Seq}
		if _, err := tx.ExecContext(ctx, `UPDATE messages SET content = ? WHERE org_id = ? AND conversation_id = ? AND seq = ?`,
			append([]any{e.Text}, key...)...); err != nil {
			return err
		}
		at := encodeTime(e.At)
		mark := `INSERT INTO message_marks (org_id, conversation_id, seq, edited_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (org_id, conversation_id, seq) DO UPDATE SET edited_at = excluded.edited_at`
		if e.Delete {
			mark = `INSERT INTO message_marks (org_id, conversation_id, seq, deleted_at) VALUES (?, ?, ?, ?)
				ON CONFLICT (org_id, conversation_id, seq) DO UPDATE SET deleted_at = excluded.deleted_at`
		}
		if _, err := tx.ExecContext(ctx, mark, append(key, at)...); err != nil {
			return err
		}
		if !e.Delete {
			return nil
		}
		for _, t := range []string{"message_pins", "message_reactions"} {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+t+` WHERE org_id = ? AND conversation_id = ? AND seq = ?`, key...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: edit message: %w", err)
	}
	return nil
}
