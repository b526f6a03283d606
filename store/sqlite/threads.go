package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/quiverhq/quiver/store"
)

// ListMessageMarks reads the conversation's mark rows and groups them
// (store.GroupMarks), in one read transaction so the rows agree.
func (s *Store) ListMessageMarks(ctx context.Context, orgID, conversationID string) ([]store.MessageMark, error) {
	tx, err := s.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("sqlite: list message marks: %w", err)
	}
	defer tx.Rollback()
	var rows store.MarkRows
	err = each(ctx, tx, func(sc func(...any) error) error {
		r := store.Reaction{OrgID: orgID, ConversationID: conversationID}
		var at string
		if err := sc(&r.Seq, &r.Emoji, &r.Actor, &at); err != nil {
			return err
		}
		r.CreatedAt, err = decodeTime(at)
		rows.Reactions = append(rows.Reactions, r)
		return err
	}, `SELECT seq, emoji, actor, created_at FROM message_reactions WHERE org_id = ? AND conversation_id = ?`, orgID, conversationID)
	if err == nil {
		err = each(ctx, tx, func(sc func(...any) error) error {
			p := store.Pin{OrgID: orgID, ConversationID: conversationID}
			var at string
			if err := sc(&p.Seq, &p.PinnedBy, &at); err != nil {
				return err
			}
			p.PinnedAt, err = decodeTime(at)
			rows.Pins = append(rows.Pins, p)
			return err
		}, `SELECT seq, pinned_by, pinned_at FROM message_pins WHERE org_id = ? AND conversation_id = ?`, orgID, conversationID)
	}
	if err == nil {
		err = each(ctx, tx, func(sc func(...any) error) error {
			var e store.EditMark
			var edited, deleted sql.NullString
			if err := sc(&e.Seq, &edited, &deleted); err != nil {
				return err
			}
			var err1, err2 error
			e.EditedAt, err1 = decodeOptionalTime(edited)
			e.DeletedAt, err2 = decodeOptionalTime(deleted)
			rows.Edits = append(rows.Edits, e)
			return errors.Join(err1, err2)
		}, `SELECT seq, edited_at, deleted_at FROM message_marks WHERE org_id = ? AND conversation_id = ?`, orgID, conversationID)
	}
	if err == nil {
		rows.Threads, err = listThreads(ctx, tx, orgID, conversationID)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: list message marks: %w", err)
	}
	return store.GroupMarks(rows), nil
}

// each runs q and calls fn with a scan of each row.
func each(ctx context.Context, tx *sql.Tx, fn func(scan func(...any) error) error, q string, args ...any) error {
	rs, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rs.Close()
	for rs.Next() {
		if err := fn(rs.Scan); err != nil {
			return err
		}
	}
	return rs.Err()
}

// listThreads returns the threads started in parentID, oldest first.
func listThreads(ctx context.Context, tx *sql.Tx, orgID, parentID string) ([]store.ThreadLink, error) {
	var out []store.ThreadLink
	err := each(ctx, tx, func(sc func(...any) error) error {
		t := store.ThreadLink{OrgID: orgID, ParentID: parentID}
		var at string
		if err := sc(&t.ConversationID, &t.ParentSeq, &at); err != nil {
			return err
		}
		var err error
		t.CreatedAt, err = decodeTime(at)
		out = append(out, t)
		return err
	}, `SELECT conversation_id, parent_seq, created_at FROM conversation_threads
		WHERE org_id = ? AND parent_id = ? ORDER BY created_at, conversation_id`, orgID, parentID)
	return out, err
}

// ListThreads returns the threads started in the conversation.
func (s *Store) ListThreads(ctx context.Context, orgID, parentID string) ([]store.ThreadLink, error) {
	tx, err := s.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("sqlite: list threads: %w", err)
	}
	defer tx.Rollback()
	out, err := listThreads(ctx, tx, orgID, parentID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list threads: %w", err)
	}
	return out, nil
}

// GetThread returns the conversation's link to its parent.
func (s *Store) GetThread(ctx context.Context, orgID, conversationID string) (store.ThreadLink, error) {
	t := store.ThreadLink{OrgID: orgID, ConversationID: conversationID}
	var at string
	err := s.reader.QueryRowContext(ctx, `SELECT parent_id, parent_seq, created_at FROM conversation_threads
		WHERE org_id = ? AND conversation_id = ?`, orgID, conversationID).Scan(&t.ParentID, &t.ParentSeq, &at)
	if errors.Is(err, sql.ErrNoRows) {
		err = store.ErrNotFound
	}
	if err == nil {
		t.CreatedAt, err = decodeTime(at)
	}
	if err != nil {
		return store.ThreadLink{}, fmt.Errorf("sqlite: get thread: %w", err)
	}
	return t, nil
}

