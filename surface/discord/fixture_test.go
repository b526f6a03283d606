package discord_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/quiverhq/quiver/internal/discordtest"
	"github.com/quiverhq/quiver/surface"
	"github.com/quiverhq/quiver/surface/discord"
	"github.com/quiverhq/quiver/turn"
)

// world is a fake Discord with the organisation's server and another.
//
//	guild "Quiver": general (alice's and the bot's messages, a thread),
//	  random, locked (no reactions, sends, threads, history, and
//	  MANAGE_MESSAGES denied to the bot's role), hidden (not visible).
//	  The bot's role holds MANAGE_MESSAGES.
//	guild "Other": elsewhere, where the bot is too.
type world struct {
	srv                                     *discordtest.Server
	dg                                      *discordgo.Session
	d                                       *discord.Surface
	blocks                                  *discord.MemoryBlocks
	guild, other                            discordtest.Guild
	general, random, locked, hidden, thread discordtest.Channel
	elsewhere                               discordtest.Channel
	alice, bob                              discordtest.Member
	hello, botMsg, lockedMsg, randomMsg     discordtest.Message
	elsewhereMsg                            discordtest.Message
	sticker                                 discordtest.Sticker
	modRole                                 string
	scope                                   turn.Scope
}

var clock = time.Date(2026, time.December, 4, 12, 0, 0, 0, time.UTC)

func newWorld(t *testing.T) *world {
	t.Helper()
	srv := discordtest.StartWith(t, &discordtest.Options{Now: func() time.Time { return clock }})
	srv.PointDiscordgo(t)
	w := &world{srv: srv}
	w.guild = srv.AddGuild(discordtest.Guild{Name: "Quiver", EveryonePermissions: discordtest.PermDefaultEveryone})
	mod := srv.AddRole(discordtest.Role{GuildID: w.guild.ID, Name: "bot", Permissions: discordtest.PermManageMessages})
	srv.AddMemberRole(w.guild.ID, srv.Bot().ID, mod.ID)
	w.modRole = mod.ID
	w.general = srv.AddChannel(discordtest.Channel{GuildID: w.guild.ID, Name: "general"})
	w.random = srv.AddChannel(discordtest.Channel{GuildID: w.guild.ID, Name: "random"})
	w.locked = srv.AddChannel(discordtest.Channel{GuildID: w.guild.ID, Name: "locked", Overwrites: []discordtest.Overwrite{
		{ID: w.guild.ID, Type: discordtest.OverwriteRole, Deny: discordtest.PermAddReactions | discordtest.PermSendMessages |
			discordtest.PermCreatePublicThreads | discordtest.PermReadMessageHistory},
		{ID: mod.ID, Type: discordtest.OverwriteRole, Deny: discordtest.PermManageMessages},
	}})
	w.hidden = srv.AddChannel(discordtest.Channel{GuildID: w.guild.ID, Name: "hidden", Overwrites: []discordtest.Overwrite{
		{ID: w.guild.ID, Type: discordtest.OverwriteRole, Deny: discordtest.PermViewChannel}}})
	w.thread = srv.AddChannel(discordtest.Channel{GuildID: w.guild.ID, Name: "plans", Type: discordtest.ChannelPublicThread, ParentID: w.general.ID})
	w.alice = srv.AddMember(discordtest.Member{GuildID: w.guild.ID, Nick: "ali",
		User: discordtest.User{Username: "alice", GlobalName: "Alice", Avatar: "a1b2c3d4"}})
	w.bob = srv.AddMember(discordtest.Member{GuildID: w.guild.ID, User: discordtest.User{Username: "bob"}})
	// Alice moderates (she may have messages pinned and deleted, and
	// people blocked); Bob is a plain member.
	staff := srv.AddRole(discordtest.Role{GuildID: w.guild.ID, Name: "staff", Permissions: discordtest.PermManageMessages | discordtest.PermModerateMembers})
	srv.AddMemberRole(w.guild.ID, w.alice.User.ID, staff.ID)
	w.sticker = srv.AddSticker(discordtest.Sticker{GuildID: w.guild.ID, Name: "wave", Description: "a waving cat"})

	w.other = srv.AddGuild(discordtest.Guild{Name: "Other", EveryonePermissions: discordtest.PermDefaultEveryone})
	w.elsewhere = srv.AddChannel(discordtest.Channel{GuildID: w.other.ID, Name: "elsewhere"})

	w.hello = srv.SendMessage(w.general.ID, w.alice.User.ID, "hello")
	w.botMsg = srv.SendMessage(w.general.ID, srv.Bot().ID, "hi there")
	w.lockedMsg = srv.SendMessage(w.locked.ID, w.alice.User.ID, "in locked")
	w.randomMsg = srv.SendMessage(w.random.ID, w.alice.User.ID, "in random")
	w.elsewhereMsg = srv.SendMessage(w.elsewhere.ID, srv.Bot().ID, "far away")

	w.dg = srv.NewSession(t)
	w.blocks = discord.NewMemoryBlocks()
	w.d = w.surface(nil)
	w.scope = turn.Scope{OrgID: "org", UserID: discord.UserID(w.alice.User.ID), ChannelID: w.general.ID,
		Agent: "helper", TurnID: "turn_1", Surface: surface.Discord}
	return w
}

// surface builds another adapter over the same session and block list
// (a restarted process); cdn nil is the session's client.
func (w *world) surface(cdn *http.Client) *discord.Surface {
	return discord.New(discord.Config{Session: w.dg, BotUserID: w.srv.Bot().ID, Blocks: w.blocks, HTTP: cdn,
		Guilds: func(org string) (string, bool) { return w.guild.ID, org == "org" }})
}

// in is the scope moved to another channel.
func (w *world) in(channelID string) turn.Scope {
	s := w.scope
	s.ChannelID = channelID
	return s
}
