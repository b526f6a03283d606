package discordtest

import (
	"slices"
	"strings"
	"time"
)

// Wire shapes of API v10 objects (Discord's developer documentation,
// resources: user, guild, channel, message, sticker). Fields Discord sends
// as null are pointers; ids and permission bitsets are strings.

type wireUser struct {
	ID            string  `json:"id"`
	Username      string  `json:"username"`
	Discriminator string  `json:"discriminator"`
	GlobalName    *string `json:"global_name"`
	Avatar        *string `json:"avatar"`
	Bot           bool    `json:"bot,omitempty"`
	PublicFlags   int     `json:"public_flags"`
}

type wireMember struct {
	User        *wireUser `json:"user,omitempty"`
	Nick        *string   `json:"nick"`
	Avatar      *string   `json:"avatar"`
	Roles       []string  `json:"roles"`
	JoinedAt    string    `json:"joined_at"`
	Deaf        bool      `json:"deaf"`
	Mute        bool      `json:"mute"`
	Flags       int       `json:"flags"`
	Pending     bool      `json:"pending"`
	Permissions string    `json:"permissions,omitempty"`
}

type wireRole struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Color       int    `json:"color"`
	Hoist       bool   `json:"hoist"`
	Position    int    `json:"position"`
	Permissions string `json:"permissions"`
	Managed     bool   `json:"managed"`
	Mentionable bool   `json:"mentionable"`
	Flags       int    `json:"flags"`
}

type wireOverwrite struct {
	ID    string `json:"id"`
	Type  int    `json:"type"`
	Allow string `json:"allow"`
	Deny  string `json:"deny"`
}

type wireThreadMetadata struct {
	Archived            bool   `json:"archived"`
	AutoArchiveDuration int    `json:"auto_archive_duration"`
	ArchiveTimestamp    string `json:"archive_timestamp"`
	Locked              bool   `json:"locked"`
}

type wireChannel struct {
	ID                   string              `json:"id"`
	Type                 int                 `json:"type"`
	GuildID              string              `json:"guild_id"`
	Name                 string              `json:"name"`
	ParentID             *string             `json:"parent_id"`
	OwnerID              string              `json:"owner_id,omitempty"`
	PermissionOverwrites []wireOverwrite     `json:"permission_overwrites,omitempty"`
	LastMessageID        *string             `json:"last_message_id"`
	RateLimitPerUser     int                 `json:"rate_limit_per_user"`
	Flags                int                 `json:"flags"`
	ThreadMetadata       *wireThreadMetadata `json:"thread_metadata,omitempty"`
	MessageCount         *int                `json:"message_count,omitempty"`
	MemberCount          *int                `json:"member_count,omitempty"`
}

type wireSticker struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	Description *string `json:"description"`
	Tags        string  `json:"tags"`
	Type        int     `json:"type"`
	FormatType  int     `json:"format_type"`
	Available   bool    `json:"available"`
	GuildID     string  `json:"guild_id"`
}

type wireStickerItem struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	FormatType int    `json:"format_type"`
}

type wireEmoji struct {
	ID   *string `json:"id"`
	Name string  `json:"name"`
}

type wireCountDetails struct {
	Burst  int `json:"burst"`
	Normal int `json:"normal"`
}

type wireReaction struct {
	Count        int              `json:"count"`
	CountDetails wireCountDetails `json:"count_details"`
	Me           bool             `json:"me"`
	MeBurst      bool             `json:"me_burst"`
	Emoji        wireEmoji        `json:"emoji"`
	BurstColors  []string         `json:"burst_colors"`
}

type wireReference struct {
	Type      int    `json:"type"`
	MessageID string `json:"message_id,omitempty"`
	ChannelID string `json:"channel_id,omitempty"`
	GuildID   string `json:"guild_id,omitempty"`
}

type wireMessage struct {
	ID                string            `json:"id"`
	Type              int               `json:"type"`
	ChannelID         string            `json:"channel_id"`
	GuildID           string            `json:"guild_id,omitempty"`
	Author            wireUser          `json:"author"`
	Member            *wireMember       `json:"member,omitempty"`
	Content           string            `json:"content"`
	Timestamp         string            `json:"timestamp"`
	EditedTimestamp   *string           `json:"edited_timestamp"`
	TTS               bool              `json:"tts"`
	MentionEveryone   bool              `json:"mention_everyone"`
	Mentions          []wireUser        `json:"mentions"`
	MentionRoles      []string          `json:"mention_roles"`
	Attachments       []struct{}        `json:"attachments"`
	Embeds            []struct{}        `json:"embeds"`
	Components        []struct{}        `json:"components"`
	Pinned            bool              `json:"pinned"`
	Flags             int               `json:"flags"`
	Reactions         []wireReaction    `json:"reactions,omitempty"`
	MessageReference  *wireReference    `json:"message_reference,omitempty"`
	ReferencedMessage *wireMessage      `json:"referenced_message,omitempty"`
	StickerItems      []wireStickerItem `json:"sticker_items,omitempty"`
	Nonce             string            `json:"nonce,omitempty"`
	WebhookID         string            `json:"webhook_id,omitempty"`
	ApplicationID     string            `json:"application_id,omitempty"`
	Thread            *wireChannel      `json:"thread,omitempty"`
}

