package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quiverhq/quiver/store"
)

// Marks. Every write of marks locks the conversation's row first (FOR
// NO KEY UPDATE), so the writes to one conversation queue and a cap
// checked by counting holds under READ COMMITTED: two pins racing for
// the fiftieth place cannot both take it.

// lockVisible locks the conversation and checks that seq is a message
// of it a person sees; it returns the message's role and whether it is
// deleted, or store.ErrNotFound.
func lockVisible(ctx context.Context, tx pgx.Tx, orgID, conversationID string, seq int64) (role string, deleted bool, err error) {
	if err := lockConversation(ctx, tx, orgID, conversationID); err != nil {
		return "", false, err
	}
	var del *time.Time
	err = tx.QueryRow(ctx, `SELECT m.role, k.deleted_at FROM messages m
		LEFT JOIN message_marks k ON k.org_id = m.org_id AND k.conversation_id = m.conversation_id AND k.seq = m.seq
		WHERE m.org_id = $1 AND m.conversation_id = $2 AND m.seq = $3`, orgID, conversationID, seq).Scan(&role, &del)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && !store.VisibleRole(role) {
		return "", false, store.ErrNotFound
	}
	return role, del != nil, err
}

// lockConversation locks the conversation's row; store.ErrNotFound when
// there is none.
func lockConversation(ctx context.Context, tx pgx.Tx, orgID, id string) error {
	var one int
	err := tx.QueryRow(ctx, `SELECT 1 FROM conversations WHERE org_id = $1 AND id = $2 FOR NO KEY UPDATE`, orgID, id).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.ErrNotFound
	}
	return err
}

// markable is lockVisible for a new mark: a deleted message is
// store.ErrNotFound.
func markable(ctx context.Context, tx pgx.Tx, orgID, conversationID string, seq int64) error {
	_, deleted, err := lockVisible(ctx, tx, orgID, conversationID, seq)
	if err == nil && deleted {
		err = store.ErrNotFound
	}
	return err
}

// AddReaction validates r and adds it in one transaction, after the
// message and the cap.
func (s *Store) AddReaction(ctx context.Context, r store.Reaction) error {
	r, err := store.CheckReaction(r)
	if err != nil {
		return fmt.Errorf("postgres: add reaction: %w", err)
	}
	err = s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		if err := markable(ctx, tx, r.OrgID, r.ConversationID, r.Seq); err != nil {
			return err
		}
		var n, have int
		err := tx.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE emoji = $4 AND actor = $5) FROM message_reactions
			WHERE org_id = $1 AND conversation_id = $2 AND seq = $3`, r.OrgID, r.ConversationID, r.Seq, r.Emoji, r.Actor).Scan(&n, &have)
		switch {
		case err != nil:
			return err
		case have > 0:
			return nil
		case n >= store.MaxReactionsPerMessage:
			return fmt.Errorf("%w: a message holds at most %d reactions", store.ErrMarkLimit, store.MaxReactionsPerMessage)
		}
		_, err = tx.Exec(ctx, `INSERT INTO message_reactions (org_id, conversation_id, seq, emoji, actor, created_at)
			VALUES ($1, $2, $3, $4, $5, $6)`, r.OrgID, r.ConversationID, r.Seq, r.Emoji, r.Actor, r.CreatedAt)
		return err
	})
	if err != nil {
		return wrapErr("add reaction", err)
	}
	return nil
}

// RemoveReaction removes the actor's emoji from the message.
func (s *Store) RemoveReaction(ctx context.Context, r store.Reaction) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM message_reactions
		WHERE org_id = $1 AND conversation_id = $2 AND seq = $3 AND emoji = $4 AND actor = $5`,
		r.OrgID, r.ConversationID, r.Seq, r.Emoji, r.Actor)
	if err != nil {
		return wrapErr("remove reaction", err)
	}
	return nil
}

