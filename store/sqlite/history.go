package sqlite

import (
	"context"
	"fmt"
	"strings"

	"github.com/quiverhq/quiver/store"
)

// SearchHistory returns the person's conversations with a message of
// theirs holding every word, each with its latest such message. The
// words are matched with LIKE on conversation_search (folded, one row
// per user message; seq 0, the title, left out) of each of the person's
// conversations, read in the conversations_by_user index's order, and
// the message is read back with its role checked again: a row that is
// no user message never answers.
func (s *Store) SearchHistory(ctx context.Context, q store.HistoryQuery) ([]store.HistoryHit, error) {
	if len(q.Words) == 0 {
		return nil, nil
	}
	query, args := searchHistorySQL(q)
	rows, err := s.reader.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: search history: %w", err)
	}
	defer rows.Close()
	var out []store.HistoryHit
	for rows.Next() {
		var h store.HistoryHit
		var content []byte // content may be stored as text or as a blob
		var createdAt string
		if err := rows.Scan(&h.ConversationID, &h.Title, &h.Seq, &content, &createdAt); err != nil {
			return nil, fmt.Errorf("sqlite: search history: %w", err)
		}
		h.Content = string(content)
		if h.CreatedAt, err = decodeTime(createdAt); err != nil {
			return nil, fmt.Errorf("sqlite: search history: %w", err)
		}
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: search history: %w", err)
	}
	return out, nil
}

// searchHistorySQL is SearchHistory's statement and arguments: the
// person's conversations in the order of the conversations_by_user
// index, each joined to its latest matching message, so that the scan
// stops once Limit conversations matched.
func searchHistorySQL(q store.HistoryQuery) (string, []any) {
	var b strings.Builder
	b.WriteString(`SELECT c.id, c.title, m.seq, m.content, m.created_at FROM conversations c
		JOIN messages m ON m.org_id = c.org_id AND m.conversation_id = c.id AND m.role = 'user' AND m.seq = (
			SELECT MAX(s.seq) FROM conversation_search s
			WHERE s.org_id = c.org_id AND s.conversation_id = c.id AND s.seq > 0`)
	var args []any
	for _, w := range q.Words {
		b.WriteString(` AND s.text LIKE ? ESCAPE '\'`)
		args = append(args, store.LikeContains(store.FoldText(w)))
	}
	b.WriteString(`)
		WHERE c.org_id = ? AND c.user_id = ? AND c.id <> ?
		ORDER BY c.updated_at DESC, c.id LIMIT ?`)
	limit := q.Limit
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	return b.String(), append(args, q.OrgID, q.UserID, q.Exclude, limit)
}
