package chat_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/builtin/chat"
	"github.com/quiverhq/quiver/ids"
	"github.com/quiverhq/quiver/internal/pgtest"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/postgres"
	"github.com/quiverhq/quiver/store/sqlite"
	"github.com/quiverhq/quiver/surface"
	"github.com/quiverhq/quiver/surface/webchat"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

var allFamilies = []string{chat.FamilyMetadata, chat.FamilyInteract, chat.FamilyManage, chat.FamilyThread,
	chat.FamilyCrossChannel, chat.FamilySticker, chat.FamilyAvatar, chat.FamilyBlocking}

func facts(surfaceName string, switches map[string]bool, vision bool) turn.Facts {
	return turn.Facts{
		Place: turn.Place{Surface: surfaceName},
		Agent: turn.Agent{Allow: allFamilies, Switches: switches},
		Model: turn.Model{Name: "m", Caps: turn.Capabilities{Tools: true, Vision: vision}},
	}
}

// TestSelection: each surface declares the tools it has what for, and
// leaves out the rest with its reason; the family switches gate them.
func TestSelection(t *testing.T) {
	cat := registry.New()
	cat.Register(chat.Tools(chat.Config{})...)
	tests := []struct {
		name     string
		facts    turn.Facts
		declared []string
		left     []registry.Exclusion
	}{
		{"web chat", facts("", nil, true),
			[]string{"message_metadata", "interact_with_message", "manage_message", "create_thread", "cross_channel_message"},
			[]registry.Exclusion{
				{Name: "select_sticker", Reason: "the web chat has no stickers"},
				{Name: "view_profile_picture", Reason: "the web chat has no profile pictures"},
				{Name: "block_user", Reason: "the web chat has one person per conversation: there is no one to block"},
				{Name: "unblock_user", Reason: "the web chat has one person per conversation: there is no one to block"},
			}},
		{"Discord", facts(surface.Discord, nil, true),
			[]string{"message_metadata", "interact_with_message", "manage_message", "create_thread", "cross_channel_message",
				"select_sticker", "view_profile_picture", "block_user", "unblock_user"}, nil},
		{"Discord without vision", facts(surface.Discord, nil, false),
			[]string{"message_metadata", "interact_with_message", "manage_message", "create_thread", "cross_channel_message",
				"select_sticker", "block_user", "unblock_user"},
			[]registry.Exclusion{{Name: "view_profile_picture", Reason: "the model cannot see images"}}},
		{"switches off", facts(surface.Discord, map[string]bool{"manage_message": false, "thread_creation": false, "sticker_usage": false, "user_blocking": false}, true),
			[]string{"message_metadata", "interact_with_message", "cross_channel_message", "view_profile_picture"},
			[]registry.Exclusion{
				{Name: "manage_message", Reason: "manage_message switch off"},
				{Name: "create_thread", Reason: "thread_creation switch off"},
				{Name: "select_sticker", Reason: "sticker_usage switch off"},
				{Name: "block_user", Reason: "user_blocking switch off"},
				{Name: "unblock_user", Reason: "user_blocking switch off"},
			}},
		{"unknown surface", facts("irc", nil, true), []string{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := cat.Select(tt.facts)
			if diff := cmp.Diff(tt.declared, ts.Names()); diff != "" {
				t.Errorf("declared (-want +got):\n%s", diff)
			}
			if tt.name == "unknown surface" {
				for _, e := range ts.Excluded() {
					if !strings.Contains(e.Reason, "not one Quiver knows") {
						t.Errorf("%s left out for %q", e.Name, e.Reason)
					}
				}
				return
			}
			if diff := cmp.Diff(tt.left, ts.Excluded()); diff != "" {
				t.Errorf("left out (-want +got):\n%s", diff)
			}
		})
	}
}

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

// seed stores Ann's conversations "plans" (her message, the agent's
// reply) and "notes", and Bob's "bobs".
func seed(t *testing.T, st store.Store) {
	t.Helper()
	ctx := t.Context()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(st.CreateOrg(ctx, store.Org{ID: "org", Name: "Org", CreatedAt: start}))
	must(st.CreateUser(ctx, store.User{ID: "ann", OrgID: "org", DisplayName: "Ann", Role: store.RoleMember, CreatedAt: start, UpdatedAt: start}))
	for i, c := range []store.Conversation{{ID: "notes", UserID: "ann", Title: "Notes"}, {ID: "plans", UserID: "ann", Title: "Plans"}, {ID: "bobs", UserID: "bob"}} {
		c.OrgID, c.Agent = "org", "helper"
		c.CreatedAt = start.Add(time.Duration(i) * time.Minute)
		c.UpdatedAt = c.CreatedAt
		must(st.PutConversation(ctx, c))
	}
	_, err := st.AppendMessages(ctx, "org", []store.Message{
		{ConversationID: "plans", Role: store.RoleUser, Content: "Fly Monday?", CreatedAt: start},
		{ConversationID: "plans", Role: "assistant", Content: "Monday works.", CreatedAt: start.Add(time.Minute)},
		{ConversationID: "bobs", Role: store.RoleUser, Content: "Bob's secret", CreatedAt: start},
	})
	must(err)
}

