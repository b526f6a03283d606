package storetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/quiverhq/quiver/store"
)

// The corpus of BenchmarkConversationSearch: searchConversations
// conversations of searchMessages messages each, alternately the
// person's (about 150 bytes) and the assistant's (about 600).
const (
	searchConversations = 1000
	searchMessages      = 20
)

// searchWords make the corpus's text; "meeting" is in every user
// message, "kumquat" in one conversation's, "xylophone" nowhere.
var searchWords = strings.Fields("budget report quarter invoice flights hotel Hà Nội Đà Nẵng schedule " +
	"review draft customer ledger contract shipment warehouse forecast payroll audit")

// BenchmarkConversationSearch measures FindConversations over one user's
// 1,000 conversations of 20 messages (the corpus above), as b's
// sub-benchmarks, each call timed on its own with its p50 and p99:
//
//   - List50: the first page of 50, no text (the sidebar);
//   - List50Next: the page after it, by cursor;
//   - Common50: a word in every conversation (the first 50 match);
//   - Rare: a word in one conversation (every conversation is looked at);
//   - None: a word in none (the worst case: every user message is read);
//   - Title: a word of some titles.
func BenchmarkConversationSearch(b *testing.B, s store.Store) {
	f := benchIDs()
	f.Store = s
	org, user := f.id("org"), f.id("user")
	seedSearchCorpus(b, f, org, user)
	first, err := s.FindConversations(b.Context(), store.ConversationQuery{OrgID: org, UserID: user, Limit: 50})
	if err != nil || len(first) != 50 {
		b.Fatalf("first page: %d, %v", len(first), err)
	}
	last := first[len(first)-1]
	for _, tc := range []struct {
		name string
		q    store.ConversationQuery
		want int
	}{
		{"List50", store.ConversationQuery{Limit: 50}, 50},
		{"List50Next", store.ConversationQuery{Limit: 50, After: store.ConversationCursor{UpdatedAt: last.UpdatedAt, ID: last.ID}}, 50},
		{"Common50", store.ConversationQuery{Text: "MEETING", Limit: 50}, 50},
		{"Rare", store.ConversationQuery{Text: "kumquat", Limit: 50}, 1},
		{"None", store.ConversationQuery{Text: "xylophone", Limit: 50}, 0},
		{"Title", store.ConversationQuery{Text: "trip 7", Limit: 50}, 50},
	} {
		b.Run(tc.name, func(b *testing.B) {
			q := tc.q
			q.OrgID, q.UserID = org, user
			timedLoop(b, func(int) error {
				cs, err := s.FindConversations(b.Context(), q)
				if err == nil && len(cs) != tc.want {
					err = fmt.Errorf("%d conversations, want %d", len(cs), tc.want)
				}
				return err
			})
		})
	}
}

// seedSearchCorpus writes the corpus, one batch per conversation.
func seedSearchCorpus(b *testing.B, f *fixture, org, user string) {
	for i := range searchConversations {
		c := store.Conversation{ID: fmt.Sprintf("conv-%04d", i), OrgID: org, UserID: user, Agent: "assistant",
			Title: fmt.Sprintf("Trip %d to %s", i, searchWords[i%len(searchWords)]), CreatedAt: benchStart,
			UpdatedAt: benchStart.Add(time.Duration(i) * time.Second)}
		if err := f.PutConversation(b.Context(), c); err != nil {
			b.Fatal(err)
		}
		ms := make([]store.Message, searchMessages)
		for j := range ms {
			ms[j] = store.Message{ConversationID: c.ID, TurnID: "turn", Role: "assistant", Content: searchText(i, j, 600), CreatedAt: benchStart}
			if j%2 == 0 {
				ms[j].Role, ms[j].Content = "user", "Before the meeting, "+searchText(i, j, 130)
			}
		}
		if i == searchConversations/2 {
			ms[0].Content += " and a kumquat"
		}
		if _, err := f.AppendMessages(b.Context(), org, ms); err != nil {
			b.Fatal(err)
		}
	}
}

// searchText is about n bytes of words for message j of conversation i.
func searchText(i, j, n int) string {
	var sb strings.Builder
	for k := 0; sb.Len() < n; k++ {
		sb.WriteString(searchWords[(i*7+j*3+k)%len(searchWords)])
		sb.WriteByte(' ')
	}
	return sb.String()
}
