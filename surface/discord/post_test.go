package discord_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/internal/discordtest"
	"github.com/quiverhq/quiver/surface"
	"github.com/quiverhq/quiver/surface/discord"
)

func TestThreads(t *testing.T) {
	w := newWorld(t)
	var th surface.Thread
	runSteps(t, w, []step{
		{name: "from a message", run: func(ctx context.Context, w *world) (err error) {
			th, err = w.d.CreateThread(ctx, w.scope, w.hello.ID, "Hello thread", "Let's talk here.")
			return err
		}, check: func(t *testing.T, w *world) {
			if th.Place.Name != "Hello thread" || th.Place.Parent != w.general.ID || th.First.Text != "Let's talk here." {
				t.Errorf("thread %+v", th)
			}
			if ms := w.srv.Messages(th.Place.ID); len(ms) != 1 || ms[0].Content != "Let's talk here." {
				t.Errorf("the thread holds %+v", ms)
			}
			if m, _ := w.srv.Message(w.general.ID, w.hello.ID); m.ThreadID != th.Place.ID {
				t.Errorf("the message's thread is %q, want %q", m.ThreadID, th.Place.ID)
			}
		}},
		{name: "without a message", run: func(ctx context.Context, w *world) (err error) {
			th, err = w.d.CreateThread(ctx, w.scope, "", "Standalone", "First!")
			return err
		}, check: func(t *testing.T, w *world) {
			if n := len(w.srv.Threads(w.general.ID)); n != 3 {
				t.Errorf("general has %d threads, want 3", n)
			}
		}},
		{name: "a second from the same message", run: func(ctx context.Context, w *world) error {
			_, err := w.d.CreateThread(ctx, w.scope, w.hello.ID, "Again", "x")
			return err
		}, want: surface.ErrNotAllowed, wantIn: "already"},
		{name: "CREATE_PUBLIC_THREADS missing", run: func(ctx context.Context, w *world) error {
			_, err := w.d.CreateThread(ctx, w.in(w.locked.ID), "", "x", "y")
			return err
		}, want: surface.ErrNotAllowed, wantIn: "CREATE_PUBLIC_THREADS"},
		{name: "inside a thread", run: func(ctx context.Context, w *world) error {
			_, err := w.d.CreateThread(ctx, w.in(w.thread.ID), "", "x", "y")
			return err
		}, want: surface.ErrNotAllowed, wantIn: "inside a thread"},
		{name: "from a message of another channel", run: func(ctx context.Context, w *world) error {
			_, err := w.d.CreateThread(ctx, w.scope, w.randomMsg.ID, "x", "y")
			return err
		}, want: surface.ErrNoMessage},
		{name: "a name over 100 characters", run: func(ctx context.Context, w *world) error {
			_, err := w.d.CreateThread(ctx, w.scope, "", strings.Repeat("n", 101), "y")
			return err
		}, want: surface.ErrLimit},
		{name: "another server", run: func(ctx context.Context, w *world) error {
			_, err := w.d.CreateThread(ctx, w.in(w.elsewhere.ID), "", "x", "y")
			return err
		}, want: surface.ErrNoPlace},
	})
}

func TestPlacesAndPost(t *testing.T) {
	w := newWorld(t)
	runSteps(t, w, []step{
		{name: "places", run: func(ctx context.Context, w *world) error {
			ps, err := w.d.Places(ctx, w.scope, 10)
			// random's last message is later than the thread's creation;
			// general (the current), locked (no sends), hidden and the
			// other server are left out.
			want := []surface.Place{{ID: w.random.ID, Name: "random"}, {ID: w.thread.ID, Name: "plans", Parent: w.general.ID}}
			if diff := cmp.Diff(want, ps); err == nil && diff != "" {
				t.Errorf("places (-want +got):\n%s", diff)
			}
			return err
		}},
		{name: "places limited", run: func(ctx context.Context, w *world) error {
			ps, err := w.d.Places(ctx, w.scope, 1)
			if err == nil && len(ps) != 1 {
				t.Errorf("places %v, want 1", ps)
			}
			return err
		}},
		{name: "post", run: func(ctx context.Context, w *world) error {
			m, err := w.d.Post(ctx, w.scope, w.random.ID, "Over here")
			if err == nil && (m.Text != "Over here" || !m.Author.Agent) {
				t.Errorf("posted %+v", m)
			}
			return err
		}, check: func(t *testing.T, w *world) {
			ms := w.srv.Messages(w.random.ID)
			if last := ms[len(ms)-1]; last.Content != "Over here" || last.Author.ID != w.srv.Bot().ID {
				t.Errorf("random's last message %+v", last)
			}
		}},
		{name: "SEND_MESSAGES missing", run: func(ctx context.Context, w *world) error {
			_, err := w.d.Post(ctx, w.scope, w.locked.ID, "x")
			return err
		}, want: surface.ErrNotAllowed, wantIn: "SEND_MESSAGES"},
		{name: "another server's channel", run: func(ctx context.Context, w *world) error {
			_, err := w.d.Post(ctx, w.scope, w.elsewhere.ID, "x")
			return err
		}, want: surface.ErrNoPlace, check: func(t *testing.T, w *world) {
			if n := len(w.srv.Messages(w.elsewhere.ID)); n != 1 {
				t.Errorf("elsewhere holds %d messages, want 1", n)
			}
		}},
		{name: "a hidden channel", run: func(ctx context.Context, w *world) error {
			_, err := w.d.Post(ctx, w.scope, w.hidden.ID, "x")
			return err
		}, want: surface.ErrNoPlace},
		{name: "not a channel", run: func(ctx context.Context, w *world) error {
			_, err := w.d.Post(ctx, w.scope, "random", "x")
			return err
		}, want: surface.ErrNoPlace},
		{name: "over the limit", run: func(ctx context.Context, w *world) error {
			_, err := w.d.Post(ctx, w.scope, w.random.ID, strings.Repeat("a", 2001))
			return err
		}, want: surface.ErrLimit},
	})
}

