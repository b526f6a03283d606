package discord_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/store/sqlite"
	"github.com/quiverhq/quiver/surface"
	"github.com/quiverhq/quiver/surface/discord"
)

func TestAvatar(t *testing.T) {
	w := newWorld(t)
	png := w.srv.AvatarPNG()
	avatar := func(user string, want []byte) func(ctx context.Context, w *world) error {
		return func(ctx context.Context, w *world) error {
			img, err := w.d.Avatar(ctx, w.scope, user)
			if err == nil && (img.MIME != "image/png" || (want != nil && !bytes.Equal(img.Data, want))) {
				t.Errorf("avatar of %q: %s, %d bytes", user, img.MIME, len(img.Data))
			}
			return err
		}
	}
	runSteps(t, w, []step{
		{name: "the caller's", run: avatar("", png)},
		{name: "a member's", run: avatar(discord.UserID(w.bob.User.ID), png)}, // the default avatar
		{name: "the bot's", run: avatar("self", png)},
		{name: "a raw snowflake is no user id", run: avatar(w.bob.User.ID, nil), want: surface.ErrNotAllowed, wantIn: "no such member"},
		{name: "not a member", run: avatar(discord.UserID(w.srv.NewID()), nil), want: surface.ErrNotAllowed, wantIn: "no such member"},
		{name: "another server", run: func(ctx context.Context, w *world) error {
			_, err := w.d.Avatar(ctx, w.in(w.elsewhere.ID), "")
			return err
		}, want: surface.ErrNoPlace},
	})
}

// roundTrip is an http.RoundTripper of a function: a CDN that never
// leaves the process.
type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestAvatarBound: a CDN answer over 1 MiB is ErrLimit, with or without
// a Content-Length.
func TestAvatarBound(t *testing.T) {
	w := newWorld(t)
	big := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, discord.MaxAvatarBytes)...)
	for _, length := range []int64{int64(len(big)), -1} {
		cdn := &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Status: "200 OK", ContentLength: length, Body: io.NopCloser(bytes.NewReader(big)),
				Header: http.Header{"Content-Type": {"image/png"}}, Request: r}, nil
		})}
		_, err := w.surface(cdn).Avatar(t.Context(), w.scope, "")
		if !errIs(err, surface.ErrLimit) {
			t.Errorf("length %d: err = %v, want ErrLimit", length, err)
		}
	}
}

func TestBlocking(t *testing.T) {
	w := newWorld(t)
	bob := discord.UserID(w.bob.User.ID)
	blocked := func(want bool) func(*testing.T, *world) {
		return func(t *testing.T, w *world) {
			if got, err := w.d.Blocked(t.Context(), w.scope, bob); err != nil || got != want {
				t.Errorf("Blocked = %v, %v; want %v", got, err, want)
			}
		}
	}
	runSteps(t, w, []step{
		{name: "block", run: func(ctx context.Context, w *world) error {
			return w.d.Block(ctx, w.scope, bob, strings.Repeat("spam ", 100))
		},
			check: blocked(true)},
		{name: "unblock", run: func(ctx context.Context, w *world) error { return w.d.Unblock(ctx, w.scope, bob) }, check: blocked(false)},
		{name: "unblock again is no error", run: func(ctx context.Context, w *world) error { return w.d.Unblock(ctx, w.scope, bob) }},
		{name: "the caller", run: func(ctx context.Context, w *world) error { return w.d.Block(ctx, w.scope, w.scope.UserID, "x") },
			want: surface.ErrNotAllowed},
		{name: "the bot", run: func(ctx context.Context, w *world) error {
			return w.d.Block(ctx, w.scope, discord.UserID(w.srv.Bot().ID), "x")
		}, want: surface.ErrNotAllowed},
		{name: "not a member id", run: func(ctx context.Context, w *world) error { return w.d.Block(ctx, w.scope, "bob", "x") },
			want: surface.ErrNotAllowed},
		{name: "an organisation without a server", run: func(ctx context.Context, w *world) error {
			s := w.scope
			s.OrgID = "stranger"
			return w.d.Block(ctx, s, bob, "x")
		}, want: surface.ErrNoPlace, check: blocked(false)},
	})
	// The reason is cut to MaxReasonRunes; blocks are per agent.
	if err := w.d.Block(t.Context(), w.scope, bob, strings.Repeat("é", 1000)); err != nil {
		t.Fatal(err)
	}
	other := w.scope
	other.Agent = "another"
	if got, _ := w.d.Blocked(t.Context(), other, bob); got {
		t.Error("a block of one agent holds for another")
	}
}

