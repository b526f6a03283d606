package discord_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/internal/discordtest"
	"github.com/quiverhq/quiver/surface"
)

func TestReactions(t *testing.T) {
	w := newWorld(t)
	reactions := func(channelID, id string, want []discordtest.Reaction) func(*testing.T, *world) {
		return func(t *testing.T, w *world) {
			if diff := cmp.Diff(want, w.srv.Reactions(channelID, id)); diff != "" {
				t.Errorf("reactions (-want +got):\n%s", diff)
			}
		}
	}
	bot := w.srv.Bot().ID
	runSteps(t, w, []step{
		{name: "react", run: func(ctx context.Context, w *world) error { return w.d.React(ctx, w.scope, w.hello.ID, "👍") },
			check: reactions(w.general.ID, w.hello.ID, []discordtest.Reaction{{Emoji: "👍", UserIDs: []string{bot}}})},
		{name: "react again is no error", run: func(ctx context.Context, w *world) error { return w.d.React(ctx, w.scope, w.hello.ID, "👍") },
			check: reactions(w.general.ID, w.hello.ID, []discordtest.Reaction{{Emoji: "👍", UserIDs: []string{bot}}})},
		{name: "unreact", run: func(ctx context.Context, w *world) error { return w.d.Unreact(ctx, w.scope, w.hello.ID, "👍") },
			check: reactions(w.general.ID, w.hello.ID, []discordtest.Reaction{})},
		{name: "READ_MESSAGE_HISTORY missing", run: func(ctx context.Context, w *world) error {
			return w.d.React(ctx, w.in(w.locked.ID), w.lockedMsg.ID, "👍")
		}, want: surface.ErrNotAllowed, wantIn: "READ_MESSAGE_HISTORY"},
		{name: "a message of another channel", run: func(ctx context.Context, w *world) error { return w.d.React(ctx, w.scope, w.randomMsg.ID, "👍") },
			want: surface.ErrNoMessage, check: reactions(w.random.ID, w.randomMsg.ID, []discordtest.Reaction{})},
		{name: "an unknown id", run: func(ctx context.Context, w *world) error { return w.d.React(ctx, w.scope, w.srv.NewID(), "👍") },
			want: surface.ErrNoMessage},
		{name: "not a snowflake", run: func(ctx context.Context, w *world) error { return w.d.React(ctx, w.scope, "1; DROP", "👍") },
			want: surface.ErrNoMessage},
		{name: "another server's channel", run: func(ctx context.Context, w *world) error {
			return w.d.React(ctx, w.in(w.elsewhere.ID), w.elsewhereMsg.ID, "👍")
		}, want: surface.ErrNoPlace},
		{name: "an oversized emoji", run: func(ctx context.Context, w *world) error {
			return w.d.React(ctx, w.scope, w.hello.ID, strings.Repeat("x", 101))
		}, want: surface.ErrNotAllowed},
	})
	// ADD_REACTIONS alone: history allowed back in locked.
	w.srv.SetChannelOverwrites(w.locked.ID, []discordtest.Overwrite{{ID: w.guild.ID, Type: discordtest.OverwriteRole, Deny: discordtest.PermAddReactions}})
	err := w.d.React(t.Context(), w.in(w.locked.ID), w.lockedMsg.ID, "👍")
	if err == nil || !strings.Contains(err.Error(), "ADD_REACTIONS") {
		t.Errorf("err = %v, want ADD_REACTIONS named", err)
	}
}

func TestReply(t *testing.T) {
	w := newWorld(t)
	var got surface.Message
	runSteps(t, w, []step{
		{name: "reply", run: func(ctx context.Context, w *world) (err error) {
			got, err = w.d.Reply(ctx, w.scope, w.hello.ID, "Hi Alice")
			return err
		}, check: func(t *testing.T, w *world) {
			m, ok := w.srv.Message(w.general.ID, got.ID)
			if !ok || m.Reference == nil || m.Reference.MessageID != w.hello.ID || m.Content != "Hi Alice" || !got.Author.Agent {
				t.Errorf("stored %+v (%v), returned %+v; want a reply to %s", m, ok, got, w.hello.ID)
			}
			if m.Nonce == "" || len(m.Nonce) > 25 {
				t.Errorf("nonce %q", m.Nonce)
			}
		}},
		{name: "SEND_MESSAGES missing", run: func(ctx context.Context, w *world) error {
			_, err := w.d.Reply(ctx, w.in(w.locked.ID), w.lockedMsg.ID, "x")
			return err
		}, want: surface.ErrNotAllowed, wantIn: "SEND_MESSAGES"},
		{name: "an unknown message", run: func(ctx context.Context, w *world) error {
			_, err := w.d.Reply(ctx, w.scope, w.srv.NewID(), "x")
			return err
		}, want: surface.ErrNoMessage},
		{name: "a message of another channel", run: func(ctx context.Context, w *world) error {
			_, err := w.d.Reply(ctx, w.scope, w.randomMsg.ID, "x")
			return err
		}, want: surface.ErrNoMessage},
		{name: "over Discord's 2000 characters", run: func(ctx context.Context, w *world) error {
			_, err := w.d.Reply(ctx, w.scope, w.hello.ID, strings.Repeat("é", 2001))
			return err
		}, want: surface.ErrLimit},
	})
	if n := len(w.srv.Messages(w.general.ID)); n != 3 {
		t.Errorf("general holds %d messages, want 3 (one reply)", n)
	}
}