// call runs the named tool of the catalog with args in scope sc.
func call(t *testing.T, tools []*tool.Tool, name string, sc tool.Scope, args string) (tool.Result, error) {
	t.Helper()
	for _, tl := range tools {
		if tl.Name() == name {
			return tl.Run(t.Context(), sc, json.RawMessage(args))
		}
	}
	t.Fatalf("no tool %s", name)
	return tool.Result{}, nil
}

// TestWebChatCalls: each tool's calls on the web chat, on both backends.
func TestWebChatCalls(t *testing.T) {
	ann := tool.Scope{OrgID: "org", UserID: "ann", ConversationID: "plans", Timezone: "Asia/Ho_Chi_Minh"}
	intoBobs := ann
	intoBobs.ConversationID = "bobs"
	tests := []struct {
		name    string
		tool    string
		scope   tool.Scope
		args    string
		want    string // in the content, or in the error when wantErr
		wantErr bool
		changes []tool.MessageChange
	}{
		{"metadata lists ids, names and local times", "message_metadata", ann, `{}`,
			"- id 1 · Mon 2 Mar 2026 16:00 · Ann: Fly Monday?\n- id 2 · Mon 2 Mar 2026 16:01 · helper (you): Monday works.", false, nil},
		{"metadata of another person's conversation", "message_metadata", intoBobs, `{}`, "no conversation whose messages you can act on", true, nil},
		{"metadata limit bounded by the schema", "message_metadata", ann, `{"limit":51}`, "limit", true, nil},
		{"react", "interact_with_message", ann, `{"message_id":"1","action":"react","emoji":"👍"}`, "Reacted to message 1 with 👍.", false,
			[]tool.MessageChange{{Action: "react", Conversation: "plans", Message: "1", Emoji: "👍"}}},
		{"react without an emoji", "interact_with_message", ann, `{"message_id":"1","action":"react"}`, "give the emoji", true, nil},
		{"react to another person's message", "interact_with_message", intoBobs, `{"message_id":"1","action":"react","emoji":"👍"}`,
			`no message with id "1" in this conversation`, true, nil},
		{"react to no message", "interact_with_message", ann, `{"message_id":"7","action":"react","emoji":"👍"}`,
			`no message with id "7" in this conversation`, true, nil},
		{"reply, which the web chat lacks", "interact_with_message", ann, `{"message_id":"1","action":"reply","text":"Yes"}`,
			"the web chat has no replies to single messages", true, nil},
		{"a reply over the cap", "interact_with_message", ann, `{"message_id":"1","action":"reply","text":"` + strings.Repeat("a", chat.MaxReplyRunes+1) + `"}`,
			"text", true, nil},
		{"pin the person's message", "manage_message", ann, `{"message_id":"1","action":"pin"}`, "Done: pin message 1.", false,
			[]tool.MessageChange{{Action: "pin", Conversation: "plans", Message: "1"}}},
		{"edit own", "manage_message", ann, `{"message_id":"2","action":"edit","text":"Tuesday works."}`, "Done: edit message 2.", false,
			[]tool.MessageChange{{Action: "edit", Conversation: "plans", Message: "2", Text: "Tuesday works."}}},
		{"edit the person's", "manage_message", ann, `{"message_id":"1","action":"edit","text":"x"}`, "only the agent's own messages", true, nil},
		{"delete the person's", "manage_message", ann, `{"message_id":"1","action":"delete"}`, "only the agent's own messages", true, nil},
		{"edit without text", "manage_message", ann, `{"message_id":"2","action":"edit"}`, "the new text is empty", true, nil},
		{"an unknown action", "manage_message", ann, `{"message_id":"2","action":"archive"}`, "action", true, nil},
		{"thread", "create_thread", ann, `{"name":"Flights","message":"Let's pick one.","message_id":"2"}`, `Started the thread "Flights" (id conv_1)`, false,
			[]tool.MessageChange{{Action: "thread", Conversation: "plans", Message: "2", Thread: "conv_1", Text: "Flights"}}},
		{"thread in another person's conversation", "create_thread", intoBobs, `{"name":"x","message":"y"}`, "no conversation whose messages you can act on", true, nil},
		{"places", "cross_channel_message", ann, `{"action":"list"}`, "- notes: Notes", false, nil},
		{"post", "cross_channel_message", ann, `{"action":"post","place":"notes","text":"Flying Tuesday.","report_back":true}`,
			"Posted in notes (message 1). Tell the person here", false,
			[]tool.MessageChange{{Action: "post", Conversation: "notes", Message: "1", Text: "Flying Tuesday."}}},
		{"post into another person's", "cross_channel_message", ann, `{"action":"post","place":"bobs","text":"hi"}`, "no such conversation to post in", true, nil},
		{"post into one that does not exist", "cross_channel_message", ann, `{"action":"post","place":"nope","text":"hi"}`, "no such conversation to post in", true, nil},
		{"post without a place", "cross_channel_message", ann, `{"action":"post","text":"hi"}`, "give the place", true, nil},
		{"stickers, which the web chat lacks", "select_sticker", ann, `{"action":"list"}`, "the web chat has no stickers", true, nil},
		{"blocking, which the web chat lacks", "block_user", ann, `{"user_id":"bob","reason":"spam"}`, "there is no one to block", true, nil},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			st := b.open(t)
			seed(t, st)
			wc := webchat.New(webchat.Config{Store: st, Now: func() time.Time { return start.Add(time.Hour) }, NewID: (&ids.Sequence{}).New})
			tools := chat.Tools(chat.Config{Surfaces: chat.Set{surface.WebChat: wc}})
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					res, err := call(t, tools, tt.tool, tt.scope, tt.args)
					if tt.wantErr {
						if err == nil || !strings.Contains(err.Error(), tt.want) || tool.IsInfra(err) {
							t.Fatalf("err = %v, want a model-facing error containing %q", err, tt.want)
						}
						return
					}
					if err != nil {
						t.Fatal(err)
					}
					if !strings.Contains(res.Content, tt.want) {
						t.Errorf("content %q lacks %q", res.Content, tt.want)
					}
					if diff := cmp.Diff(tt.changes, res.Effect.Messages); diff != "" {
						t.Errorf("changes (-want +got):\n%s", diff)
					}
				})
			}
			// What the calls left: Bob's conversation untouched, Ann's marked.
			if marks, _ := st.ListMessageMarks(t.Context(), "org", "bobs"); len(marks) != 0 {
				t.Errorf("Bob's conversation marked: %v", marks)
			}
			res, err := call(t, tools, "message_metadata", ann, `{}`)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"👍×1 (yours)", "pinned", "Tuesday works. [edited, thread conv_1]"} {
				if !strings.Contains(res.Content, want) {
					t.Errorf("metadata after the calls lacks %q:\n%s", want, res.Content)
				}
			}
		})
	}
}

