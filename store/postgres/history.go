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
// 0, the title, left out), reached through the conversations_by_user
// index, and the message is read back with its role checked again: a
// row that is no user message never answers.
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
// latest matching message of each conversation, then the newest of
// those first.
func searchHistorySQL(q store.HistoryQuery) (string, []any) {
	var b strings.Builder
	args := []any{q.OrgID, q.UserID, q.Exclude}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	b.WriteString(`SELECT h.id, c.title, m.seq, m.content, m.created_at FROM (
		SELECT c.id AS id, MAX(s.seq) AS seq FROM conversations c
		JOIN conversation_search s ON s.org_id = c.org_id AND s.conversation_id = c.id AND s.seq > 0
		JOIN messages m ON m.org_id = s.org_id AND m.conversation_id = s.conversation_id AND m.seq = s.seq AND m.role = 'user'
		WHERE c.org_id = $1 AND c.user_id = $2 AND c.id <> $3`)
	for _, w := range q.Words {
		b.WriteString(` AND s.text LIKE ` + arg(store.LikeContains(store.FoldText(w))) + ` ESCAPE '\'`)
	}
	b.WriteString(` GROUP BY c.id) h
		JOIN conversations c ON c.org_id = $1 AND c.id = h.id
		JOIN messages m ON m.org_id = c.org_id AND m.conversation_id = h.id AND m.seq = h.seq
		ORDER BY m.created_at DESC, h.id`)
	if q.Limit > 0 {
		b.WriteString(` LIMIT ` + arg(q.Limit))
	}
	return b.String(), args
}
