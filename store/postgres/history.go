package postgres

import (
	"context"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/quiverhq/quiver/store"
)

// SearchHistory returns the person's conversations with a message of
// theirs holding every word, each with its latest such message. The
// words are matched with LIKE on conversation_search (folded, COLLATE
// "C": byte for byte, as SQLite compares; one row per user message, seq
// 0, the title, left out) of each of the person's conversations, read in
// the conversations_by_user index's order, and the message is read back
// with its role checked again: a row that is no user message never
// answers.
func (s *Store) SearchHistory(ctx context.Context, q store.HistoryQuery) ([]store.HistoryHit, error) {
	if len(q.Words) == 0 {
		return nil, nil
	}
	query, args := searchHistorySQL(q)
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, wrapErr("search history", err)
	}
	var out []store.HistoryHit
	var h store.HistoryHit
	var content []byte
	_, err = pgx.ForEachRow(rows, []any{&h.ConversationID, &h.Title, &h.Seq, &content, &h.CreatedAt}, func() error {
		h.Content, h.CreatedAt = string(content), utc(h.CreatedAt)
		out = append(out, h)
		return nil
	})
	if err != nil {
		return nil, wrapErr("search history", err)
	}
	return out, nil
}

// searchHistorySQL is SearchHistory's statement and arguments: the
// person's conversations in the order of the conversations_by_user
// index, each joined to its latest matching message, so that the scan
// stops once Limit conversations matched.
func searchHistorySQL(q store.HistoryQuery) (string, []any) {
	var b strings.Builder
	args := []any{q.OrgID, q.UserID, q.Exclude}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	b.WriteString(`SELECT c.id, c.title, m.seq, m.content, m.created_at FROM conversations c
		JOIN messages m ON m.org_id = c.org_id AND m.conversation_id = c.id AND m.role = 'user' AND m.seq = (
			SELECT MAX(s.seq) FROM conversation_search s
			WHERE s.org_id = c.org_id AND s.conversation_id = c.id AND s.seq > 0`)
	for _, w := range q.Words {
		b.WriteString(` AND s.text LIKE ` + arg(store.LikeContains(store.FoldText(w))) + ` ESCAPE '\'`)
	}
	b.WriteString(`)
		WHERE c.org_id = $1 AND c.user_id = $2 AND c.id <> $3
		ORDER BY c.updated_at DESC, c.id`)
	if q.Limit > 0 {
		b.WriteString(` LIMIT ` + arg(q.Limit))
	}
	return b.String(), args
}
