package discordtest

import (
	"errors"
	"fmt"
	"strconv"
)

// Permission bits, as Discord numbers them (the permissions topic of its
// developer documentation). Only the bits the fake checks or tests use are
// named; every bit takes part in the computation.
const (
	PermCreateInstantInvite   uint64 = 1 << 0
	PermKickMembers           uint64 = 1 << 1
	PermAdministrator         uint64 = 1 << 3
	PermManageChannels        uint64 = 1 << 4
	PermAddReactions          uint64 = 1 << 6
	PermViewChannel           uint64 = 1 << 10
	PermSendMessages          uint64 = 1 << 11
	PermSendTTSMessages       uint64 = 1 << 12
	PermManageMessages        uint64 = 1 << 13
	PermEmbedLinks            uint64 = 1 << 14
	PermAttachFiles           uint64 = 1 << 15
	PermReadMessageHistory    uint64 = 1 << 16
	PermMentionEveryone       uint64 = 1 << 17
	PermUseExternalEmojis     uint64 = 1 << 18
	PermManageThreads         uint64 = 1 << 34
	PermCreatePublicThreads   uint64 = 1 << 35
	PermCreatePrivateThreads  uint64 = 1 << 36
	PermUseExternalStickers   uint64 = 1 << 37
	PermSendMessagesInThreads uint64 = 1 << 38
	PermModerateMembers       uint64 = 1 << 40
	// PermPinMessages is the dedicated pin permission Discord split out of
	// MANAGE_MESSAGES; Options.PinPermission selects which one pinning needs.
	PermPinMessages uint64 = 1 << 51

	// PermAll is what the owner and an administrator hold: every bit
	// through PermPinMessages.
	PermAll uint64 = 1<<52 - 1

	// PermDefaultEveryone is a usable @everyone role for tests: view,
	// send, read history, react, send in threads, create public threads.
	PermDefaultEveryone = PermViewChannel | PermSendMessages | PermReadMessageHistory |
		PermAddReactions | PermSendMessagesInThreads | PermCreatePublicThreads |
		PermEmbedLinks | PermAttachFiles
)

// sendGroup is what Discord denies implicitly with SEND_MESSAGES in a text
// channel: without the right to send, a member cannot mention everyone,
// send TTS, attach files or embed links either.
const sendGroup = PermMentionEveryone | PermSendTTSMessages | PermAttachFiles | PermEmbedLinks

// OverwriteType says whom a channel overwrite targets, as on the wire.
type OverwriteType int

// The two overwrite targets.
const (
	OverwriteRole   OverwriteType = 0
	OverwriteMember OverwriteType = 1
)

// Overwrite is one channel permission overwrite: ID is a role id (the
// guild id for @everyone) or a user id, as Type says.
type Overwrite struct {
	ID    string
	Type  OverwriteType
	Allow uint64
	Deny  uint64
}

// PermissionInput is everything Discord's algorithm reads to compute one
// member's permissions in one channel.
type PermissionInput struct {
	GuildID string
	OwnerID string
	UserID  string
	// MemberRoles are the member's role ids, without @everyone.
	MemberRoles []string
	// Roles maps role id to its permission bits; the @everyone role is
	// keyed by GuildID. A role missing from the map grants nothing.
	Roles map[string]uint64
	// Overwrites are the channel's (for a thread: its parent's). Nil means
	// guild-level permissions only.
	Overwrites []Overwrite
	// Thread marks a thread channel, where the SEND_MESSAGES group is not
	// implicitly denied (threads use SEND_MESSAGES_IN_THREADS).
	Thread bool
}

// ComputePermissions returns the member's effective permissions in the
// channel the way Discord documents it: the owner holds everything; base =
// @everyone | each member role; ADMINISTRATOR in base grants everything;
// then the @everyone overwrite (deny, then allow), the member's role
// overwrites combined (all denies, then all allows), and the member's own
// overwrite, in that order. Without VIEW_CHANNEL nothing else applies, and
// without SEND_MESSAGES the send group is denied.
func ComputePermissions(in PermissionInput) uint64 {
	if in.OwnerID != "" && in.UserID == in.OwnerID {
		return PermAll
	}
	base := in.Roles[in.GuildID]
	for _, r := range in.MemberRoles {
		base |= in.Roles[r]
	}
	if base&PermAdministrator != 0 {
		return PermAll
	}
	perms := applyOverwrites(base, in)
	if perms&PermViewChannel == 0 {
		return 0
	}
	if !in.Thread && perms&PermSendMessages == 0 {
		perms &^= sendGroup
	}
	return perms
}

func applyOverwrites(perms uint64, in PermissionInput) uint64 {
	byID := make(map[string]Overwrite, len(in.Overwrites))
	for _, o := range in.Overwrites {
		byID[overwriteKey(o.Type, o.ID)] = o
	}
	if o, ok := byID[overwriteKey(OverwriteRole, in.GuildID)]; ok {
		perms &^= o.Deny
		perms |= o.Allow
	}
	var allow, deny uint64
	for _, r := range in.MemberRoles {
		if o, ok := byID[overwriteKey(OverwriteRole, r)]; ok {
			allow |= o.Allow
			deny |= o.Deny
		}
	}
	perms &^= deny
	perms |= allow
	if o, ok := byID[overwriteKey(OverwriteMember, in.UserID)]; ok {
		perms &^= o.Deny
		perms |= o.Allow
	}
	return perms
}

func overwriteKey(t OverwriteType, id string) string {
	return strconv.Itoa(int(t)) + ":" + id
}

// errNotDecimal is returned for a permission string or snowflake that is
// not a plain unsigned decimal number.
var errNotDecimal = errors.New("not an unsigned decimal integer")

// ParsePermissions parses Discord's serialised permission bitset: an
// unsigned decimal string ("0" up to 2^64-1), no sign, no spaces, no
// leading zeros except "0" itself.
func ParsePermissions(s string) (uint64, error) {
	v, err := parseDecimal(s)
	if err != nil {
		return 0, fmt.Errorf("parse permissions %q: %w", s, err)
	}
	return v, nil
}

// FormatPermissions is the inverse of ParsePermissions.
func FormatPermissions(p uint64) string { return strconv.FormatUint(p, 10) }

func parseDecimal(s string) (uint64, error) {
	if s == "" || len(s) > 20 {
		return 0, errNotDecimal
	}
	if len(s) > 1 && s[0] == '0' {
		return 0, errNotDecimal
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, errNotDecimal
		}
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, errNotDecimal
	}
	return v, nil
}