// TestRefusalRevealsNothing: a message id in another person's
// conversation and one that exists nowhere get the same answer.
func TestRefusalRevealsNothing(t *testing.T) {
	st := backends[0].open(t)
	seed(t, st)
	tools := chat.Tools(chat.Config{Surfaces: chat.Set{surface.WebChat: webchat.New(webchat.Config{Store: st})}})
	theirs := tool.Scope{OrgID: "org", UserID: "ann", ConversationID: "bobs"}
	nowhere := tool.Scope{OrgID: "org", UserID: "ann", ConversationID: "missing"}
	args := `{"message_id":"1","action":"pin"}`
	_, err1 := call(t, tools, "manage_message", theirs, args)
	_, err2 := call(t, tools, "manage_message", nowhere, args)
	if err1 == nil || err2 == nil || err1.Error() != err2.Error() {
		t.Errorf("refusals differ: %v / %v", err1, err2)
	}
	if strings.Contains(err1.Error(), "bob") {
		t.Errorf("the refusal names the owner: %v", err1)
	}
}

// TestNoSurface: a catalog built without surfaces keeps the tools,
// whose calls are infrastructure errors.
func TestNoSurface(t *testing.T) {
	tools := chat.Tools(chat.Config{})
	_, err := call(t, tools, "message_metadata", tool.Scope{OrgID: "o", UserID: "u", ConversationID: "c"}, `{}`)
	if !tool.IsInfra(err) {
		t.Errorf("err = %v, want an infrastructure error", err)
	}
	_, err = call(t, tools, "message_metadata", tool.Scope{Surface: surface.Discord}, `{}`)
	if err == nil || !errors.Is(err, err) || !tool.IsInfra(err) {
		t.Errorf("no Discord surface: %v, want an infrastructure error", err)
	}
}

// community is a surface with every capability, recording its calls:
// the tools Discord will serve, exercised before Discord exists.
type community struct{ calls []string }