type wireGuild struct {
	ID          string        `json:"id"`
	Name        string        `json:"name"`
	Icon        *string       `json:"icon"`
	OwnerID     string        `json:"owner_id"`
	Roles       []wireRole    `json:"roles"`
	Emojis      []struct{}    `json:"emojis"`
	Stickers    []wireSticker `json:"stickers"`
	Features    []string      `json:"features"`
	JoinedAt    string        `json:"joined_at,omitempty"`
	Large       bool          `json:"large"`
	Unavailable bool          `json:"unavailable"`
	MemberCount int           `json:"member_count"`
	Members     []wireMember  `json:"members"`
	Channels    []wireChannel `json:"channels"`
	Threads     []wireChannel `json:"threads"`
}

// wireTime is Discord's ISO 8601 timestamp with microseconds and offset.
func wireTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000-07:00") }

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func toWireUser(u User) wireUser {
	return wireUser{
		ID: u.ID, Username: u.Username, Discriminator: "0",
		GlobalName: nullable(u.GlobalName), Avatar: nullable(u.Avatar), Bot: u.Bot,
	}
}

func toWireMember(m *Member, withUser bool) wireMember {
	wm := wireMember{Nick: nullable(m.Nick), Roles: append([]string{}, m.Roles...), JoinedAt: wireTime(m.JoinedAt)}
	if withUser {
		u := toWireUser(m.User)
		wm.User = &u
	}
	return wm
}

func toWireRole(r *Role) wireRole {
	return wireRole{ID: r.ID, Name: r.Name, Position: r.Position, Permissions: FormatPermissions(r.Permissions)}
}

func toWireChannel(ch *channelState) wireChannel {
	wc := wireChannel{ID: ch.ID, Type: int(ch.Type), GuildID: ch.GuildID, Name: ch.Name, ParentID: nullable(ch.ParentID)}
	if len(ch.messages) > 0 {
		wc.LastMessageID = &ch.messages[len(ch.messages)-1].ID
	}
	if ch.Type.IsThread() {
		n, members := len(ch.messages), 1
		wc.OwnerID = ch.OwnerID
		wc.MessageCount, wc.MemberCount = &n, &members
		wc.ThreadMetadata = &wireThreadMetadata{AutoArchiveDuration: 1440, ArchiveTimestamp: wireTime(time.Unix(0, 0))}
		return wc
	}
	wc.PermissionOverwrites = []wireOverwrite{}
	for _, o := range ch.Overwrites {
		wc.PermissionOverwrites = append(wc.PermissionOverwrites, wireOverwrite{
			ID: o.ID, Type: int(o.Type), Allow: FormatPermissions(o.Allow), Deny: FormatPermissions(o.Deny),
		})
	}
	return wc
}

func toWireSticker(st *Sticker) wireSticker {
	return wireSticker{
		ID: st.ID, Name: st.Name, Description: nullable(st.Description), Tags: st.Tags,
		Type: 2, FormatType: st.FormatType, Available: true, GuildID: st.GuildID,
	}
}

// splitEmoji turns a reaction key into the emoji object: "name:id" is a
// custom emoji, anything else a unicode one.
func splitEmoji(key string) wireEmoji {
	if i := strings.LastIndexByte(key, ':'); i > 0 && i < len(key)-1 {
		id := key[i+1:]
		return wireEmoji{ID: &id, Name: strings.TrimPrefix(key[:i], "a:")}
	}
	return wireEmoji{Name: key}
}

// toWireMessage renders m; viewer is the user whose "me" the reactions
// report. referenced adds the replied-to message one level deep.
func (s *Server) toWireMessage(m *Message, viewer string, referenced bool) wireMessage {
	wm := wireMessage{
		ID: m.ID, Type: m.Type, ChannelID: m.ChannelID, Author: toWireUser(m.Author),
		Content: m.Content, Timestamp: wireTime(m.Timestamp), Pinned: m.Pinned, Nonce: m.Nonce,
		Mentions: []wireUser{}, MentionRoles: []string{}, Attachments: []struct{}{},
		Embeds: []struct{}{}, Components: []struct{}{},
	}
	if m.EditedTimestamp != nil {
		t := wireTime(*m.EditedTimestamp)
		wm.EditedTimestamp = &t
	}
	if m.InteractionID != "" {
		wm.WebhookID, wm.ApplicationID = s.appID, s.appID
	}
	for _, r := range m.Reactions {
		wm.Reactions = append(wm.Reactions, wireReaction{
			Count: len(r.UserIDs), CountDetails: wireCountDetails{Normal: len(r.UserIDs)},
			Me: slices.Contains(r.UserIDs, viewer), Emoji: splitEmoji(r.Emoji), BurstColors: []string{},
		})
	}
	if g := s.w.guilds[m.GuildID]; g != nil {
		for _, id := range m.StickerIDs {
			if st := s.stickerLocked(id); st != nil {
				wm.StickerItems = append(wm.StickerItems, wireStickerItem{ID: st.ID, Name: st.Name, FormatType: st.FormatType})
			}
		}
	}
	if m.Reference != nil {
		wm.MessageReference = &wireReference{MessageID: m.Reference.MessageID, ChannelID: m.Reference.ChannelID, GuildID: m.Reference.GuildID}
		if referenced {
			if ref := s.w.message(m.Reference.ChannelID, m.Reference.MessageID); ref != nil {
				r := s.toWireMessage(ref, viewer, false)
				wm.ReferencedMessage = &r
			}
		}
	}
	if m.ThreadID != "" {
		if th := s.w.channels[m.ThreadID]; th != nil {
			c := toWireChannel(th)
			wm.Thread = &c
		}
	}
	return wm
}

// stickerLocked finds a sticker in any guild.
func (s *Server) stickerLocked(id string) *Sticker {
	for _, g := range s.w.guilds {
		for _, st := range g.stickers {
			if st.ID == id {
				return st
			}
		}
	}
	return nil
}
