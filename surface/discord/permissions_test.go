package discord

import (
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/quiverhq/quiver/internal/discordtest"
)

// checked is every bit the surface asks for.
var checked = func() (m int64) {
	for _, n := range permNames {
		m |= n.bit
	}
	return m | permPinMessages
}()

// FuzzPermissions: the surface's computation agrees with Discord's
// algorithm as the fake implements it, on every bit the surface checks.
func FuzzPermissions(f *testing.F) {
	f.Add(uint64(discordtest.PermDefaultEveryone), uint64(discordtest.PermManageMessages), uint64(0), uint64(0), uint64(0),
		uint64(discordtest.PermAddReactions), uint64(0), uint64(0), uint64(0), true, false, false)
	f.Add(uint64(0), uint64(discordtest.PermAdministrator), uint64(0), uint64(discordtest.PermViewChannel), uint64(0),
		uint64(0), uint64(0), uint64(0), uint64(0), true, false, false)
	f.Add(uint64(discordtest.PermDefaultEveryone), uint64(0), uint64(0), uint64(0), uint64(discordtest.PermViewChannel),
		uint64(0), uint64(0), uint64(0), uint64(0), false, false, true)
	f.Fuzz(func(t *testing.T, everyone, role, eAllow, eDeny, rAllow, rDeny, mAllow, mDeny, other uint64, hasRole, owner, thread bool) {
		const guild, bot, roleID = "100", "200", "300"
		in := discordtest.PermissionInput{GuildID: guild, UserID: bot, Thread: thread,
			Roles: map[string]uint64{guild: everyone, roleID: role, "400": other},
			Overwrites: []discordtest.Overwrite{
				{ID: guild, Type: discordtest.OverwriteRole, Allow: eAllow, Deny: eDeny},
				{ID: roleID, Type: discordtest.OverwriteRole, Allow: rAllow, Deny: rDeny},
				{ID: bot, Type: discordtest.OverwriteMember, Allow: mAllow, Deny: mDeny},
				{ID: "400", Type: discordtest.OverwriteRole, Allow: other, Deny: other},
			}}
		a := guildAccess{guildID: guild, ownerID: "999", roles: map[string]int64{guild: int64(everyone), roleID: int64(role), "400": int64(other)}}
		if hasRole {
			in.MemberRoles = []string{roleID}
			a.botRoles = []string{roleID}
		}
		if owner {
			in.OwnerID, a.ownerID = bot, bot
		}
		var ows []*discordgo.PermissionOverwrite
		for _, o := range in.Overwrites {
			ows = append(ows, &discordgo.PermissionOverwrite{ID: o.ID, Type: discordgo.PermissionOverwriteType(o.Type), Allow: int64(o.Allow), Deny: int64(o.Deny)})
		}
		want := int64(discordtest.ComputePermissions(in)) & checked
		if got := a.in(bot, ows) & checked; got != want {
			t.Errorf("permissions %#x, Discord's %#x", got, want)
		}
	})
}
