package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/quiverhq/quiver/store"
)

// conversation_search holds what FindConversations matches, folded by
// store.FoldText in Go: seq 0 is a conversation's title, every other seq
// the user message of that seq. The store writes it in the statement or
// transaction that writes the title or the message.

// putTitleSearchSQL makes a conversation's title row say $4 (the folded
// title, $3 the title itself): written when the title is not empty,
// deleted when it is. $1 and $2 are the organisation and conversation.
const putTitleSearchSQL = `WITH gone AS (
		DELETE FROM conversation_search
		WHERE org_id = $1 AND conversation_id = $2 AND seq = 0 AND $3 = '')
	INSERT INTO conversation_search (org_id, conversation_id, seq, text)
	SELECT $1, $2, 0, $4 WHERE $3 <> ''
	ON CONFLICT (org_id, conversation_id, seq) DO UPDATE SET text = excluded.text`

// rebuildBatch is how many rows rebuildSearch reads at a time.
const rebuildBatch = 1000

// rebuildSearch writes the search rows of every stored user message and
// title, in tx: the Go part of the migration that adds the table (for
// the messages stored before it), and of an import. Rows are read in
// batches by key, each batch written in one statement.
func rebuildSearch(ctx context.Context, tx pgx.Tx) error {
	const messages = `SELECT org_id, conversation_id, seq, content FROM messages
		WHERE role = 'user' AND (org_id, conversation_id, seq) > ($1, $2, $3)
		ORDER BY org_id, conversation_id, seq LIMIT $4`
	const titles = `SELECT org_id, id, 0::bigint, convert_to(title, 'UTF8') FROM conversations
		WHERE title <> '' AND (org_id, id) > ($1, $2) AND $3::bigint = 0
		ORDER BY org_id, id LIMIT $4`
	for _, q := range []string{messages, titles} {
		if err := rebuildFrom(ctx, tx, q); err != nil {
			return fmt.Errorf("rebuild conversation search: %w", err)
		}
	}
	return nil
}

// searchBatch is rows of conversation_search, column by column.
type searchBatch struct {
	org, conv, text []string
	seq             []int64
}

// rebuildFrom writes the search rows of every row q yields: q takes the
// last key read (org, conversation, seq) and a batch size.
func rebuildFrom(ctx context.Context, tx pgx.Tx, q string) error {
	const insert = `INSERT INTO conversation_search (org_id, conversation_id, seq, text)
		SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[])
		ON CONFLICT (org_id, conversation_id, seq) DO UPDATE SET text = excluded.text`
	var lastOrg, lastConv string
	var lastSeq int64
	for {
		rows, err := tx.Query(ctx, q, lastOrg, lastConv, lastSeq, rebuildBatch)
		if err != nil {
			return err
		}
		var b searchBatch
		var org, conv string
		var seq int64
		var content []byte
		_, err = pgx.ForEachRow(rows, []any{&org, &conv, &seq, &content}, func() error {
			b.org, b.conv, b.seq = append(b.org, org), append(b.conv, conv), append(b.seq, seq)
			b.text = append(b.text, store.FoldText(string(content)))
			return nil
		})
		if err != nil {
			return err
		}
		if len(b.org) == 0 {
			return nil
		}
		if _, err := tx.Exec(ctx, insert, b.org, b.conv, b.seq, b.text); err != nil {
			return err
		}
		if len(b.org) < rebuildBatch {
			return nil
		}
		lastOrg, lastConv, lastSeq = org, conv, seq
	}
}