func (c *community) Name() string { return surface.Discord }
func (c *community) Capabilities() surface.Capabilities {
	sp, _ := surface.Lookup(surface.Discord)
	return sp.Caps
}
func (c *community) Recent(context.Context, turn.Scope, int) ([]surface.Message, error) {
	return nil, nil
}
func (c *community) React(_ context.Context, _ turn.Scope, id, e string) error {
	c.calls = append(c.calls, "react "+id+" "+e)
	return nil
}
func (c *community) Unreact(context.Context, turn.Scope, string, string) error { return nil }
func (c *community) Reply(_ context.Context, _ turn.Scope, id, text string) (surface.Message, error) {
	c.calls = append(c.calls, "reply "+id+" "+text)
	return surface.Message{ID: "m2"}, nil
}
func (c *community) Pin(context.Context, turn.Scope, string) error               { return nil }
func (c *community) Unpin(context.Context, turn.Scope, string) error             { return nil }
func (c *community) Pins(context.Context, turn.Scope) ([]surface.Message, error) { return nil, nil }
func (c *community) Edit(context.Context, turn.Scope, string, string) error      { return nil }
func (c *community) Delete(context.Context, turn.Scope, string) error            { return surface.ErrNotAllowed }
func (c *community) CreateThread(context.Context, turn.Scope, string, string, string) (surface.Thread, error) {
	return surface.Thread{}, nil
}
func (c *community) Places(context.Context, turn.Scope, int) ([]surface.Place, error) {
	return nil, nil
}
func (c *community) Post(context.Context, turn.Scope, string, string) (surface.Message, error) {
	return surface.Message{}, nil
}
func (c *community) Stickers(context.Context, turn.Scope) ([]surface.Sticker, error) {
	return []surface.Sticker{{ID: "s1", Name: "wave", Description: "a waving cat"}}, nil
}
func (c *community) SendSticker(_ context.Context, _ turn.Scope, id string) error {
	c.calls = append(c.calls, "sticker "+id)
	return nil
}
func (c *community) Avatar(context.Context, turn.Scope, string) (surface.Image, error) {
	return surface.Image{MIME: "image/png", Data: []byte("png")}, nil
}
func (c *community) Block(_ context.Context, _ turn.Scope, user, reason string) error {
	c.calls = append(c.calls, "block "+user+" "+reason)
	return nil
}
func (c *community) Unblock(_ context.Context, _ turn.Scope, user string) error {
	c.calls = append(c.calls, "unblock "+user)
	return nil
}

func TestCommunityCalls(t *testing.T) {
	c := &community{}
	if err := surface.Conforms(c); err != nil {
		t.Fatal(err)
	}
	tools := chat.Tools(chat.Config{Surfaces: chat.Set{surface.Discord: c}})
	sc := tool.Scope{OrgID: "o", UserID: "u", ConversationID: "c", ChannelID: "ch", Surface: surface.Discord}
	steps := []struct{ tool, args, want string }{
		{"interact_with_message", `{"message_id":"m1","action":"reply","text":"  Sure!  "}`, "Replied to message m1 (your reply is message m2)."},
		{"select_sticker", `{"action":"list"}`, "- s1: wave — a waving cat"},
		{"select_sticker", `{"action":"send","sticker_id":"s1"}`, "Sent the sticker."},
		{"view_profile_picture", `{"user":"self"}`, "The profile picture is attached."},
		{"block_user", `{"user_id":"spammer","reason":"spam after warnings"}`, "Blocked the member"},
		{"unblock_user", `{"user_id":"spammer"}`, "Unblocked the member."},
	}
	for _, s := range steps {
		res, err := call(t, tools, s.tool, sc, s.args)
		if err != nil || !strings.Contains(res.Content, s.want) {
			t.Errorf("%s %s = %q, %v; want %q", s.tool, s.args, res.Content, err, s.want)
		}
		if s.tool == "view_profile_picture" && (len(res.Images) != 1 || res.Images[0].MIME != "image/png") {
			t.Errorf("the picture: %v", res.Images)
		}
	}
	want := []string{"reply m1 Sure!", "sticker s1", "block spammer spam after warnings", "unblock spammer"}
	if diff := cmp.Diff(want, c.calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if _, err := call(t, tools, "block_user", sc, `{"user_id":"u","reason":"x"}`); err == nil {
		t.Error("blocking the person talking: no error")
	}
	// A permission the surface withholds when the tool runs is the
	// model's to read.
	_, err := call(t, tools, "manage_message", sc, `{"message_id":"m1","action":"delete"}`)
	if !errors.Is(err, surface.ErrNotAllowed) || tool.IsInfra(err) {
		t.Errorf("a withheld permission: %v", err)
	}
}
