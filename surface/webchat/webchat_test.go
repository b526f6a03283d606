package webchat_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/ids"
	"github.com/quiverhq/quiver/internal/pgtest"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/postgres"
	"github.com/quiverhq/quiver/store/sqlite"
	"github.com/quiverhq/quiver/surface"
	"github.com/quiverhq/quiver/surface/webchat"
	"github.com/quiverhq/quiver/turn"
)

// backends open an empty store of each kind.
var backends = []struct {
	name string
	open func(t *testing.T) store.Store
}{
	{"SQLite", func(t *testing.T) store.Store {
		st, err := sqlite.Open(t.Context(), t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}},
	{"PostgreSQL", func(t *testing.T) store.Store {
		st, err := postgres.Open(t.Context(), pgtest.URL(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}},
}

var start = time.Date(2026, time.March, 2, 9, 0, 0, 0, time.UTC)

// world is a store with two people of one organisation: Ann, with the
// conversations "plans" (a message of hers, the agent's reply, a tool
// call and its result) and "other", and Bob with "bobs".
type world struct {
	st   store.Store
	chat *webchat.Chat
	ann  turn.Scope
	bob  turn.Scope
}

func newWorld(t *testing.T, st store.Store) world {
	t.Helper()
	ctx := t.Context()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(st.CreateOrg(ctx, store.Org{ID: "org", Name: "Org", CreatedAt: start}))
	for _, u := range []string{"ann", "bob"} {
		must(st.CreateUser(ctx, store.User{ID: u, OrgID: "org", DisplayName: "Name of " + u, Role: store.RoleMember, CreatedAt: start, UpdatedAt: start}))
	}
	conv := func(id, user string, minute int) {
		at := start.Add(time.Duration(minute) * time.Minute)
		must(st.PutConversation(ctx, store.Conversation{ID: id, OrgID: "org", UserID: user, Agent: "helper", Title: "Title " + id, CreatedAt: at, UpdatedAt: at}))
	}
	conv("other", "ann", 0)
	conv("plans", "ann", 1)
	conv("bobs", "bob", 2)
	_, err := st.AppendMessages(ctx, "org", []store.Message{
		{ConversationID: "plans", Role: store.RoleUser, Content: "Fly Monday?", CreatedAt: start},
		{ConversationID: "plans", Role: "assistant", Content: "Monday works.", CreatedAt: start.Add(time.Minute)},
		{ConversationID: "plans", Role: "tool_call", ToolName: "calculate", Content: "{}", CreatedAt: start.Add(time.Minute)},
		{ConversationID: "plans", Role: "tool", ToolName: "calculate", Content: "2", CreatedAt: start.Add(time.Minute)},
		{ConversationID: "bobs", Role: store.RoleUser, Content: "Bob's secret", CreatedAt: start},
	})
	must(err)
	now := start.Add(time.Hour)
	return world{st: st,
		chat: webchat.New(webchat.Config{Store: st, Now: func() time.Time { return now }, NewID: (&ids.Sequence{}).New}),
		ann:  turn.Scope{OrgID: "org", UserID: "ann", ConversationID: "plans"},
		bob:  turn.Scope{OrgID: "org", UserID: "bob", ConversationID: "bobs"},
	}
}

func each(t *testing.T, fn func(t *testing.T, w world)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { fn(t, newWorld(t, b.open(t))) })
	}
}

func TestConforms(t *testing.T) {
	chat := webchat.New(webchat.Config{Store: struct{ store.Store }{}})
	if err := surface.Conforms(chat); err != nil {
		t.Fatal(err)
	}
}

func TestRecent(t *testing.T) {
	each(t, func(t *testing.T, w world) {
		ctx := t.Context()
		if err := w.chat.React(ctx, w.ann, "1", "👍"); err != nil {
			t.Fatal(err)
		}
		if err := w.chat.Pin(ctx, w.ann, "2"); err != nil {
			t.Fatal(err)
		}
		if err := w.chat.Edit(ctx, w.ann, "2", "Monday or Tuesday works."); err != nil {
			t.Fatal(err)
		}
		got, err := w.chat.Recent(ctx, w.ann, 10)
		if err != nil {
			t.Fatal(err)
		}
		want := []surface.Message{
			{ID: "1", Author: surface.Author{ID: "ann", Name: "Name of ann"}, Text: "Fly Monday?", At: start,
				Reactions: []surface.Reaction{{Emoji: "👍", Count: 1, Mine: true}}},
			{ID: "2", Author: surface.Author{Name: "helper", Agent: true}, Text: "Monday or Tuesday works.", At: start.Add(time.Minute),
				Pinned: true, Edited: true},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Recent (-want +got):\n%s", diff)
		}
		if got, _ := w.chat.Recent(ctx, w.ann, 1); len(got) != 1 || got[0].ID != "2" {
			t.Errorf("Recent(1) = %v, want the last message only", got)
		}
		pins, err := w.chat.Pins(ctx, w.ann)
		if err != nil || len(pins) != 1 || pins[0].ID != "2" {
			t.Errorf("Pins = %v, %v", pins, err)
		}
	})
}

// TestRefusals: every way of naming a message the scope does not reach
// gives the same error, and changes nothing.
func TestRefusals(t *testing.T) {
	each(t, func(t *testing.T, w world) {
		ctx := t.Context()
		intoBobs := w.ann
		intoBobs.ConversationID = "bobs" // Ann's scope naming Bob's conversation
		cases := []struct {
			name  string
			scope turn.Scope
			id    string
			want  error
		}{
			{"a tool message", w.ann, "3", surface.ErrNoMessage},
			{"no such number", w.ann, "99", surface.ErrNoMessage},
			{"not a number", w.ann, "abc", surface.ErrNoMessage},
			{"a leading zero", w.ann, "01", surface.ErrNoMessage},
			{"a sign", w.ann, "+1", surface.ErrNoMessage},
			{"zero", w.ann, "0", surface.ErrNoMessage},
			{"another person's conversation", intoBobs, "1", surface.ErrNoMessage},
			{"no conversation", turn.Scope{OrgID: "org", UserID: "ann"}, "1", surface.ErrNoMessage},
			{"another organisation", turn.Scope{OrgID: "org2", UserID: "ann", ConversationID: "plans"}, "1", surface.ErrNoMessage},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				for op, err := range map[string]error{
					"react":  w.chat.React(ctx, c.scope, c.id, "👍"),
					"pin":    w.chat.Pin(ctx, c.scope, c.id),
					"unpin":  w.chat.Unpin(ctx, c.scope, c.id),
					"edit":   w.chat.Edit(ctx, c.scope, c.id, "x"),
					"delete": w.chat.Delete(ctx, c.scope, c.id),
				} {
					if !errors.Is(err, c.want) {
						t.Errorf("%s: %v, want %v", op, err, c.want)
					}
				}
			})
		}
		for _, conv := range []string{"plans", "bobs"} {
			if marks, _ := w.st.ListMessageMarks(ctx, "org", conv); len(marks) != 0 {
				t.Errorf("%s: marks after refusals: %v", conv, marks)
			}
		}
		if _, err := w.chat.Recent(ctx, intoBobs, 10); !errors.Is(err, surface.ErrNoMessage) {
			t.Errorf("Recent of another person's conversation: %v", err)
		}
	})
}

