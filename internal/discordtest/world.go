package discordtest

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// User is a Discord user as the fake knows it. Avatar is the avatar hash
// ("" for the default avatar); the CDN serves a PNG for a set hash.
type User struct {
	ID         string
	Username   string
	GlobalName string
	Avatar     string
	Bot        bool
}

// Guild is a guild (server). Its @everyone role has the guild's id and
// EveryonePermissions.
type Guild struct {
	ID                  string
	Name                string
	OwnerID             string
	EveryonePermissions uint64
}

// Role is a guild role.
type Role struct {
	ID          string
	GuildID     string
	Name        string
	Permissions uint64
	Position    int
}

// ChannelType is Discord's channel type number.
type ChannelType int

// The channel types the fake models.
const (
	ChannelText          ChannelType = 0
	ChannelPublicThread  ChannelType = 11
	ChannelPrivateThread ChannelType = 12
)

// IsThread reports whether t is one of the thread types.
func (t ChannelType) IsThread() bool { return t == ChannelPublicThread || t == ChannelPrivateThread }

// Channel is a guild text channel or a thread. A thread has ParentID and
// takes its permission overwrites from the parent; OwnerID is the user who
// started it.
type Channel struct {
	ID         string
	GuildID    string
	Name       string
	Type       ChannelType
	ParentID   string
	OwnerID    string
	Overwrites []Overwrite
}

// Member is a user's membership of a guild: roles are role ids without
// @everyone.
type Member struct {
	GuildID  string
	User     User
	Nick     string
	Roles    []string
	JoinedAt time.Time
}

// Sticker is a guild sticker. FormatType is 1 PNG, 2 APNG, 3 Lottie, 4 GIF.
type Sticker struct {
	ID          string
	GuildID     string
	Name        string
	Description string
	Tags        string
	FormatType  int
}

// MessageReference points a reply at the message it answers.
type MessageReference struct {
	MessageID string
	ChannelID string
	GuildID   string
}

// Reaction is one emoji on a message and who reacted with it, in order.
// Emoji is the unicode emoji or "name:id" for a custom one.
type Reaction struct {
	Emoji   string
	UserIDs []string
}

// Message is a stored message. InteractionID is set for the response and
// the followups of an interaction.
type Message struct {
	ID              string
	ChannelID       string
	GuildID         string
	Author          User
	Content         string
	Timestamp       time.Time
	EditedTimestamp *time.Time
	Pinned          bool
	Reactions       []Reaction
	Reference       *MessageReference
	StickerIDs      []string
	Nonce           string
	ThreadID        string
	InteractionID   string
	// Type is Discord's message type: 0 default, 19 reply, 20 command response.
	Type int
}

// Command is a registered application command. Options is kept as the
// JSON the client sent.
type Command struct {
	ID                       string
	ApplicationID            string
	GuildID                  string
	Name                     string
	Description              string
	Type                     int
	DefaultMemberPermissions *uint64
	Options                  json.RawMessage
	Version                  string
}

// InteractionResponse is one callback the bot posted for an interaction
// (POST /interactions/{id}/{token}/callback), as sent.
type InteractionResponse struct {
	InteractionID string
	Token         string
	Type          int
	Data          json.RawMessage
}

type guildState struct {
	Guild
	roles    map[string]*Role
	members  map[string]*Member
	stickers []*Sticker
}

type channelState struct {
	Channel
	messages []*Message // ascending id
	pins     []string   // most recently pinned first
}

type interactionState struct {
	id, token, channelID, guildID string
	responded                     bool
	originalID                    string
}

// world is the fake's data; every access holds Server.mu.
type world struct {
	users        map[string]*User
	guilds       map[string]*guildState
	guildOrder   []string
	channels     map[string]*channelState
	commands     map[string][]*Command // key: guild id, "" for global
	interactions map[string]*interactionState
	responses    []InteractionResponse
}

func newWorld() *world {
	return &world{
		users:        map[string]*User{},
		guilds:       map[string]*guildState{},
		channels:     map[string]*channelState{},
		commands:     map[string][]*Command{},
		interactions: map[string]*interactionState{},
	}
}

func (w *world) message(channelID, messageID string) *Message {
	ch := w.channels[channelID]
	if ch == nil {
		return nil
	}
	for _, m := range ch.messages {
		if m.ID == messageID {
			return m
		}
	}
	return nil
}

func (w *world) deleteMessage(ch *channelState, id string) {
	ch.messages = slices.DeleteFunc(ch.messages, func(m *Message) bool { return m.ID == id })
	ch.pins = slices.DeleteFunc(ch.pins, func(p string) bool { return p == id })
}

// permissionsIn computes a user's permissions in a channel; a thread uses
// its parent's overwrites. It is 0 for a user outside the guild.
func (w *world) permissionsIn(userID string, ch *channelState) uint64 {
	g := w.guilds[ch.GuildID]
	if g == nil {
		return 0
	}
	m := g.members[userID]
	if m == nil {
		return 0
	}
	roles := make(map[string]uint64, len(g.roles))
	for id, r := range g.roles {
		roles[id] = r.Permissions
	}
	overwrites := ch.Overwrites
	if ch.Type.IsThread() {
		if parent := w.channels[ch.ParentID]; parent != nil {
			overwrites = parent.Overwrites
		}
	}
	return ComputePermissions(PermissionInput{
		GuildID: g.ID, OwnerID: g.OwnerID, UserID: userID,
		MemberRoles: m.Roles, Roles: roles, Overwrites: overwrites,
		Thread: ch.Type.IsThread(),
	})
}

func copyMessage(m *Message) Message {
	c := *m
	c.Reactions = make([]Reaction, len(m.Reactions))
	for i, r := range m.Reactions {
		c.Reactions[i] = Reaction{Emoji: r.Emoji, UserIDs: slices.Clone(r.UserIDs)}
	}
	c.StickerIDs = slices.Clone(m.StickerIDs)
	if m.Reference != nil {
		ref := *m.Reference
		c.Reference = &ref
	}
	if m.EditedTimestamp != nil {
		t := *m.EditedTimestamp
		c.EditedTimestamp = &t
	}
	return c
}

func mustf(ok bool, format string, args ...any) {
	if !ok {
		panic("discordtest: " + fmt.Sprintf(format, args...))
	}
}
