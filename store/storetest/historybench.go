package storetest

import (
	"fmt"
	"testing"

	"github.com/quiverhq/quiver/store"
)

// BenchmarkHistorySearch measures SearchHistory (search_conversations)
// over BenchmarkConversationSearch's corpus, one user's 1,000
// conversations of 20 messages, as b's sub-benchmarks, each call timed
// on its own with its p50 and p99:
//
//   - Common5: a word in every user message (10,000 match; the latest
//     of each conversation is found before the 5 newest are kept);
//   - TwoWords10: two words, both in most user messages;
//   - Rare: a word in one conversation;
//   - None: a word in none (every user message is read).
func BenchmarkHistorySearch(b *testing.B, s store.Store) {
	f := benchIDs()
	f.Store = s
	org, user := f.id("org"), f.id("user")
	seedSearchCorpus(b, f, org, user)
	for _, tc := range []struct {
		name  string
		query string
		limit int
		want  int
	}{
		{"Common5", "MEETING", 5, 5},
		{"TwoWords10", "budget ledger", 10, 10},
		{"Rare", "kumquat", 5, 1},
		{"None", "xylophone", 5, 0},
	} {
		b.Run(tc.name, func(b *testing.B) {
			q := store.HistoryQuery{OrgID: org, UserID: user, Exclude: "conv-0999", Words: store.HistoryWords(tc.query), Limit: tc.limit}
			timedLoop(b, func(int) error {
				hits, err := s.SearchHistory(b.Context(), q)
				if err == nil && len(hits) != tc.want {
					err = fmt.Errorf("%d hits, want %d", len(hits), tc.want)
				}
				return err
			})
		})
	}
}
