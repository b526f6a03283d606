package discord

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/quiverhq/quiver/surface"
	"github.com/quiverhq/quiver/turn"
)

// Recent returns at most min(limit, MaxRecent) of the messages people
// read among the channel's last MaxRecent (system notices left out),
// oldest first. It needs VIEW_CHANNEL and READ_MESSAGE_HISTORY.
func (d *Surface) Recent(ctx context.Context, s turn.Scope, limit int) ([]surface.Message, error) {
	p, err := d.resolve(ctx, s)
	if err != nil {
		return nil, err
	}
	limit = min(limit, MaxRecent)
	if limit <= 0 {
		return nil, nil
	}
	if err := p.require(discordgo.PermissionReadMessageHistory); err != nil {
		return nil, err
	}
	// A full page, so the system notices left out still leave limit
	// messages where there are.
	ms, err := d.dg.ChannelMessages(p.ch.ID, MaxRecent, "", "", "", opt(ctx))
	if err != nil {
		return nil, mapErr("list messages", err, errNoPlace)
	}
	slices.Reverse(ms) // Discord lists newest first
	out := d.present(s, ms)
	return out[max(0, len(out)-limit):], nil
}

// present turns Discord's messages into the surface's, the system
// notices left out.
func (d *Surface) present(s turn.Scope, ms []*discordgo.Message) []surface.Message {
	out := make([]surface.Message, 0, len(ms))
	for _, m := range ms {
		if shown(m.Type) {
			out = append(out, d.presentOne(s, m))
		}
	}
	return out
}

// presentOne turns one Discord message into the surface's.
func (d *Surface) presentOne(s turn.Scope, m *discordgo.Message) surface.Message {
	sm := surface.Message{ID: m.ID, Text: m.Content, At: m.Timestamp, Pinned: m.Pinned,
		Edited: m.EditedTimestamp != nil, Author: d.author(s, m.Author, m.Member)}
	for _, st := range m.StickerItems {
		sm.Text = strings.TrimSpace(sm.Text + " [sticker " + st.Name + "]")
	}
	for _, r := range m.Reactions {
		if r.Emoji != nil {
			sm.Reactions = append(sm.Reactions, surface.Reaction{Emoji: r.Emoji.APIName(), Count: r.Count, Mine: r.Me})
		}
	}
	if m.Thread != nil {
		sm.Thread = m.Thread.ID
	}
	return sm
}

// shown reports whether a message of type t is one a person reads as a
// message: defaults, replies, command answers and a thread's starter,
// not the system notices (a pin, a member joining, a thread created).
func shown(t discordgo.MessageType) bool {
	switch t {
	case discordgo.MessageTypeDefault, discordgo.MessageTypeReply, discordgo.MessageTypeChatInputCommand,
		discordgo.MessageTypeThreadStarterMessage, discordgo.MessageTypeContextMenuCommand:
		return true
	}
	return false
}

// author names a message's author: the bot is the agent (by the
// scope's agent name), anyone else by nickname, global name or
// username, with their Quiver user id.
func (d *Surface) author(s turn.Scope, u *discordgo.User, m *discordgo.Member) surface.Author {
	if u == nil {
		return surface.Author{Name: "someone"}
	}
	if u.ID == d.bot {
		name := s.Agent
		if name == "" {
			name = u.Username
		}
		return surface.Author{ID: UserID(u.ID), Name: name, Agent: true}
	}
	name := u.Username
	if u.GlobalName != "" {
		name = u.GlobalName
	}
	if m != nil && m.Nick != "" {
		name = m.Nick
	}
	return surface.Author{ID: UserID(u.ID), Name: name}
}

// target resolves the scope's channel and checks id is a snowflake.
func (d *Surface) target(ctx context.Context, s turn.Scope, id string) (place, error) {
	p, err := d.resolve(ctx, s)
	if err != nil {
		return place{}, err
	}
	if !isSnowflake(id) {
		return place{}, errNoMessage
	}
	return p, nil
}

// checkEmoji refuses an empty or oversized emoji before any request.
func checkEmoji(emoji string) error {
	if emoji == "" || len(emoji) > MaxEmojiBytes || strings.ContainsAny(emoji, "/?") {
		return fmt.Errorf("%w: %q is not an emoji Discord takes", errNotAllowed, emoji)
	}
	return nil
}

// React adds the bot's reaction; it needs ADD_REACTIONS and
// READ_MESSAGE_HISTORY.
func (d *Surface) React(ctx context.Context, s turn.Scope, id, emoji string) error {
	return d.reaction(ctx, s, id, emoji, true)
}

// Unreact removes the bot's reaction (Discord needs no permission for
// one's own); removing one it has not is no error.
func (d *Surface) Unreact(ctx context.Context, s turn.Scope, id, emoji string) error {
	return d.reaction(ctx, s, id, emoji, false)
}

func (d *Surface) reaction(ctx context.Context, s turn.Scope, id, emoji string, add bool) error {
	if err := checkEmoji(emoji); err != nil {
		return err
	}
	p, err := d.target(ctx, s, id)
	if err != nil {
		return err
	}
	if !add { // removing one's own reaction needs no permission
		return mapErr("remove a reaction", d.dg.MessageReactionRemove(p.ch.ID, id, emoji, "@me", opt(ctx)), errNoMessage)
	}
	if err := p.require(discordgo.PermissionReadMessageHistory, discordgo.PermissionAddReactions); err != nil {
		return err
	}
	return mapErr("react", d.dg.MessageReactionAdd(p.ch.ID, id, emoji, opt(ctx)), errNoMessage)
}

