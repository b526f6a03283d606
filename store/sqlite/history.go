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
// per user message; seq 0, the title, left out), reached through the
// conversations_by_user index, and the message is read back with its
// role checked again: a row that is no user message never answers.
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
// latest matching message of each conversation, then the newest of
// those first.
func searchHistorySQL(q store.HistoryQuery) (string, []any) {
	var b strings.Builder
	b.WriteString(`SELECT h.id, c.title, m.seq, m.content, m.created_at FROM (
		SELECT c.id AS id, MAX(s.seq) AS seq FROM conversations c
		JOIN conversation_search s ON s.org_id = c.org_id AND s.conversation_id = c.id AND s.seq > 0
		JOIN messages m ON m.org_id = s.org_id AND m.conversation_id = s.conversation_id AND m.seq = s.seq AND m.role = 'user'
		WHERE c.org_id = ? AND c.user_id = ? AND c.id <> ?`)
	args := []any{q.OrgID, q.UserID, q.Exclude}
	for _, w := range q.Words {
		b.WriteString(` AND s.text LIKE ? ESCAPE '\'`)
		args = append(args, store.LikeContains(store.FoldText(w)))
	}
	b.WriteString(` GROUP BY c.id) h
		JOIN conversations c ON c.org_id = ? AND c.id = h.id
		JOIN messages m ON m.org_id = c.org_id AND m.conversation_id = h.id AND m.seq = h.seq
		ORDER BY m.created_at DESC, h.id LIMIT ?`)
	limit := q.Limit
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	return b.String(), append(args, q.OrgID, limit)
}
