package storetest

import (
	"testing"

	"github.com/quiverhq/quiver/store"
)

// historyCases checks the History repository (search_conversations).
func historyCases() []suiteCase {
	return []suiteCase{
		{"Hit", testHistoryHit},
		{"Scoped", testHistoryScoped},
		{"UserTextOnly", testHistoryUserTextOnly},
		{"ExcludesCurrent", testHistoryExcludesCurrent},
		{"OrderAndLimit", testHistoryOrderAndLimit},
		{"EveryWordInOneMessage", testHistoryEveryWordInOneMessage},
		{"Folded", testHistoryFolded},
		{"Literal", testHistoryLiteral},
		{"DeletedConversation", testHistoryDeletedConversation},
	}
}

// historyConversation stores a conversation of user in org, titled, last
// updated at minute.
func (f *fixture) historyConversation(t *testing.T, org, id, user, title string, minute int) store.Conversation {
	t.Helper()
	c := f.newConversation(org, id, user)
	c.Title, c.UpdatedAt = title, at(minute)
	f.putConversation(t, c)
	return c
}

// wrote appends one message of role to c, written at minute, and returns
// its Seq, failing the test on error.
func (f *fixture) wrote(t *testing.T, c store.Conversation, role, content string, minute int) int64 {
	t.Helper()
	seq, err := f.AppendMessage(t.Context(), c.OrgID, store.Message{ConversationID: c.ID, TurnID: f.id("turn"), Role: role, Content: content, CreatedAt: at(minute)})
	if err != nil {
		t.Fatalf("AppendMessage (%s): %v", role, err)
	}
	return seq
}

// history returns SearchHistory's answer for user in org, failing the
// test on error.
func (f *fixture) history(t *testing.T, org, user, exclude, query string, limit int) []store.HistoryHit {
	t.Helper()
	q := store.HistoryQuery{OrgID: f.id(org), UserID: f.id(user), Words: store.HistoryWords(query), Limit: limit}
	if exclude != "" {
		q.Exclude = f.id(exclude)
	}
	hits, err := f.SearchHistory(t.Context(), q)
	if err != nil {
		t.Fatalf("SearchHistory(%q): %v", query, err)
	}
	return hits
}

// historyIDs are the conversations of hits, in order.
func historyIDs(hits []store.HistoryHit) []string {
	ids := []string{}
	for _, h := range hits {
		ids = append(ids, h.ConversationID)
	}
	return ids
}

// testHistoryHit: a hit carries the conversation's ID and title and the
// matching message's Seq, text as written and time (in UTC).
func testHistoryHit(t *testing.T, f *fixture) {
	c := f.historyConversation(t, "org", "conv", "user", "Trip planning", 30)
	f.wrote(t, c, "user", "hello", 1)
	seq := f.wrote(t, c, "user", "Book the Hotel in Lisbon, please", 2)
	f.wrote(t, c, "assistant", "done", 3)
	hits := f.history(t, "org", "user", "", "hotel", 0)
	want := []store.HistoryHit{{ConversationID: c.ID, Title: "Trip planning", Seq: seq, Content: "Book the Hotel in Lisbon, please", CreatedAt: at(2)}}
	if d := diff(want, hits); d != "" {
		t.Errorf("hits (-want +got):\n%s", d)
	}
	for _, h := range hits {
		wantUTC(t, "CreatedAt", h.CreatedAt)
	}
	if hits := f.history(t, "org", "user", "", "", 0); len(hits) != 0 {
		t.Errorf("no words matched %v", historyIDs(hits))
	}
}

