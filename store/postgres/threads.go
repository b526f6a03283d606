package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quiverhq/quiver/store"
)

// ListMessageMarks reads the conversation's mark rows in one
// REPEATABLE READ transaction, so they agree, and groups them
// (store.GroupMarks).
func (s *Store) ListMessageMarks(ctx context.Context, orgID, conversationID string) ([]store.MessageMark, error) {
	var rows store.MarkRows
	err := s.inTx(ctx, repeatableRead, func(tx pgx.Tx) error {
		rows = store.MarkRows{}
		rs, err := tx.Query(ctx, `SELECT seq, emoji, actor, created_at FROM message_reactions
			WHERE org_id = $1 AND conversation_id = $2`, orgID, conversationID)
		if err != nil {
			return err
		}
		rows.Reactions, err = pgx.CollectRows(rs, func(r pgx.CollectableRow) (store.Reaction, error) {
			x := store.Reaction{OrgID: orgID, ConversationID: conversationID}
			err := r.Scan(&x.Seq, &x.Emoji, &x.Actor, &x.CreatedAt)
			x.CreatedAt = utc(x.CreatedAt)
			return x, err
		})
		if err != nil {
			return err
		}
		rs, err = tx.Query(ctx, `SELECT seq, pinned_by, pinned_at FROM message_pins
			WHERE org_id = $1 AND conversation_id = $2`, orgID, conversationID)
		if err != nil {
			return err
		}
		rows.Pins, err = pgx.CollectRows(rs, func(r pgx.CollectableRow) (store.Pin, error) {
			p := store.Pin{OrgID: orgID, ConversationID: conversationID}
			err := r.Scan(&p.Seq, &p.PinnedBy, &p.PinnedAt)
			p.PinnedAt = utc(p.PinnedAt)
			return p, err
		})
		if err != nil {
			return err
		}
		rs, err = tx.Query(ctx, `SELECT seq, edited_at, deleted_at FROM message_marks
			WHERE org_id = $1 AND conversation_id = $2`, orgID, conversationID)
		if err != nil {
			return err
		}
		rows.Edits, err = pgx.CollectRows(rs, func(r pgx.CollectableRow) (store.EditMark, error) {
			var e store.EditMark
			var edited, deleted *time.Time
			err := r.Scan(&e.Seq, &edited, &deleted)
			e.EditedAt, e.DeletedAt = fromOptionalTime(edited), fromOptionalTime(deleted)
			return e, err
		})
		if err != nil {
			return err
		}
		rows.Threads, err = listThreads(ctx, tx, orgID, conversationID)
		return err
	})
	if err != nil {
		return nil, wrapErr("list message marks", err)
	}
	return store.GroupMarks(rows), nil
}

// listThreads returns the threads started in parentID, oldest first.
func listThreads(ctx context.Context, q pgx.Tx, orgID, parentID string) ([]store.ThreadLink, error) {
	rs, err := q.Query(ctx, `SELECT conversation_id, parent_seq, created_at FROM conversation_threads
		WHERE org_id = $1 AND parent_id = $2 ORDER BY created_at, conversation_id`, orgID, parentID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rs, func(r pgx.CollectableRow) (store.ThreadLink, error) {
		t := store.ThreadLink{OrgID: orgID, ParentID: parentID}
		err := r.Scan(&t.ConversationID, &t.ParentSeq, &t.CreatedAt)
		t.CreatedAt = utc(t.CreatedAt)
		return t, err
	})
}

// ListThreads returns the threads started in the conversation.
func (s *Store) ListThreads(ctx context.Context, orgID, parentID string) ([]store.ThreadLink, error) {
	var out []store.ThreadLink
	err := s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		var err error
		out, err = listThreads(ctx, tx, orgID, parentID)
		return err
	})
	if err != nil {
		return nil, wrapErr("list threads", err)
	}
	return out, nil
}

// GetThread returns the conversation's link to its parent.
func (s *Store) GetThread(ctx context.Context, orgID, conversationID string) (store.ThreadLink, error) {
	t := store.ThreadLink{OrgID: orgID, ConversationID: conversationID}
	err := s.pool.QueryRow(ctx, `SELECT parent_id, parent_seq, created_at FROM conversation_threads
		WHERE org_id = $1 AND conversation_id = $2`, orgID, conversationID).Scan(&t.ParentID, &t.ParentSeq, &t.CreatedAt)
	if err != nil {
		return store.ThreadLink{}, wrapErr("get thread", err)
	}
	t.CreatedAt = utc(t.CreatedAt)
	return t, nil
}

