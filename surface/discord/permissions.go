package discord

import (
	"context"
	"errors"
	"fmt"

	"github.com/bwmarrin/discordgo"

	"github.com/quiverhq/quiver/surface"
	"github.com/quiverhq/quiver/turn"
)

// permAll is what the owner and an administrator hold.
const permAll int64 = -1

// permNames names the permissions the surface checks, as Discord's
// documentation spells them.
var permNames = []struct {
	bit  int64
	name string
}{
	{discordgo.PermissionViewChannel, "VIEW_CHANNEL"},
	{discordgo.PermissionReadMessageHistory, "READ_MESSAGE_HISTORY"},
	{discordgo.PermissionSendMessages, "SEND_MESSAGES"},
	{discordgo.PermissionSendMessagesInThreads, "SEND_MESSAGES_IN_THREADS"},
	{discordgo.PermissionAddReactions, "ADD_REACTIONS"},
	{discordgo.PermissionManageMessages, "MANAGE_MESSAGES"},
	{discordgo.PermissionCreatePublicThreads, "CREATE_PUBLIC_THREADS"},
	{discordgo.PermissionUseExternalStickers, "USE_EXTERNAL_STICKERS"},
	{discordgo.PermissionModerateMembers, "MODERATE_MEMBERS"},
}

// guildAccess is what the bot's and the caller's permissions in any
// channel of a guild are computed from: the guild's roles and owner, the
// bot's roles, and the caller's (callerID "" when the caller is no
// member: they hold nothing).
type guildAccess struct {
	guildID     string
	ownerID     string
	roles       map[string]int64
	botRoles    []string
	callerID    string
	callerRoles []string
}

// access reads the guild, the bot's membership of it and the caller's
// (the scope's person, when a member).
func (d *Surface) access(ctx context.Context, guildID string, s turn.Scope) (guildAccess, error) {
	g, err := d.dg.Guild(guildID, opt(ctx))
	if err != nil {
		return guildAccess{}, mapErr("read the server", err, errNoPlace)
	}
	m, err := d.dg.GuildMember(guildID, d.bot, opt(ctx))
	if err != nil {
		return guildAccess{}, mapErr("read the bot's membership", err, errNoPlace)
	}
	a := guildAccess{guildID: guildID, ownerID: g.OwnerID, roles: make(map[string]int64, len(g.Roles)), botRoles: m.Roles}
	for _, r := range g.Roles {
		a.roles[r.ID] = r.Permissions
	}
	if sf, ok := Snowflake(s.UserID); ok && sf != d.bot {
		cm, err := d.dg.GuildMember(guildID, sf, opt(ctx))
		switch {
		case err == nil:
			a.callerID, a.callerRoles = sf, cm.Roles
		case !errors.Is(mapErr("", err, errNoMember), errNoMember):
			return guildAccess{}, mapErr("read the caller's membership", err, errNoPlace)
		}
	}
	return a, nil
}

// caller computes the caller's permissions in a channel with the given
// overwrites as in computes the bot's; nothing when the caller is no
// member.
func (a guildAccess) caller(overwrites []*discordgo.PermissionOverwrite) int64 {
	if a.callerID == "" {
		return 0
	}
	return a.of(a.callerID, a.callerRoles, overwrites)
}

// in computes the bot's permissions in a channel with the given
// overwrites (for a thread, its parent's), as Discord documents it: the
// owner holds everything; base is @everyone and each of the bot's roles;
// ADMINISTRATOR holds everything; then the @everyone overwrite, the
// bot's role overwrites combined, and the bot's own overwrite. Without
// VIEW_CHANNEL it holds nothing.
func (a guildAccess) in(botID string, overwrites []*discordgo.PermissionOverwrite) int64 {
	return a.of(botID, a.botRoles, overwrites)
}

// of is in for any member with their roles.
func (a guildAccess) of(memberID string, memberRoles []string, overwrites []*discordgo.PermissionOverwrite) int64 {
	botID := memberID
	if a.ownerID == botID {
		return permAll
	}
	perms := a.roles[a.guildID]
	for _, r := range memberRoles {
		perms |= a.roles[r]
	}
	if perms&discordgo.PermissionAdministrator != 0 {
		return permAll
	}
	var everyone, member *discordgo.PermissionOverwrite
	var allow, deny int64
	mine := make(map[string]bool, len(memberRoles))
	for _, r := range memberRoles {
		mine[r] = true
	}
	for _, o := range overwrites {
		switch {
		case o.Type == discordgo.PermissionOverwriteTypeRole && o.ID == a.guildID:
			everyone = o
		case o.Type == discordgo.PermissionOverwriteTypeRole && mine[o.ID]:
			allow |= o.Allow
			deny |= o.Deny
		case o.Type == discordgo.PermissionOverwriteTypeMember && o.ID == botID:
			member = o
		}
	}
	if everyone != nil {
		perms = perms&^everyone.Deny | everyone.Allow
	}
	perms = perms&^deny | allow
	if member != nil {
		perms = perms&^member.Deny | member.Allow
	}
	if perms&discordgo.PermissionViewChannel == 0 {
		return 0
	}
	return perms
}