// testHistoryScoped: other people's conversations, in the organisation
// or out of it, and the person's own in another organisation never
// match.
func testHistoryScoped(t *testing.T, f *fixture) {
	for _, o := range []struct{ org, user string }{{"org", "user"}, {"org", "other"}, {"other-org", "user"}, {"other-org", "other"}} {
		c := f.historyConversation(t, o.org, "conv-"+o.org+"-"+o.user, o.user, "", 10)
		f.wrote(t, c, "user", "the secret plan", 1)
	}
	for _, tc := range []struct{ org, user, want string }{
		{"org", "user", "conv-org-user"}, {"org", "other", "conv-org-other"}, {"other-org", "user", "conv-other-org-user"},
	} {
		if d := diff([]string{f.id(tc.want)}, historyIDs(f.history(t, tc.org, tc.user, "", "secret", 0))); d != "" {
			t.Errorf("%s of %s (-want +got):\n%s", tc.user, tc.org, d)
		}
	}
	if hits := f.history(t, "org", "nobody", "", "secret", 0); len(hits) != 0 {
		t.Errorf("a person with no conversation found %v", historyIDs(hits))
	}
}

// testHistoryUserTextOnly: assistant text, tool calls and results,
// context and thought-log entries and titles never match; the person's
// own words do.
func testHistoryUserTextOnly(t *testing.T, f *fixture) {
	c := f.historyConversation(t, "org", "conv", "user", "titleword here", 10)
	for i, role := range []string{"assistant", "tool_call", "tool", "context", store.RoleThought} {
		f.wrote(t, c, role, "hidden "+role+" kumquat", i+1)
	}
	if _, err := f.AppendMessages(t.Context(), c.OrgID, []store.Message{
		{ConversationID: c.ID, Role: "assistant", Content: "batched kumquat reply", CreatedAt: at(8)},
		{ConversationID: c.ID, Role: "user", Content: "my own ledger", CreatedAt: at(9)},
	}); err != nil {
		t.Fatalf("AppendMessages: %v", err)
	}
	for _, q := range []string{"kumquat", "hidden", "titleword", "batched"} {
		if hits := f.history(t, "org", "user", "", q, 0); len(hits) != 0 {
			t.Errorf("%q matched %+v", q, hits)
		}
	}
	if d := diff([]string{c.ID}, historyIDs(f.history(t, "org", "user", "", "ledger", 0))); d != "" {
		t.Errorf("the person's words (-want +got):\n%s", d)
	}
}

// testHistoryExcludesCurrent: the excluded conversation never matches,
// the others still do.
func testHistoryExcludesCurrent(t *testing.T, f *fixture) {
	cur := f.historyConversation(t, "org", "current", "user", "", 20)
	f.wrote(t, cur, "user", "remind me about the invoice", 5)
	old := f.historyConversation(t, "org", "old", "user", "", 10)
	f.wrote(t, old, "user", "the invoice from March", 1)
	if d := diff([]string{old.ID}, historyIDs(f.history(t, "org", "user", "current", "invoice", 0))); d != "" {
		t.Errorf("excluding the current one (-want +got):\n%s", d)
	}
	if d := diff([]string{cur.ID, old.ID}, historyIDs(f.history(t, "org", "user", "", "invoice", 0))); d != "" {
		t.Errorf("excluding none (-want +got):\n%s", d)
	}
}

// testHistoryOrderAndLimit: one hit per conversation, its latest
// matching message; the most recently updated conversation first (not
// the newest message), ties by conversation ID; at most Limit.
func testHistoryOrderAndLimit(t *testing.T, f *fixture) {
	d := f.historyConversation(t, "org", "d", "user", "", 10)
	f.wrote(t, d, "user", "budget d", 50)
	c := f.historyConversation(t, "org", "c", "user", "", 40)
	f.wrote(t, c, "user", "budget c", 30)
	b := f.historyConversation(t, "org", "b", "user", "", 40)
	f.wrote(t, b, "user", "budget b", 30)
	a := f.historyConversation(t, "org", "a", "user", "", 50)
	f.wrote(t, a, "user", "budget draft one", 1)
	latest := f.wrote(t, a, "user", "budget draft two", 2)
	f.wrote(t, a, "user", "unrelated", 3)
	hits := f.history(t, "org", "user", "", "budget", 0)
	if diffs := diff([]string{a.ID, b.ID, c.ID, d.ID}, historyIDs(hits)); diffs != "" {
		t.Errorf("order (-want +got):\n%s", diffs)
	}
	if len(hits) > 0 && (hits[0].Seq != latest || hits[0].Content != "budget draft two") {
		t.Errorf("a's hit is seq %d %q, want its latest match, seq %d", hits[0].Seq, hits[0].Content, latest)
	}
	if diffs := diff([]string{a.ID, b.ID}, historyIDs(f.history(t, "org", "user", "", "budget", 2))); diffs != "" {
		t.Errorf("limit 2 (-want +got):\n%s", diffs)
	}
}