// CreateThread writes the thread's conversation, link and first message
// in one write transaction, after checking the parent, the message it
// starts from and the cap.
func (s *Store) CreateThread(ctx context.Context, t store.NewThread) (store.ThreadLink, error) {
	link, err := store.CheckNewThread(t)
	if err != nil {
		return store.ThreadLink{}, fmt.Errorf("sqlite: create thread: %w", err)
	}
	c := t.Conversation
	t.First, _ = store.CheckPost(t.First)
	err = s.inWriteTx(ctx, func(tx *sql.Tx) error {
		if err := ownedBy(ctx, tx, c.OrgID, t.ParentID, c.UserID); err != nil {
			return err
		}
		var taken int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM conversations WHERE org_id = ? AND id = ?`, c.OrgID, c.ID).Scan(&taken); err != nil {
			return err
		}
		if taken > 0 {
			return store.ErrExists
		}
		var all int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM conversation_threads WHERE org_id = ? AND parent_id = ?`, c.OrgID, t.ParentID).Scan(&all); err != nil {
			return err
		}
		if all >= store.MaxThreadsPerConversation {
			return fmt.Errorf("%w: a conversation starts at most %d threads", store.ErrMarkLimit, store.MaxThreadsPerConversation)
		}
		if t.ParentSeq > 0 {
			if _, deleted, err := visibleMessage(ctx, tx, c.OrgID, t.ParentID, t.ParentSeq); err != nil || deleted {
				return errors.Join(err, notFoundIf(deleted))
			}
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM conversation_threads WHERE org_id = ? AND parent_id = ? AND parent_seq = ?`,
				c.OrgID, t.ParentID, t.ParentSeq).Scan(&n); err != nil {
				return err
			}
			if n >= store.MaxThreadsPerMessage {
				return fmt.Errorf("%w: a message starts at most %d thread", store.ErrMarkLimit, store.MaxThreadsPerMessage)
			}
		}
		if _, err := claimConversation(ctx, tx, c); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO conversation_threads (org_id, conversation_id, parent_id, parent_seq, created_at)
			VALUES (?, ?, ?, ?, ?)`, c.OrgID, c.ID, t.ParentID, t.ParentSeq, encodeTime(link.CreatedAt)); err != nil {
			return err
		}
		_, err := appendMessage(ctx, tx, c.OrgID, t.First)
		return err
	})
	if err != nil {
		return store.ThreadLink{}, fmt.Errorf("sqlite: create thread: %w", err)
	}
	return link, nil
}

// ownedBy is nil when userID owns the conversation, else store.ErrNotFound.
func ownedBy(ctx context.Context, tx *sql.Tx, orgID, id, userID string) error {
	var owner string
	err := tx.QueryRowContext(ctx, `SELECT user_id FROM conversations WHERE org_id = ? AND id = ?`, orgID, id).Scan(&owner)
	if errors.Is(err, sql.ErrNoRows) || err == nil && owner != userID {
		return store.ErrNotFound
	}
	return err
}

// PostMessage appends m to userID's conversation when no turn of it is
// running, in one write transaction.
func (s *Store) PostMessage(ctx context.Context, orgID, userID string, m store.Message) (int64, error) {
	m, err := store.CheckPost(m)
	if err != nil {
		return 0, fmt.Errorf("sqlite: post message: %w", err)
	}
	var seq int64
	err = s.inWriteTx(ctx, func(tx *sql.Tx) error {
		if err := ownedBy(ctx, tx, orgID, m.ConversationID, userID); err != nil {
			return err
		}
		var running int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM runs WHERE org_id = ? AND conversation_id = ?`, orgID, m.ConversationID).Scan(&running); err != nil {
			return err
		}
		if running > 0 {
			return store.ErrTurnRunning
		}
		var err error
		seq, err = appendMessage(ctx, tx, orgID, m)
		if err == nil {
			_, err = tx.ExecContext(ctx, `UPDATE conversations SET updated_at = ? WHERE org_id = ? AND id = ?`,
				encodeTime(m.CreatedAt), orgID, m.ConversationID)
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("sqlite: post message: %w", err)
	}
	return seq, nil
}
