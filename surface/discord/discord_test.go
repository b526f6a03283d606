package discord_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/quiverhq/quiver/internal/discordtest"
	"github.com/quiverhq/quiver/surface"
	"github.com/quiverhq/quiver/surface/discord"
	"github.com/quiverhq/quiver/turn"
)

// step is one call of a capability table: the error it must wrap (nil
// for success) and a text the error must name.
type step struct {
	name   string
	run    func(ctx context.Context, w *world) error
	want   error
	wantIn string
	check  func(t *testing.T, w *world)
}

// runSteps runs the steps in order against one world.
func runSteps(t *testing.T, w *world, steps []step) {
	t.Helper()
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			err := s.run(t.Context(), w)
			switch {
			case s.want == nil && err != nil:
				t.Fatalf("err = %v, want none", err)
			case s.want != nil && !errors.Is(err, s.want):
				t.Fatalf("err = %v, want %v", err, s.want)
			case s.wantIn != "" && (err == nil || !strings.Contains(err.Error(), s.wantIn)):
				t.Fatalf("err = %v, want one naming %q", err, s.wantIn)
			}
			if s.check != nil {
				s.check(t, w)
			}
		})
	}
}

func TestConforms(t *testing.T) {
	w := newWorld(t)
	if err := surface.Conforms(w.d); err != nil {
		t.Fatal(err)
	}
	if w.d.Name() != surface.Discord {
		t.Errorf("name %q", w.d.Name())
	}
}

func TestRecent(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	if err := w.d.React(ctx, w.scope, w.hello.ID, "👍"); err != nil {
		t.Fatal(err)
	}
	// A system notice (a pin's, type 6) is no message a person reads.
	w.srv.PostMessage(discordtest.Message{ChannelID: w.general.ID, Author: discordtest.User{ID: w.srv.Bot().ID}, Type: 6})
	got, err := w.d.Recent(ctx, w.scope, 500)
	if err != nil {
		t.Fatal(err)
	}
	want := []surface.Message{
		{ID: w.hello.ID, Author: surface.Author{ID: discord.UserID(w.alice.User.ID), Name: "Alice"}, Text: "hello", At: clock,
			Reactions: []surface.Reaction{{Emoji: "👍", Count: 1, Mine: true}}},
		{ID: w.botMsg.ID, Author: surface.Author{ID: discord.UserID(w.srv.Bot().ID), Name: "helper", Agent: true}, Text: "hi there", At: clock},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApproxTime(0)); diff != "" {
		t.Errorf("recent (-want +got):\n%s", diff)
	}
	if got, _ := w.d.Recent(ctx, w.scope, 1); len(got) != 1 || got[0].ID != w.botMsg.ID {
		t.Errorf("limit 1 gave %v, want the latest", got)
	}
	if got, err := w.d.Recent(ctx, w.scope, 0); got != nil || err != nil {
		t.Errorf("limit 0 gave %v, %v", got, err)
	}
	noOrg := w.scope
	noOrg.OrgID = "stranger"
	for _, tt := range []struct {
		name   string
		scope  turn.Scope
		want   error
		wantIn string
	}{
		{"no read history", w.in(w.locked.ID), surface.ErrNotAllowed, "READ_MESSAGE_HISTORY"},
		{"another server's channel", w.in(w.elsewhere.ID), surface.ErrNoPlace, ""},
		{"a channel the bot cannot see", w.in(w.hidden.ID), surface.ErrNoPlace, ""},
		{"no such channel", w.in(w.srv.NewID()), surface.ErrNoPlace, ""},
		{"not a snowflake", w.in("general"), surface.ErrNoPlace, ""},
		{"an organisation without a server", noOrg, surface.ErrNoPlace, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := w.d.Recent(ctx, tt.scope, 10)
			if !errors.Is(err, tt.want) || !strings.Contains(errString(err), tt.wantIn) {
				t.Errorf("err = %v, want %v naming %q", err, tt.want, tt.wantIn)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestThreadInheritsParent(t *testing.T) {
	w := newWorld(t)
	// A thread of locked: its parent's overwrites deny the history.
	th := w.srv.AddChannel(discordtest.Channel{GuildID: w.guild.ID, Name: "quiet", Type: discordtest.ChannelPublicThread, ParentID: w.locked.ID})
	_, err := w.d.Recent(t.Context(), w.in(th.ID), 10)
	if !errors.Is(err, surface.ErrNotAllowed) || !strings.Contains(err.Error(), "READ_MESSAGE_HISTORY") {
		t.Errorf("err = %v, want READ_MESSAGE_HISTORY refused by the parent's overwrites", err)
	}
	// In general's thread the bot posts with SEND_MESSAGES_IN_THREADS.
	if _, err := w.d.Post(t.Context(), w.scope, w.thread.ID, "in the thread"); err != nil {
		t.Errorf("post into a thread: %v", err)
	}
}

func errIs(err, target error) bool { return err != nil && errors.Is(err, target) }

// TestBoundsBeforeRequests: oversized input is refused with ErrLimit
// before the surface sends anything to Discord.
func TestBoundsBeforeRequests(t *testing.T) {
	requests := 0
	dg, err := discordgo.New("Bot x")
	if err != nil {
		t.Fatal(err)
	}
	dg.Client = &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
		requests++
		return nil, errors.New("no request may be sent")
	})}
	d := discord.New(discord.Config{Session: dg, BotUserID: "200", Guilds: func(string) (string, bool) { return "100", true }})
	sc := turn.Scope{OrgID: "org", ChannelID: "300", TurnID: "t"}
	long := strings.Repeat("a", discord.MaxTextRunes+1)
	ctx := t.Context()
	for name, call := range map[string]func() error{
		"reply": func() error { _, err := d.Reply(ctx, sc, "400", long); return err },
		"edit":  func() error { return d.Edit(ctx, sc, "400", long) },
		"post":  func() error { _, err := d.Post(ctx, sc, "500", long); return err },
		"thread message": func() error {
			_, err := d.CreateThread(ctx, sc, "", "name", long)
			return err
		},
		"thread name": func() error {
			_, err := d.CreateThread(ctx, sc, "", strings.Repeat("n", discord.MaxThreadNameRunes+1), "hi")
			return err
		},
	} {
		if err := call(); !errIs(err, surface.ErrLimit) {
			t.Errorf("%s: err = %v, want ErrLimit", name, err)
		}
	}
	if requests != 0 {
		t.Errorf("%d requests sent", requests)
	}
}
