package storetest

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/store"
)

// find returns FindConversations' answer as IDs, failing the test on
// error.
func (f *fixture) find(t *testing.T, q store.ConversationQuery) []string {
	t.Helper()
	cs, err := f.FindConversations(t.Context(), q)
	if err != nil {
		t.Fatalf("FindConversations(%+v): %v", q, err)
	}
	ids := []string{}
	for _, c := range cs {
		ids = append(ids, c.ID)
	}
	return ids
}

// say appends one message of role to c, through the path the turns use
// (WriteTurn with a claim), failing the test on error.
func (f *fixture) say(t *testing.T, c store.Conversation, role, content string) {
	t.Helper()
	m := store.Message{ConversationID: c.ID, TurnID: f.id("turn"), Role: role, Content: content, CreatedAt: at(1)}
	claim := c
	if _, err := f.WriteTurn(t.Context(), c.OrgID, store.TurnWrite{Claim: &claim, Messages: []store.Message{m}}); err != nil {
		t.Fatalf("WriteTurn (%s message): %v", role, err)
	}
}

// search is the query of user's conversations in org that contain text.
func (f *fixture) search(org, user, text string) store.ConversationQuery {
	return store.ConversationQuery{OrgID: f.id(org), UserID: f.id(user), Text: text}
}

// testConversationFindHidesEmpty: a conversation with no message is left
// out unless Empty asks for it; one message of any role makes it listed.
func testConversationFindHidesEmpty(t *testing.T, f *fixture) {
	empty := f.newConversation("org", "empty", "user")
	f.putConversation(t, empty)
	used := f.newConversation("org", "used", "user")
	used.UpdatedAt = at(5)
	f.putConversation(t, used)
	if _, err := f.AppendMessage(t.Context(), used.OrgID, store.Message{ConversationID: used.ID, Role: "assistant", Content: "hi", CreatedAt: at(1)}); err != nil {
		t.Fatalf("AppendMessage: %v", err)
	}
	q := store.ConversationQuery{OrgID: used.OrgID, UserID: used.UserID}
	if d := cmp.Diff([]string{used.ID}, f.find(t, q)); d != "" {
		t.Errorf("without Empty (-want +got):\n%s", d)
	}
	q.Empty = true
	if d := cmp.Diff([]string{empty.ID, used.ID}, f.find(t, q)); d != "" {
		t.Errorf("with Empty (-want +got):\n%s", d)
	}
}

// testConversationFindText: the text matches a title or what the person
// wrote, through every way a message is appended, and never assistant
// text, tool calls, tool results, context or thought-log entries.
func testConversationFindText(t *testing.T, f *fixture) {
	titled := f.newConversation("org", "titled", "user")
	titled.Title, titled.UpdatedAt = "Budget for Q3", at(30)
	f.putConversation(t, titled)
	f.say(t, titled, "assistant", "hello")
	written := f.newConversation("org", "written", "user")
	written.Title, written.UpdatedAt = "", at(20)
	f.putConversation(t, written)
	f.say(t, written, "user", "please compare the spreadsheet columns")
	single := f.newConversation("org", "single", "user")
	single.Title, single.UpdatedAt = "", at(10)
	f.putConversation(t, single)
	for i, role := range []string{"assistant", "tool_call", "tool", "context", store.RoleThought, "user"} {
		content := "hidden " + role + " words"
		if role == "user" {
			content = "my own words about the ledger"
		}
		if _, err := f.AppendMessage(t.Context(), single.OrgID, store.Message{ConversationID: single.ID, Role: role, Content: content, CreatedAt: at(i)}); err != nil {
			t.Fatalf("AppendMessage %s: %v", role, err)
		}
	}
	batched := f.newConversation("org", "batched", "user")
	batched.Title, batched.UpdatedAt = "", at(5)
	f.putConversation(t, batched)
	if _, err := f.AppendMessages(t.Context(), batched.OrgID, []store.Message{
		{ConversationID: batched.ID, Role: "assistant", Content: "the ledger is ready", CreatedAt: at(1)},
		{ConversationID: batched.ID, Role: "user", Content: "thanks for the invoice", CreatedAt: at(2)},
	}); err != nil {
		t.Fatalf("AppendMessages: %v", err)
	}
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"budget", []string{titled.ID}},
		{"SPREADSHEET col", []string{written.ID}},
		{"ledger", []string{single.ID}},
		{"invoice", []string{batched.ID}},
		{"hidden", nil},
		{"words", []string{single.ID}},
		{"hello", nil},
		{"e", []string{titled.ID, written.ID, single.ID, batched.ID}},
		{"nothing like it", nil},
	} {
		got := f.find(t, f.search("org", "user", tc.text))
		if d := diff(tc.want, got); d != "" {
			t.Errorf("Text %q (-want +got):\n%s", tc.text, d)
		}
	}
}

