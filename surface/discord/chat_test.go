package discord_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/builtin/chat"
	"github.com/quiverhq/quiver/surface"
	"github.com/quiverhq/quiver/surface/discord"
	"github.com/quiverhq/quiver/tool"
)

// TestChatTools runs the message tools end to end through the adapter
// and the fake: each call's answer, then what Discord holds.
func TestChatTools(t *testing.T) {
	w := newWorld(t)
	tools := chat.Tools(chat.Config{Surfaces: chat.Set{surface.Discord: w.d}})
	call := func(name, args string) (tool.Result, error) {
		t.Helper()
		for _, tl := range tools {
			if tl.Name() == name {
				return tl.Run(t.Context(), w.scope, json.RawMessage(args))
			}
		}
		t.Fatalf("no tool %s", name)
		return tool.Result{}, nil
	}
	bob := discord.UserID(w.bob.User.ID)
	steps := []struct {
		tool, args, want string
		wantErr          bool
	}{
		{"message_metadata", `{}`, "Alice: hello", false},
		{"message_metadata", `{}`, "helper (you): hi there", false},
		{"interact_with_message", `{"message_id":"` + w.hello.ID + `","action":"react","emoji":"🎉"}`, "with 🎉", false},
		{"interact_with_message", `{"message_id":"` + w.hello.ID + `","action":"reply","text":"Welcome!"}`, "Replied to message " + w.hello.ID, false},
		{"interact_with_message", `{"message_id":"` + w.randomMsg.ID + `","action":"react","emoji":"🎉"}`, "no message with id", true},
		{"manage_message", `{"message_id":"` + w.hello.ID + `","action":"pin"}`, "Done: pin", false},
		{"manage_message", `{"message_id":"` + w.botMsg.ID + `","action":"edit","text":"hi, edited"}`, "Done: edit", false},
		{"manage_message", `{"message_id":"` + w.hello.ID + `","action":"edit","text":"x"}`, "own messages", true},
		{"create_thread", `{"name":"Welcome","message":"Say hi here.","message_id":"` + w.hello.ID + `"}`, `Started the thread "Welcome"`, false},
		{"cross_channel_message", `{"action":"list"}`, w.random.ID, false},
		{"cross_channel_message", `{"action":"post","place":"` + w.random.ID + `","text":"Hello random"}`, "Posted in " + w.random.ID, false},
		{"cross_channel_message", `{"action":"post","place":"` + w.elsewhere.ID + `","text":"x"}`, "no such conversation", true},
		{"select_sticker", `{"action":"list"}`, w.sticker.ID + ": wave", false},
		{"select_sticker", `{"action":"send","sticker_id":"` + w.sticker.ID + `"}`, "Sent the sticker.", false},
		{"view_profile_picture", `{}`, "attached", false},
		{"block_user", `{"user_id":"` + bob + `","reason":"spam"}`, "Blocked the member", false},
		{"unblock_user", `{"user_id":"` + bob + `"}`, "Unblocked", false},
		{"message_metadata", `{}`, "🎉×1 (yours)", false},
	}
	for _, s := range steps {
		res, err := call(s.tool, s.args)
		switch {
		case s.wantErr && (err == nil || !strings.Contains(err.Error(), s.want) || tool.IsInfra(err)):
			t.Errorf("%s %s: err = %v, want a model-facing error with %q", s.tool, s.args, err, s.want)
		case !s.wantErr && (err != nil || !strings.Contains(res.Content, s.want)):
			t.Errorf("%s %s = %q, %v; want %q", s.tool, s.args, res.Content, err, s.want)
		}
	}
	// A turn in another server's channel reaches nothing, worded as on
	// the web chat.
	for _, tl := range tools {
		if tl.Name() == "message_metadata" {
			_, err := tl.Run(t.Context(), w.in(w.elsewhere.ID), json.RawMessage(`{}`))
			if err == nil || !strings.Contains(err.Error(), "no conversation whose messages you can act on") || tool.IsInfra(err) {
				t.Errorf("metadata in another server: %v", err)
			}
		}
	}
	if pins := w.srv.Pins(w.general.ID); len(pins) != 1 || pins[0].ID != w.hello.ID {
		t.Errorf("pins %v", pins)
	}
	if m, _ := w.srv.Message(w.general.ID, w.botMsg.ID); m.Content != "hi, edited" {
		t.Errorf("the edited message reads %q", m.Content)
	}
	if th := w.srv.Threads(w.general.ID); len(th) != 2 || th[1].Name != "Welcome" {
		t.Errorf("threads %v", th)
	}
	if ms := w.srv.Messages(w.random.ID); ms[len(ms)-1].Content != "Hello random" {
		t.Errorf("random's last message %+v", ms[len(ms)-1])
	}
	if ms := w.srv.Messages(w.elsewhere.ID); len(ms) != 1 {
		t.Errorf("the other server got a post: %v", ms)
	}
}