// PinMessage validates p and pins the message in one transaction, after
// the message and the cap.
func (s *Store) PinMessage(ctx context.Context, p store.Pin) error {
	p, err := store.CheckPin(p)
	if err != nil {
		return fmt.Errorf("postgres: pin message: %w", err)
	}
	err = s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		if err := markable(ctx, tx, p.OrgID, p.ConversationID, p.Seq); err != nil {
			return err
		}
		var n, have int
		err := tx.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE seq = $3) FROM message_pins
			WHERE org_id = $1 AND conversation_id = $2`, p.OrgID, p.ConversationID, p.Seq).Scan(&n, &have)
		switch {
		case err != nil:
			return err
		case have > 0:
			return nil
		case n >= store.MaxPinsPerConversation:
			return fmt.Errorf("%w: a conversation holds at most %d pins", store.ErrMarkLimit, store.MaxPinsPerConversation)
		}
		_, err = tx.Exec(ctx, `INSERT INTO message_pins (org_id, conversation_id, seq, pinned_by, pinned_at)
			VALUES ($1, $2, $3, $4, $5)`, p.OrgID, p.ConversationID, p.Seq, p.PinnedBy, p.PinnedAt)
		return err
	})
	if err != nil {
		return wrapErr("pin message", err)
	}
	return nil
}

// UnpinMessage unpins the message.
func (s *Store) UnpinMessage(ctx context.Context, orgID, conversationID string, seq int64) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM message_pins WHERE org_id = $1 AND conversation_id = $2 AND seq = $3`,
		orgID, conversationID, seq)
	if err != nil {
		return wrapErr("unpin message", err)
	}
	return nil
}

// ListPins returns the conversation's pins, latest first.
func (s *Store) ListPins(ctx context.Context, orgID, conversationID string) ([]store.Pin, error) {
	rows, err := s.pool.Query(ctx, `SELECT seq, pinned_by, pinned_at FROM message_pins
		WHERE org_id = $1 AND conversation_id = $2 ORDER BY pinned_at DESC, seq DESC`, orgID, conversationID)
	if err != nil {
		return nil, wrapErr("list pins", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Pin, error) {
		p := store.Pin{OrgID: orgID, ConversationID: conversationID}
		err := r.Scan(&p.Seq, &p.PinnedBy, &p.PinnedAt)
		p.PinnedAt = utc(p.PinnedAt)
		return p, err
	})
	if err != nil {
		return nil, wrapErr("list pins", err)
	}
	return out, nil
}

// EditMessage validates e and edits or deletes the message in one
// transaction.
func (s *Store) EditMessage(ctx context.Context, e store.MessageEdit) error {
	e, err := store.CheckMessageEdit(e)
	if err != nil {
		return fmt.Errorf("postgres: edit message: %w", err)
	}
	err = s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		role, deleted, err := lockVisible(ctx, tx, e.OrgID, e.ConversationID, e.Seq)
		switch {
		case err != nil:
			return err
		case role != "assistant" || deleted:
			return store.ErrNotEditable
		}
		b := &pgx.Batch{}
		b.Queue(`UPDATE messages SET content = $4 WHERE org_id = $1 AND conversation_id = $2 AND seq = $3`,
			e.OrgID, e.ConversationID, e.Seq, []byte(e.Text))
		if !e.Delete {
			b.Queue(`INSERT INTO message_marks (org_id, conversation_id, seq, edited_at) VALUES ($1, $2, $3, $4)
				ON CONFLICT (org_id, conversation_id, seq) DO UPDATE SET edited_at = excluded.edited_at`,
				e.OrgID, e.ConversationID, e.Seq, e.At)
			return tx.SendBatch(ctx, b).Close()
		}
		b.Queue(`INSERT INTO message_marks (org_id, conversation_id, seq, deleted_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (org_id, conversation_id, seq) DO UPDATE SET deleted_at = excluded.deleted_at`,
			e.OrgID, e.ConversationID, e.Seq, e.At)
		for _, t := range []string{"message_pins", "message_reactions"} {
			b.Queue(`DELETE FROM `+t+` WHERE org_id = $1 AND conversation_id = $2 AND seq = $3`, e.OrgID, e.ConversationID, e.Seq)
		}
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return wrapErr("edit message", err)
	}
	return nil
}