// permPinMessages is the pin permission Discord split out of
// MANAGE_MESSAGES (bit 51), which discordgo v0.28.1 does not name.
const permPinMessages int64 = 1 << 51

// requirePin refuses unless the bot may pin: READ_MESSAGE_HISTORY and
// MANAGE_MESSAGES or PIN_MESSAGES (either, while Discord moves pins to
// the new one; Discord's own refusal maps to ErrNotAllowed too).
func (p place) requirePin() error {
	if p.perms&permPinMessages == 0 {
		if err := p.require(discordgo.PermissionManageMessages); err != nil {
			return err
		}
	}
	return p.require(discordgo.PermissionReadMessageHistory)
}

// place is the scope's channel with the bot's permissions in it and
// the caller's.
type place struct {
	guildID string
	ch      *discordgo.Channel
	perms   int64
	caller  int64
	access  guildAccess
}

// callerRequire refuses with surface.ErrNotAllowed naming the first of
// want the caller lacks in the place: the agent never uses its own
// rights for what the person asking may not do.
func (p place) callerRequire(want ...int64) error {
	for _, w := range want {
		if p.caller&w == w {
			continue
		}
		name := fmt.Sprintf("permission %#x", w)
		for _, n := range permNames {
			if n.bit == w {
				name = n.name
			}
		}
		return fmt.Errorf("%w: you need Discord's %s permission in this channel for that", errNotAllowed, name)
	}
	return nil
}

// callerMayPin is requirePin for the caller.
func (p place) callerMayPin() error {
	if p.caller&permPinMessages != 0 {
		return nil
	}
	return p.callerRequire(discordgo.PermissionManageMessages)
}

func (p place) thread() bool { return p.ch.IsThread() }

// sendPerm is the permission posting in the place needs.
func (p place) sendPerm() int64 {
	if p.thread() {
		return discordgo.PermissionSendMessagesInThreads
	}
	return discordgo.PermissionSendMessages
}

// require refuses with surface.ErrNotAllowed naming the first of want
// the bot lacks in the place.
func (p place) require(want ...int64) error {
	for _, w := range want {
		if p.perms&w == w {
			continue
		}
		name := fmt.Sprintf("permission %#x", w)
		for _, n := range permNames {
			if n.bit == w {
				name = n.name
			}
		}
		return fmt.Errorf("%w: the bot lacks Discord's %s permission in this channel", errNotAllowed, name)
	}
	return nil
}

// errNoScope is the answer when the scope's own channel is out of reach:
// no place, and so no message in it (which is how the tools word it,
// as for a web chat conversation that is not the caller's).
var errNoScope = fmt.Errorf("%w: %w", surface.ErrNoPlace, surface.ErrNoMessage)

// resolve returns the scope's channel when it is in the organisation's
// server, with the bot's permissions in it; else errNoScope, which is
// both surface.ErrNoPlace and surface.ErrNoMessage.
func (d *Surface) resolve(ctx context.Context, s turn.Scope) (place, error) {
	p, err := d.placeOf(ctx, s, s.ChannelID)
	if errors.Is(err, errNoPlace) {
		return place{}, errNoScope
	}
	return p, err
}

// placeOf is resolve for any channel id of the organisation's server.
func (d *Surface) placeOf(ctx context.Context, s turn.Scope, channelID string) (place, error) {
	guildID, ok := d.guilds(s.OrgID)
	if !ok || !isSnowflake(channelID) {
		return place{}, errNoPlace
	}
	ch, err := d.dg.Channel(channelID, opt(ctx))
	if err != nil {
		return place{}, mapErr("read the channel", err, errNoPlace)
	}
	if ch.GuildID != guildID {
		return place{}, errNoPlace
	}
	a, err := d.access(ctx, guildID, s)
	if err != nil {
		return place{}, err
	}
	ows := ch.PermissionOverwrites
	if ch.IsThread() {
		parent, err := d.dg.Channel(ch.ParentID, opt(ctx))
		if err != nil {
			return place{}, mapErr("read the thread's channel", err, errNoPlace)
		}
		ows = parent.PermissionOverwrites
	}
	return place{guildID: guildID, ch: ch, perms: a.in(d.bot, ows), caller: a.caller(ows), access: a}, nil
}