// Reply posts text as a reply (a message_reference) to the message; it
// needs the send permission and READ_MESSAGE_HISTORY.
func (d *Surface) Reply(ctx context.Context, s turn.Scope, id, text string) (surface.Message, error) {
	if err := checkText("the reply", text, MaxTextRunes); err != nil {
		return surface.Message{}, err
	}
	p, err := d.target(ctx, s, id)
	if err != nil {
		return surface.Message{}, err
	}
	if err := p.require(p.sendPerm(), discordgo.PermissionReadMessageHistory); err != nil {
		return surface.Message{}, err
	}
	// Read it first: Discord answers an unknown reference with a form
	// error, not Unknown Message.
	if _, err := d.message(ctx, p, id); err != nil {
		return surface.Message{}, err
	}
	fail := true
	return d.send(ctx, s, p.ch.ID, &discordgo.MessageSend{Content: text, Reference: &discordgo.MessageReference{
		MessageID: id, ChannelID: p.ch.ID, GuildID: p.guildID, FailIfNotExists: &fail}})
}

// Pin pins the message; it needs MANAGE_MESSAGES (or Discord's newer
// PIN_MESSAGES), of the bot and of the person asking. A channel at
// Discord's 50 pins is surface.ErrLimit.
func (d *Surface) Pin(ctx context.Context, s turn.Scope, id string) error {
	p, err := d.target(ctx, s, id)
	if err != nil {
		return err
	}
	if err := p.requirePin(); err != nil {
		return err
	}
	if err := p.callerMayPin(); err != nil {
		return err
	}
	return mapErr("pin", d.dg.ChannelMessagePin(p.ch.ID, id, opt(ctx)), errNoMessage)
}

// Unpin unpins the message; it needs what Pin needs.
func (d *Surface) Unpin(ctx context.Context, s turn.Scope, id string) error {
	p, err := d.target(ctx, s, id)
	if err != nil {
		return err
	}
	if err := p.requirePin(); err != nil {
		return err
	}
	if err := p.callerMayPin(); err != nil {
		return err
	}
	return mapErr("unpin", d.dg.ChannelMessageUnpin(p.ch.ID, id, opt(ctx)), errNoMessage)
}

// Pins lists the channel's pinned messages, latest pin first; it needs
// READ_MESSAGE_HISTORY.
func (d *Surface) Pins(ctx context.Context, s turn.Scope) ([]surface.Message, error) {
	p, err := d.resolve(ctx, s)
	if err != nil {
		return nil, err
	}
	if err := p.require(discordgo.PermissionReadMessageHistory); err != nil {
		return nil, err
	}
	ms, err := d.dg.ChannelMessagesPinned(p.ch.ID, opt(ctx))
	if err != nil {
		return nil, mapErr("list pins", err, errNoPlace)
	}
	return d.present(s, ms), nil
}

// message reads one message of the place.
func (d *Surface) message(ctx context.Context, p place, id string) (*discordgo.Message, error) {
	if err := p.require(discordgo.PermissionReadMessageHistory); err != nil {
		return nil, err
	}
	m, err := d.dg.ChannelMessage(p.ch.ID, id, opt(ctx))
	if err != nil {
		return nil, mapErr("read the message", err, errNoMessage)
	}
	return m, nil
}

// Edit replaces the text of one of the bot's own messages. Discord
// refuses anyone else's (50005), which is surface.ErrNotAllowed; so no
// permission is needed and the message is not read first.
func (d *Surface) Edit(ctx context.Context, s turn.Scope, id, text string) error {
	if err := checkText("the new text", text, MaxTextRunes); err != nil {
		return err
	}
	p, err := d.target(ctx, s, id)
	if err != nil {
		return err
	}
	_, err = d.dg.ChannelMessageEdit(p.ch.ID, id, text, opt(ctx))
	return mapErr("edit", err, errNoMessage)
}

// Delete deletes one of the bot's own messages, or another's when the
// bot and the person asking both hold MANAGE_MESSAGES.
func (d *Surface) Delete(ctx context.Context, s turn.Scope, id string) error {
	p, err := d.target(ctx, s, id)
	if err != nil {
		return err
	}
	m, err := d.message(ctx, p, id)
	if err != nil {
		return err
	}
	if m.Author == nil || m.Author.ID != d.bot {
		if err := p.require(discordgo.PermissionManageMessages); err != nil {
			return err
		}
		if err := p.callerRequire(discordgo.PermissionManageMessages); err != nil {
			return err
		}
	}
	return mapErr("delete", d.dg.ChannelMessageDelete(p.ch.ID, id, opt(ctx)), errNoMessage)
}

// checkText refuses text blank or over limit runes.
func checkText(what, text string, limit int) error {
	switch n := utf8.RuneCountInString(text); {
	case strings.TrimSpace(text) == "":
		return fmt.Errorf("%w: %s is empty", errNotAllowed, what)
	case n > limit:
		return fmt.Errorf("%w: %s is %d characters; Discord's limit is %d", surface.ErrLimit, what, n, limit)
	}
	return nil
}
