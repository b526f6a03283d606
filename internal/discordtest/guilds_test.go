package discordtest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestGuildReads: the guild with its roles and owner, its channels and
// its active threads, as discordgo reads them; a guild the bot is not in
// is Missing Access, an unknown one Unknown Guild.
func TestGuildReads(t *testing.T) {
	f := newFixture(t, nil)
	role := f.srv.AddRole(Role{GuildID: f.guild.ID, Name: "mods", Permissions: PermManageMessages})
	th := f.srv.AddChannel(Channel{GuildID: f.guild.ID, Name: "plans", Type: ChannelPublicThread, ParentID: f.text.ID})

	g, err := f.dg.Guild(f.guild.ID)
	if err != nil {
		t.Fatal(err)
	}
	roles := map[string]int64{}
	for _, r := range g.Roles {
		roles[r.ID] = r.Permissions
	}
	want := map[string]int64{f.guild.ID: int64(PermDefaultEveryone), role.ID: int64(PermManageMessages)}
	if diff := cmp.Diff(want, roles); diff != "" || g.OwnerID != f.guild.OwnerID || len(g.Channels) != 0 {
		t.Errorf("guild %+v; roles (-want +got):\n%s", g, diff)
	}

	chans, err := f.dg.GuildChannels(f.guild.ID)
	if err != nil || len(chans) != 1 || chans[0].ID != f.text.ID {
		t.Errorf("channels %v, %v; want only %s", chans, err, f.text.ID)
	}
	threads, err := f.dg.GuildThreadsActive(f.guild.ID)
	if err != nil || len(threads.Threads) != 1 || threads.Threads[0].ID != th.ID || threads.Threads[0].ParentID != f.text.ID {
		t.Errorf("threads %+v, %v; want %s", threads, err, th.ID)
	}

	_, err = f.dg.Guild(f.srv.NewID())
	restErr(t, err, 404, 10004)
	other := f.srv.AddGuild(Guild{Name: "Other"})
	f.srv.mu.Lock()
	delete(f.srv.w.guilds[other.ID].members, f.srv.Bot().ID)
	f.srv.mu.Unlock()
	_, err = f.dg.GuildChannels(other.ID)
	restErr(t, err, 403, 50001)
}