// testConversationFindTextFolded: matching ignores case in every script
// and how a letter with marks was typed (one code point, or a base and
// combining marks).
func testConversationFindTextFolded(t *testing.T, f *fixture) {
	c := f.newConversation("org", "conv", "user")
	c.Title = "ĐI ĐÀ NẴNG"
	f.putConversation(t, c)
	f.say(t, c, "user", "Straße nach München, ΣΟΦΊΑ")
	nfd := "Hue\u0302\u0301" // "Huế" typed as a base and two marks
	d := f.newConversation("org", "decomposed", "user")
	d.Title, d.UpdatedAt = "", at(5)
	f.putConversation(t, d)
	f.say(t, d, "user", "Chuyến đi "+nfd)
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"đà nẵng", []string{c.ID}},
		{"đi", []string{c.ID, d.ID}},
		{"MÜNCHEN", []string{c.ID}},
		{"σοφία", []string{c.ID}},
		{"huế", []string{d.ID}},
		{"HUẾ", []string{d.ID}},
		{"da nang", nil}, // marks are letters, not decoration
	} {
		if d := diff(tc.want, f.find(t, f.search("org", "user", tc.text))); d != "" {
			t.Errorf("Text %q (-want +got):\n%s", tc.text, d)
		}
	}
}

// testConversationFindTextLiteral: LIKE's wildcards and escape in the
// text match themselves.
func testConversationFindTextLiteral(t *testing.T, f *fixture) {
	texts := map[string]string{
		"percent":    "growth of 50% this year",
		"underscore": "the file my_notes.txt",
		"backslash":  `path C:\temp\x`,
		"plain":      "growth of 50 this year; myxnotes; C:tempx",
	}
	ids := map[string]string{}
	for name, text := range texts {
		c := f.newConversation("org", name, "user")
		c.Title = ""
		f.putConversation(t, c)
		f.say(t, c, "user", text)
		ids[name] = c.ID
	}
	for _, tc := range []struct{ text, want string }{
		{"50%", "percent"},
		{"my_n", "underscore"},
		{`C:\temp`, "backslash"},
		{`\`, "backslash"},
	} {
		if d := cmp.Diff([]string{ids[tc.want]}, f.find(t, f.search("org", "user", tc.text))); d != "" {
			t.Errorf("Text %q (-want +got):\n%s", tc.text, d)
		}
	}
}

// testConversationFindTextScoped: only the user's own conversations in
// the organisation are searched.
func testConversationFindTextScoped(t *testing.T, f *fixture) {
	for _, owner := range []struct{ org, user string }{{"org", "user"}, {"org", "other"}, {"other-org", "user"}} {
		c := f.newConversation(owner.org, "conv-"+owner.user, owner.user)
		c.Title = "shared secret plan"
		f.putConversation(t, c)
		f.say(t, c, "user", "the secret")
	}
	want := []string{f.id("conv-user")}
	if d := cmp.Diff(want, f.find(t, f.search("org", "user", "secret"))); d != "" {
		t.Errorf("search (-want +got):\n%s", d)
	}
}

// testConversationFindTitleFollowsRename: after a rename the old title
// no longer matches and the new one does; an emptied title matches
// nothing.
func testConversationFindTitleFollowsRename(t *testing.T, f *fixture) {
	c := f.newConversation("org", "conv", "user")
	c.Title = "Old name"
	f.putConversation(t, c)
	f.say(t, c, "assistant", "x")
	newTitle, none := "Fresh label", ""
	check := func(step string, want map[string]bool) {
		t.Helper()
		for text, found := range want {
			got := len(f.find(t, f.search("org", "user", text))) == 1
			if got != found {
				t.Errorf("%s: Text %q found %v, want %v", step, text, got, found)
			}
		}
	}
	check("before", map[string]bool{"old": true, "fresh": false})
	f.update(t, c, store.ConversationUpdate{Title: &newTitle})
	check("renamed", map[string]bool{"old": false, "fresh": true})
	f.update(t, c, store.ConversationUpdate{Title: &none})
	check("emptied", map[string]bool{"old": false, "fresh": false})
	c.Title = "Put again"
	f.putConversation(t, c)
	check("put", map[string]bool{"again": true, "fresh": false})
}

// testConversationFindPages: pages that continue after the last
// conversation of the page before go through every conversation once, in
// order, ties on UpdatedAt broken by ID.
func testConversationFindPages(t *testing.T, f *fixture) {
	var want []string
	for i := range 7 {
		c := f.newConversation("org", fmt.Sprintf("conv-%d", i), "user")
		c.UpdatedAt = at(30 - i/2) // pairs share an instant
		f.putConversation(t, c)
		f.say(t, c, "user", "page me")
		want = append(want, c.ID)
	}
	var got []string
	q := f.search("org", "user", "page")
	q.Limit = 2
	for range 10 {
		cs, err := f.FindConversations(t.Context(), q)
		if err != nil {
			t.Fatalf("FindConversations: %v", err)
		}
		for _, c := range cs {
			got = append(got, c.ID)
		}
		if len(cs) < q.Limit {
			break
		}
		last := cs[len(cs)-1]
		q.After = store.ConversationCursor{UpdatedAt: last.UpdatedAt, ID: last.ID}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("pages (-want +got):\n%s", d)
	}
}