func TestReasonCut(t *testing.T) {
	b := discord.NewMemoryBlocks()
	rec := &recordingBlocks{BlockList: b}
	w := newWorld(t)
	d := discord.New(discord.Config{Session: w.dg, BotUserID: w.srv.Bot().ID, Blocks: rec,
		Guilds: func(string) (string, bool) { return w.guild.ID, true }})
	if err := d.Block(t.Context(), w.scope, discord.UserID(w.bob.User.ID), strings.Repeat("é", 1000)); err != nil {
		t.Fatal(err)
	}
	if n := len([]rune(rec.reason)); n != discord.MaxReasonRunes {
		t.Errorf("the reason kept %d runes, want %d", n, discord.MaxReasonRunes)
	}
}

type recordingBlocks struct {
	discord.BlockList
	reason string
}

func (r *recordingBlocks) Block(ctx context.Context, org, agent, user, reason string) error {
	r.reason = reason
	return r.BlockList.Block(ctx, org, agent, user, reason)
}

func TestUserIDs(t *testing.T) {
	for _, tt := range []struct {
		id   string
		sf   string
		okay bool
	}{
		{"discord_80351110224678912", "80351110224678912", true},
		{"discord_18446744073709551615", "18446744073709551615", true},
		{"discord_18446744073709551616", "", false}, // over 64 bits
		{"discord_0123", "", false},
		{"discord_", "", false},
		{"discord_12a", "", false},
		{"80351110224678912", "", false},
		{"DISCORD_1", "", false},
		{"discord_+1", "", false},
	} {
		sf, ok := discord.Snowflake(tt.id)
		if sf != tt.sf || ok != tt.okay {
			t.Errorf("Snowflake(%q) = %q, %v; want %q, %v", tt.id, sf, ok, tt.sf, tt.okay)
		}
	}
}

// FuzzUserID: Snowflake accepts exactly what UserID makes of a snowflake,
// and gives it back.
func FuzzUserID(f *testing.F) {
	for _, s := range []string{"discord_80351110224678912", "discord_0", "discord_", "x", "discord_18446744073709551616", "discord_١٢"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		sf, ok := discord.Snowflake(id)
		if !ok {
			if sf != "" {
				t.Errorf("Snowflake(%q) refused but gave %q", id, sf)
			}
			return
		}
		if discord.UserID(sf) != id {
			t.Errorf("UserID(Snowflake(%q)) = %q", id, discord.UserID(sf))
		}
		if back, ok := discord.Snowflake(discord.UserID(sf)); !ok || back != sf {
			t.Errorf("round trip of %q: %q, %v", sf, back, ok)
		}
	})
}

// TestStoreBlocks: the persisted block list answers as the in-memory one,
// per agent, across a store reopened.
func TestStoreBlocks(t *testing.T) {
	dir := t.TempDir()
	st, err := sqlite.Open(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	b := discord.StoreBlocks{Blocks: st}
	if err := b.Block(t.Context(), "org", "tomori", "discord_42", "asked to be left alone"); err != nil {
		t.Fatal(err)
	}
	st.Close()
	st, err = sqlite.Open(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	b = discord.StoreBlocks{Blocks: st}
	for _, tc := range []struct {
		agent string
		want  bool
	}{{"tomori", true}, {"other", false}} {
		if got, err := b.Blocked(t.Context(), "org", tc.agent, "discord_42"); err != nil || got != tc.want {
			t.Errorf("Blocked(%s) after a restart = %v, %v; want %v", tc.agent, got, err, tc.want)
		}
	}
	if err := b.Unblock(t.Context(), "org", "tomori", "discord_42"); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.Blocked(t.Context(), "org", "tomori", "discord_42"); got {
		t.Error("still blocked after Unblock")
	}
}