func TestPins(t *testing.T) {
	w := newWorld(t)
	pinned := func(channelID string, ids ...string) func(*testing.T, *world) {
		return func(t *testing.T, w *world) {
			var got []string
			for _, m := range w.srv.Pins(channelID) {
				got = append(got, m.ID)
			}
			if diff := cmp.Diff(ids, got); diff != "" {
				t.Errorf("pins (-want +got):\n%s", diff)
			}
		}
	}
	runSteps(t, w, []step{
		{name: "pin", run: func(ctx context.Context, w *world) error { return w.d.Pin(ctx, w.scope, w.hello.ID) }, check: pinned(w.general.ID, w.hello.ID)},
		{name: "pin again is no error", run: func(ctx context.Context, w *world) error { return w.d.Pin(ctx, w.scope, w.hello.ID) }, check: pinned(w.general.ID, w.hello.ID)},
		{name: "pins lists them", run: func(ctx context.Context, w *world) error {
			ms, err := w.d.Pins(ctx, w.scope)
			if err == nil && (len(ms) != 1 || ms[0].ID != w.hello.ID || !ms[0].Pinned) {
				t.Errorf("pins %+v", ms)
			}
			return err
		}},
		{name: "unpin", run: func(ctx context.Context, w *world) error { return w.d.Unpin(ctx, w.scope, w.hello.ID) }, check: pinned(w.general.ID)},
		{name: "MANAGE_MESSAGES missing", run: func(ctx context.Context, w *world) error { return w.d.Pin(ctx, w.in(w.locked.ID), w.lockedMsg.ID) },
			want: surface.ErrNotAllowed, wantIn: "MANAGE_MESSAGES", check: pinned(w.locked.ID)},
		{name: "an unknown id", run: func(ctx context.Context, w *world) error { return w.d.Pin(ctx, w.scope, w.srv.NewID()) }, want: surface.ErrNoMessage},
		{name: "a message of another channel", run: func(ctx context.Context, w *world) error { return w.d.Pin(ctx, w.scope, w.randomMsg.ID) },
			want: surface.ErrNoMessage, check: pinned(w.random.ID)},
	})
	// PIN_MESSAGES passes the adapter's check; a Discord that still wants
	// MANAGE_MESSAGES answers 403 50013, which is ErrNotAllowed too.
	w.srv.SetRolePermissions(w.guild.ID, w.modRole, 1<<51)
	if err := w.d.Pin(t.Context(), w.scope, w.botMsg.ID); !errIs(err, surface.ErrNotAllowed) || !strings.Contains(err.Error(), "Discord refused") {
		t.Errorf("Discord's 403: %v, want ErrNotAllowed", err)
	}
	w.srv.SetRolePermissions(w.guild.ID, w.modRole, discordtest.PermManageMessages)
	// Discord's 50 pins: the 51st is ErrLimit.
	board := w.srv.AddChannel(discordtest.Channel{GuildID: w.guild.ID, Name: "board"})
	for i := range 51 {
		m := w.srv.SendMessage(board.ID, w.alice.User.ID, "note")
		err := w.d.Pin(t.Context(), w.in(board.ID), m.ID)
		if i < 50 && err != nil {
			t.Fatalf("pin %d: %v", i, err)
		}
		if i == 50 && !errIs(err, surface.ErrLimit) {
			t.Errorf("the 51st pin: %v, want ErrLimit", err)
		}
	}
}

func TestEditDelete(t *testing.T) {
	w := newWorld(t)
	runSteps(t, w, []step{
		{name: "edit own", run: func(ctx context.Context, w *world) error { return w.d.Edit(ctx, w.scope, w.botMsg.ID, "hi again") },
			check: func(t *testing.T, w *world) {
				if m, _ := w.srv.Message(w.general.ID, w.botMsg.ID); m.Content != "hi again" || m.EditedTimestamp == nil {
					t.Errorf("after the edit: %+v", m)
				}
			}},
		{name: "edit another's", run: func(ctx context.Context, w *world) error { return w.d.Edit(ctx, w.scope, w.hello.ID, "x") },
			want: surface.ErrNotAllowed, wantIn: "own"},
		{name: "edit over the limit", run: func(ctx context.Context, w *world) error {
			return w.d.Edit(ctx, w.scope, w.botMsg.ID, strings.Repeat("a", 2001))
		}, want: surface.ErrLimit},
		{name: "edit an unknown id", run: func(ctx context.Context, w *world) error { return w.d.Edit(ctx, w.scope, w.srv.NewID(), "x") },
			want: surface.ErrNoMessage},
		{name: "delete another's without MANAGE_MESSAGES", run: func(ctx context.Context, w *world) error {
			w.srv.SetChannelOverwrites(w.locked.ID, []discordtest.Overwrite{{ID: w.guild.ID, Type: discordtest.OverwriteRole, Deny: discordtest.PermManageMessages}})
			s := w.in(w.locked.ID)
			return w.d.Delete(ctx, s, w.lockedMsg.ID)
		}, wantIn: "MANAGE_MESSAGES", want: surface.ErrNotAllowed},
		{name: "delete another's with MANAGE_MESSAGES", run: func(ctx context.Context, w *world) error { return w.d.Delete(ctx, w.scope, w.hello.ID) },
			check: func(t *testing.T, w *world) {
				if _, ok := w.srv.Message(w.general.ID, w.hello.ID); ok {
					t.Error("alice's message is still there")
				}
			}},
		{name: "delete own", run: func(ctx context.Context, w *world) error { return w.d.Delete(ctx, w.scope, w.botMsg.ID) }},
		{name: "delete a message of another channel", run: func(ctx context.Context, w *world) error { return w.d.Delete(ctx, w.scope, w.randomMsg.ID) },
			want: surface.ErrNoMessage},
	})
}