func TestStickers(t *testing.T) {
	w := newWorld(t)
	foreign := w.srv.AddSticker(discordtest.Sticker{GuildID: w.other.ID, Name: "alien"})
	runSteps(t, w, []step{
		{name: "list", run: func(ctx context.Context, w *world) error {
			got, err := w.d.Stickers(ctx, w.scope)
			want := []surface.Sticker{{ID: w.sticker.ID, Name: "wave", Description: "a waving cat"}}
			if diff := cmp.Diff(want, got); err == nil && diff != "" {
				t.Errorf("stickers (-want +got):\n%s", diff)
			}
			return err
		}},
		{name: "send", run: func(ctx context.Context, w *world) error { return w.d.SendSticker(ctx, w.scope, w.sticker.ID) },
			check: func(t *testing.T, w *world) {
				ms := w.srv.Messages(w.general.ID)
				if last := ms[len(ms)-1]; !cmp.Equal(last.StickerIDs, []string{w.sticker.ID}) {
					t.Errorf("last message %+v, want the sticker", last)
				}
			}},
		{name: "another server's sticker", run: func(ctx context.Context, w *world) error { return w.d.SendSticker(ctx, w.scope, foreign.ID) },
			want: surface.ErrNotAllowed, wantIn: "not one of this server's stickers"},
		{name: "SEND_MESSAGES missing", run: func(ctx context.Context, w *world) error {
			return w.d.SendSticker(ctx, w.in(w.locked.ID), w.sticker.ID)
		}, want: surface.ErrNotAllowed, wantIn: "SEND_MESSAGES"},
		{name: "another server", run: func(ctx context.Context, w *world) error {
			_, err := w.d.Stickers(ctx, w.in(w.elsewhere.ID))
			return err
		}, want: surface.ErrNoPlace},
	})
}

// TestNonceIdempotency: two posts under one idempotency key, from two
// adapters (a retried run after a restart), give one Discord message;
// without a key, two posts of a turn give two.
func TestNonceIdempotency(t *testing.T) {
	w := newWorld(t)
	ctx := discord.WithIdempotencyKey(t.Context(), "task_7:2026-12-04T12:00")
	first, err := w.d.Post(ctx, w.scope, w.random.ID, "Daily summary")
	if err != nil {
		t.Fatal(err)
	}
	second, err := w.surface(nil).Post(ctx, w.scope, w.random.ID, "Daily summary")
	if err != nil {
		t.Fatal(err)
	}
	if first.ID != second.ID {
		t.Errorf("the retry posted %s, the first %s: want the same message", second.ID, first.ID)
	}
	count := func() (n int) {
		for _, m := range w.srv.Messages(w.random.ID) {
			if m.Content == "Daily summary" {
				n++
				if m.Nonce == "" || len(m.Nonce) > 25 {
					t.Errorf("nonce %q", m.Nonce)
				}
			}
		}
		return n
	}
	if n := count(); n != 1 {
		t.Errorf("%d messages posted under one key, want 1", n)
	}
	// A turn's two posts of the same text are two messages.
	for range 2 {
		if _, err := w.d.Post(t.Context(), w.scope, w.random.ID, "Daily summary"); err != nil {
			t.Fatal(err)
		}
	}
	if n := count(); n != 3 {
		t.Errorf("%d messages after the turn's two posts, want 3", n)
	}
}
