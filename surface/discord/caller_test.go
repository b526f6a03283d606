package discord_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/quiverhq/quiver/internal/discordtest"
	"github.com/quiverhq/quiver/surface"
	"github.com/quiverhq/quiver/surface/discord"
	"github.com/quiverhq/quiver/turn"
)

// TestCallerPermissions: the agent never uses its own rights for what
// the person asking may not do. Bob, a plain member, cannot have it pin,
// delete Alice's message, block anyone, or post into (or see in the list)
// a staff room the bot can post in; Alice, who moderates, can.
func TestCallerPermissions(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	staffRoom := w.srv.AddChannel(discordtest.Channel{GuildID: w.guild.ID, Name: "staff-room", Overwrites: []discordtest.Overwrite{
		{ID: w.guild.ID, Type: discordtest.OverwriteRole, Deny: discordtest.PermViewChannel},
		{ID: w.modRole, Type: discordtest.OverwriteRole, Allow: discordtest.PermViewChannel},
		{ID: w.alice.User.ID, Type: discordtest.OverwriteMember, Allow: discordtest.PermViewChannel},
	}})
	bob := w.scope
	bob.UserID = discord.UserID(w.bob.User.ID)
	for _, tc := range []struct {
		name string
		run  func(turn.Scope) error
		want error
	}{
		{"pin", func(s turn.Scope) error { return w.d.Pin(ctx, s, w.hello.ID) }, surface.ErrNotAllowed},
		{"delete another's", func(s turn.Scope) error { return w.d.Delete(ctx, s, w.hello.ID) }, surface.ErrNotAllowed},
		{"block", func(s turn.Scope) error { return w.d.Block(ctx, s, discord.UserID(w.alice.User.ID), "x") }, surface.ErrNotAllowed},
		{"post into the staff room", func(s turn.Scope) error {
			_, err := w.d.Post(ctx, s, staffRoom.ID, "hi")
			return err
		}, surface.ErrNoPlace},
	} {
		if err := tc.run(bob); !errors.Is(err, tc.want) {
			t.Errorf("Bob: %s: %v, want %v", tc.name, err, tc.want)
		}
	}
	places := func(s turn.Scope) []string {
		ps, err := w.d.Places(ctx, s, 20)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range ps {
			names = append(names, p.Name)
		}
		return names
	}
	if slices.Contains(places(bob), "staff-room") || !slices.Contains(places(w.scope), "staff-room") {
		t.Errorf("places: Bob %v, Alice %v; want the staff room for Alice only", places(bob), places(w.scope))
	}
	if _, err := w.d.Post(ctx, w.scope, staffRoom.ID, "for the staff"); err != nil {
		t.Errorf("Alice posting into the staff room: %v", err)
	}
	if err := w.d.Pin(ctx, w.scope, w.hello.ID); err != nil {
		t.Errorf("Alice pinning: %v", err)
	}
	// Blocking needs a member: a made-up id cannot fill the list.
	if err := w.d.Block(ctx, w.scope, discord.UserID("123456789012345678"), "x"); !errors.Is(err, surface.ErrNotAllowed) {
		t.Errorf("blocking someone not in the server: %v", err)
	}
	if err := w.d.Block(ctx, w.scope, bob.UserID, "spam"); err != nil {
		t.Errorf("Alice blocking Bob: %v", err)
	}
}