// CreateThread writes the thread's conversation, link and first message
// in one transaction, the parent's row locked while it checks the
// parent, the message it starts from and the cap.
func (s *Store) CreateThread(ctx context.Context, t store.NewThread) (store.ThreadLink, error) {
	link, err := store.CheckNewThread(t)
	if err != nil {
		return store.ThreadLink{}, fmt.Errorf("postgres: create thread: %w", err)
	}
	t.First, _ = store.CheckPost(t.First)
	c := cleanClaim(t.Conversation)
	err = s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		if err := lockOwned(ctx, tx, c.OrgID, t.ParentID, c.UserID); err != nil {
			return err
		}
		var all int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM conversation_threads WHERE org_id = $1 AND parent_id = $2`, c.OrgID, t.ParentID).Scan(&all); err != nil {
			return err
		}
		if all >= store.MaxThreadsPerConversation {
			return fmt.Errorf("%w: a conversation starts at most %d threads", store.ErrMarkLimit, store.MaxThreadsPerConversation)
		}
		if t.ParentSeq > 0 {
			if err := markable(ctx, tx, c.OrgID, t.ParentID, t.ParentSeq); err != nil {
				return err
			}
			var n int
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM conversation_threads WHERE org_id = $1 AND parent_id = $2 AND parent_seq = $3`,
				c.OrgID, t.ParentID, t.ParentSeq).Scan(&n); err != nil {
				return err
			}
			if n >= store.MaxThreadsPerMessage {
				return fmt.Errorf("%w: a message starts at most %d thread", store.ErrMarkLimit, store.MaxThreadsPerMessage)
			}
		}
		// A plain insert: an ID taken is a unique violation, ErrExists.
		if _, err := tx.Exec(ctx, `INSERT INTO conversations (org_id, id, user_id, agent, title, model, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, c.OrgID, c.ID, c.UserID, c.Agent, c.Title, c.Model, c.CreatedAt, c.UpdatedAt); err != nil {
			return err
		}
		if c.Title != "" {
			if _, err := tx.Exec(ctx, putTitleSearchSQL, c.OrgID, c.ID, c.Title, store.FoldText(c.Title)); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO conversation_threads (org_id, conversation_id, parent_id, parent_seq, created_at)
			VALUES ($1, $2, $3, $4, $5)`, c.OrgID, c.ID, t.ParentID, t.ParentSeq, link.CreatedAt); err != nil {
			return err
		}
		_, err := appendIn(ctx, tx, c.OrgID, t.First)
		return err
	})
	if err != nil {
		return store.ThreadLink{}, wrapErr("create thread", err)
	}
	return link, nil
}

// appendIn appends m inside tx and returns its Seq.
func appendIn(ctx context.Context, tx pgx.Tx, orgID string, m store.Message) (int64, error) {
	var seq int64
	err := tx.QueryRow(ctx, appendMessageSQL, orgID, m.ConversationID, m.TurnID, m.Role, []byte(m.Content),
		m.ToolName, m.ToolCallID, m.Ref, m.IsError, m.Refused, m.CreatedAt, searchText(m)).Scan(&seq)
	return seq, err
}

// lockOwned locks the conversation's row when userID owns it, else
// store.ErrNotFound.
func lockOwned(ctx context.Context, tx pgx.Tx, orgID, id, userID string) error {
	var owner string
	err := tx.QueryRow(ctx, `SELECT user_id FROM conversations WHERE org_id = $1 AND id = $2 FOR NO KEY UPDATE`, orgID, id).Scan(&owner)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && owner != userID {
		return store.ErrNotFound
	}
	return err
}

// PostMessage appends m to userID's conversation when no turn of it is
// running, in one transaction with the conversation's row locked. Seqs
// stay in order whatever runs (message_counters), so a turn claimed just
// after the check reads the post as an earlier message.
func (s *Store) PostMessage(ctx context.Context, orgID, userID string, m store.Message) (int64, error) {
	m, err := store.CheckPost(m)
	if err != nil {
		return 0, fmt.Errorf("postgres: post message: %w", err)
	}
	var seq int64
	err = s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		if err := lockOwned(ctx, tx, orgID, m.ConversationID, userID); err != nil {
			return err
		}
		var running int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM runs WHERE org_id = $1 AND conversation_id = $2`, orgID, m.ConversationID).Scan(&running); err != nil {
			return err
		}
		if running > 0 {
			return store.ErrTurnRunning
		}
		var err error
		if seq, err = appendIn(ctx, tx, orgID, m); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE conversations SET updated_at = $3 WHERE org_id = $1 AND id = $2`, orgID, m.ConversationID, m.CreatedAt)
		return err
	})
	if err != nil {
		return 0, wrapErr("post message", err)
	}
	return seq, nil
}