// testHistoryEveryWordInOneMessage: every word must be in one message,
// in any order; words split over two messages do not match.
func testHistoryEveryWordInOneMessage(t *testing.T, f *fixture) {
	both := f.historyConversation(t, "org", "both", "user", "", 20)
	f.wrote(t, both, "user", "the meeting about the quarterly budget", 1)
	split := f.historyConversation(t, "org", "split", "user", "", 10)
	f.wrote(t, split, "user", "a meeting", 1)
	f.wrote(t, split, "user", "a budget", 2)
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"budget meeting", []string{both.ID}},
		{"MEETING   quarterly budget meeting", []string{both.ID}},
		{"meeting", []string{both.ID, split.ID}},
		{"budget tomorrow", nil},
	} {
		if d := diff(tc.want, historyIDs(f.history(t, "org", "user", "", tc.query, 0))); d != "" {
			t.Errorf("%q (-want +got):\n%s", tc.query, d)
		}
	}
}

// testHistoryFolded: case is ignored in every script, Vietnamese marks
// included, and a letter typed as a base and combining marks matches
// the same letter typed as one code point; the marks themselves count.
func testHistoryFolded(t *testing.T, f *fixture) {
	vi := f.historyConversation(t, "org", "vi", "user", "", 20)
	f.wrote(t, vi, "user", "Chuyến đi ĐÀ NẴNG tháng Bảy", 2)
	nfd := f.historyConversation(t, "org", "nfd", "user", "", 10)
	f.wrote(t, nfd, "user", "Ghé Hue\u0302\u0301 nữa", 1) // "Huế" as a base and two marks
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"đà nẵng", []string{vi.ID}},
		{"Đà Nẵng", []string{vi.ID}},
		{"CHUYẾN", []string{vi.ID}},
		{"huế", []string{nfd.ID}},
		{"HUẾ", []string{nfd.ID}},
		{"da nang", nil},
	} {
		if d := diff(tc.want, historyIDs(f.history(t, "org", "user", "", tc.query, 0))); d != "" {
			t.Errorf("%q (-want +got):\n%s", tc.query, d)
		}
	}
}

// testHistoryLiteral: LIKE's wildcards and escape in a word match
// themselves.
func testHistoryLiteral(t *testing.T, f *fixture) {
	pct := f.historyConversation(t, "org", "pct", "user", "", 20)
	f.wrote(t, pct, "user", "growth of 50% this year", 1)
	plain := f.historyConversation(t, "org", "plain", "user", "", 10)
	f.wrote(t, plain, "user", "growth of 500 this year, my_notes", 1)
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"50%", []string{pct.ID}},
		{"my_n", []string{plain.ID}},
		{`\`, nil},
		{"%", []string{pct.ID}},
	} {
		if d := diff(tc.want, historyIDs(f.history(t, "org", "user", "", tc.query, 0))); d != "" {
			t.Errorf("%q (-want +got):\n%s", tc.query, d)
		}
	}
}

// testHistoryDeletedConversation: a deleted conversation matches
// nothing, as it is gone from every list.
func testHistoryDeletedConversation(t *testing.T, f *fixture) {
	gone := f.historyConversation(t, "org", "gone", "user", "", 20)
	f.wrote(t, gone, "user", "the passport number", 1)
	kept := f.historyConversation(t, "org", "kept", "user", "", 10)
	f.wrote(t, kept, "user", "my passport photo", 1)
	if err := f.DeleteConversation(t.Context(), gone.OrgID, gone.UserID, gone.ID); err != nil {
		t.Fatalf("DeleteConversation: %v", err)
	}
	if d := diff([]string{kept.ID}, historyIDs(f.history(t, "org", "user", "", "passport", 0))); d != "" {
		t.Errorf("after deleting (-want +got):\n%s", d)
	}
}
