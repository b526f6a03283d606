package store

import (
	"context"
	"slices"
	"strings"
	"time"
)

// MaxHistoryWords bounds the words of a history search (HistoryQuery):
// each one is a LIKE condition, so HistoryWords' callers refuse a query
// with more.
const MaxHistoryWords = 8

// HistoryQuery selects what SearchHistory matches: the messages one
// person wrote (RoleUser only: never assistant text, tool calls, tool
// results, context or thought-log entries, nor titles) in their own
// conversations of one organisation.
type HistoryQuery struct {
	OrgID, UserID string
	// Exclude is a conversation left out (the turn's own); "" leaves out
	// none.
	Exclude string
	// Words must each occur in a message, literally, for it to match,
	// compared folded (FoldText) as FindConversations compares its Text.
	// HistoryWords makes them from a query. No word matches nothing; the
	// caller bounds them (MaxHistoryWords).
	Words []string
	// Limit bounds the answer; <= 0 means no bound.
	Limit int
}

// HistoryHit is one conversation a history search found, with the
// latest of its messages that matched.
type HistoryHit struct {
	ConversationID string
	Title          string
	// Seq, Content and CreatedAt are the matching message's.
	Seq       int64
	Content   string
	CreatedAt time.Time
}

// History searches what people wrote in their earlier conversations
// (search_conversations).
type History interface {
	// SearchHistory returns, for each conversation q selects that has a
	// message matching every word, the latest such message: at most
	// q.Limit hits, the most recently updated conversation first and by
	// ID (byte order) among equals, as FindConversations orders them. The match is a literal, folded substring scan
	// of the person's own messages (the rows conversation search keeps,
	// which every write, delete and import maintains), confined by index
	// to one person's conversations in one organisation; a deleted
	// conversation matches nothing.
	SearchHistory(ctx context.Context, q HistoryQuery) ([]HistoryHit, error)
}

// HistoryWords are the distinct words of query, folded (FoldText), in
// the order they first appear: what HistoryQuery.Words takes.
func HistoryWords(query string) []string {
	var out []string
	for _, w := range strings.Fields(FoldText(query)) {
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}
