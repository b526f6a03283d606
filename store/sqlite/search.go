package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/quiverhq/quiver/store"
)

// conversation_search holds what FindConversations matches, folded by
// store.FoldText in Go: seq 0 is a conversation's title, every other seq
// the user message of that seq. The store writes it in the transaction
// that writes the title or the message.

// putTitleSearch makes the title row of a conversation say title: written
// when it has one, deleted when it is empty.
func putTitleSearch(ctx context.Context, db execer, orgID, id, title string) error {
	if title == "" {
		_, err := db.ExecContext(ctx, `DELETE FROM conversation_search
			WHERE org_id = ? AND conversation_id = ? AND seq = 0`, orgID, id)
		return err
	}
	return putSearch(ctx, db, orgID, id, 0, title)
}

// putSearch writes the search row of one text (a title at seq 0, or the
// user message of seq), folded.
func putSearch(ctx context.Context, db execer, orgID, conversationID string, seq int64, text string) error {
	const q = `INSERT INTO conversation_search (org_id, conversation_id, seq, text)
		VALUES (?, ?, ?, ?)
		ON CONFLICT (org_id, conversation_id, seq) DO UPDATE SET text = excluded.text`
	_, err := db.ExecContext(ctx, q, orgID, conversationID, seq, store.FoldText(text))
	return err
}

// rebuildBatch is how many rows rebuildSearch reads at a time.
const rebuildBatch = 500

// rebuildSearch writes the search rows of every stored user message and
// title, in tx: the Go part of the migration that adds the table (for
// the messages stored before it), and of an import. Rows are read in
// batches by key, each batch closed before its rows are written.
func rebuildSearch(ctx context.Context, tx *sql.Tx) error {
	const messages = `SELECT org_id, conversation_id, seq, content FROM messages
		WHERE role = 'user' AND (org_id, conversation_id, seq) > (?, ?, ?)
		ORDER BY org_id, conversation_id, seq LIMIT ?`
	const titles = `SELECT org_id, id, 0, title FROM conversations
		WHERE title <> '' AND (org_id, id, 0) > (?, ?, ?)
		ORDER BY org_id, id LIMIT ?`
	for _, q := range []string{messages, titles} {
		if err := rebuildFrom(ctx, tx, q); err != nil {
			return fmt.Errorf("rebuild conversation search: %w", err)
		}
	}
	return nil
}

// searchSource is one row rebuildSearch folds.
type searchSource struct {
	org, conv string
	seq       int64
	text      string
}

// rebuildFrom writes the search rows of every row q yields: q takes the
// last key read (org, conversation, seq) and a batch size.
func rebuildFrom(ctx context.Context, tx *sql.Tx, q string) error {
	var last searchSource
	for {
		batch, err := readSearchBatch(ctx, tx, q, last)
		if err != nil {
			return err
		}
		for _, r := range batch {
			if err := putSearch(ctx, tx, r.org, r.conv, r.seq, r.text); err != nil {
				return err
			}
		}
		if len(batch) < rebuildBatch {
			return nil
		}
		last = batch[len(batch)-1]
	}
}

// readSearchBatch reads the batch of q after last.
func readSearchBatch(ctx context.Context, tx *sql.Tx, q string, last searchSource) ([]searchSource, error) {
	rows, err := tx.QueryContext(ctx, q, last.org, last.conv, last.seq, rebuildBatch)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []searchSource
	for rows.Next() {
		var r searchSource
		var text []byte // content may be stored as text or as a blob
		if err := rows.Scan(&r.org, &r.conv, &r.seq, &text); err != nil {
			return nil, err
		}
		r.text = string(text)
		out = append(out, r)
	}
	return out, rows.Err()
}