func TestOwnMessagesOnly(t *testing.T) {
	each(t, func(t *testing.T, w world) {
		ctx := t.Context()
		if err := w.chat.Edit(ctx, w.ann, "1", "Fly Friday?"); !errors.Is(err, surface.ErrNotAllowed) {
			t.Errorf("editing the person's message: %v, want ErrNotAllowed", err)
		}
		if err := w.chat.Delete(ctx, w.ann, "1"); !errors.Is(err, surface.ErrNotAllowed) {
			t.Errorf("deleting the person's message: %v, want ErrNotAllowed", err)
		}
		if err := w.chat.Pin(ctx, w.ann, "1"); err != nil {
			t.Errorf("pinning the person's message: %v", err)
		}
		if err := w.chat.Delete(ctx, w.ann, "2"); err != nil {
			t.Fatal(err)
		}
		got, _ := w.chat.Recent(ctx, w.ann, 10)
		if len(got) != 2 || !got[1].Deleted || got[1].Text != "" {
			t.Errorf("after deleting the reply: %+v", got)
		}
	})
}

func TestThreadsAndPosts(t *testing.T) {
	each(t, func(t *testing.T, w world) {
		ctx := t.Context()
		th, err := w.chat.CreateThread(ctx, w.ann, "2", "Monday flights", "Let's pick a flight here.")
		if err != nil {
			t.Fatal(err)
		}
		if th.Place.Parent != "plans" || th.Place.Name != "Monday flights" {
			t.Errorf("thread %+v", th.Place)
		}
		got, _ := w.chat.Recent(ctx, w.ann, 10)
		if got[1].Thread != th.Place.ID {
			t.Errorf("the reply's thread = %q, want %q", got[1].Thread, th.Place.ID)
		}
		inThread := w.ann
		inThread.ConversationID = th.Place.ID
		first, err := w.chat.Recent(ctx, inThread, 10)
		if err != nil || len(first) != 1 || first[0].Text != "Let's pick a flight here." || !first[0].Author.Agent {
			t.Errorf("the thread's messages: %v, %v", first, err)
		}
		if _, err := w.chat.CreateThread(ctx, w.ann, "2", "Again", "x"); !errors.Is(err, surface.ErrLimit) {
			t.Errorf("a second thread from one message: %v, want ErrLimit", err)
		}
		places, err := w.chat.Places(ctx, w.ann, 10)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range places {
			names = append(names, fmt.Sprintf("%s:%s", p.ID, p.Parent))
		}
		if diff := cmp.Diff([]string{th.Place.ID + ":plans", "other:"}, names); diff != "" {
			t.Errorf("Places (-want +got):\n%s", diff)
		}
		m, err := w.chat.Post(ctx, w.ann, "other", "A note from plans.")
		if err != nil || m.ID != "1" {
			t.Errorf("Post = %+v, %v", m, err)
		}
		for _, place := range []string{"bobs", "plans", "nowhere", ""} {
			if _, err := w.chat.Post(ctx, w.ann, place, "x"); !errors.Is(err, surface.ErrNoPlace) {
				t.Errorf("posting into %q: %v, want ErrNoPlace", place, err)
			}
		}
		if ms, _ := w.st.ListMessages(ctx, "org", "bobs", 0); len(ms) != 1 {
			t.Errorf("Bob's conversation holds %d messages after a refused post", len(ms))
		}
		// A conversation of Ann's with another agent takes no post (it
		// would read as that agent's words) and is not listed.
		if err := w.st.PutConversation(ctx, store.Conversation{ID: "coder", OrgID: "org", UserID: "ann", Agent: "coder",
			Title: "Code", CreatedAt: start, UpdatedAt: start.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		if _, err := w.chat.Post(ctx, w.ann, "coder", "x"); !errors.Is(err, surface.ErrNotAllowed) {
			t.Errorf("posting into another agent's conversation: %v, want ErrNotAllowed", err)
		}
		if ps, _ := w.chat.Places(ctx, w.ann, 10); slices.ContainsFunc(ps, func(p surface.Place) bool { return p.ID == "coder" }) {
			t.Errorf("places list another agent's conversation: %v", ps)
		}
		// A thread starts no thread of its own.
		if _, err := w.chat.CreateThread(ctx, inThread, "", "Deeper", "x"); !errors.Is(err, surface.ErrNotAllowed) {
			t.Errorf("a thread inside a thread: %v, want ErrNotAllowed", err)
		}
	})
}

// FuzzParseID: an id parses only to a positive number that formats back
// to the same id.
func FuzzParseID(f *testing.F) {
	for _, s := range []string{"1", "42", "01", "+1", "-1", "0", "", "9223372036854775807", "9223372036854775808", "1e3", " 1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		seq, ok := webchat.ParseID(id)
		if ok && (seq <= 0 || webchat.FormatID(seq) != id) {
			t.Errorf("ParseID(%q) = %d, true", id, seq)
		}
	})
}
