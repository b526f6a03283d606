package discord

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/bwmarrin/discordgo"

	"github.com/quiverhq/quiver/surface"
	"github.com/quiverhq/quiver/turn"
)

// nonceLen is Discord's limit on a nonce's length.
const nonceLen = 25

// maxTurns bounds the per-turn counters kept for nonces; past it they
// start again, which at worst makes a repeat of an identical post in a
// long-gone turn's window collapse into the first.
const maxTurns = 4096

type keyCtx struct{}

// WithIdempotencyKey returns ctx carrying key: every message the surface
// posts under it gets a nonce derived from the key, the channel and the
// message, so a retried run carrying the same key (a scheduled task's)
// posts each message once within Discord's nonce window. An empty key
// leaves ctx as it is.
func WithIdempotencyKey(ctx context.Context, key string) context.Context {
	if key == "" {
		return ctx
	}
	return context.WithValue(ctx, keyCtx{}, key)
}

// nonce derives the nonce of one post: from the context's key, the
// channel and the payload; else from the turn, the turn's count of posts
// so far, the channel and the payload.
func (d *Surface) nonce(ctx context.Context, s turn.Scope, channelID string, m *discordgo.MessageSend) string {
	h := sha256.New()
	if key, ok := ctx.Value(keyCtx{}).(string); ok {
		fmt.Fprintf(h, "key\x00%s\x00", key)
	} else {
		fmt.Fprintf(h, "turn\x00%s\x00%d\x00", s.TurnID, d.count(s.TurnID))
	}
	fmt.Fprintf(h, "%s\x00%q\x00%q", channelID, m.Content, m.StickerIDs)
	if m.Reference != nil {
		fmt.Fprintf(h, "\x00%s", m.Reference.MessageID)
	}
	return hex.EncodeToString(h.Sum(nil))[:nonceLen]
}

// count returns how many posts the turn has made, counting this one.
func (d *Surface) count(turnID string) uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.turns) >= maxTurns {
		clear(d.turns)
	}
	d.turns[turnID]++
	return d.turns[turnID]
}

// sendBody is a message with the nonce fields discordgo v0.28.1's
// MessageSend lacks.
type sendBody struct {
	*discordgo.MessageSend
	Nonce        string `json:"nonce"`
	EnforceNonce bool   `json:"enforce_nonce"`
}

// send posts m into the channel with a nonce and enforce_nonce; mentions
// of everyone and of roles are not pinged.
func (d *Surface) send(ctx context.Context, s turn.Scope, channelID string, m *discordgo.MessageSend) (surface.Message, error) {
	m.AllowedMentions = &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{discordgo.AllowedMentionTypeUsers}}
	body := sendBody{MessageSend: m, Nonce: d.nonce(ctx, s, channelID, m), EnforceNonce: true}
	ep := discordgo.EndpointChannelMessages(channelID)
	raw, err := d.dg.RequestWithBucketID("POST", ep, body, ep, opt(ctx))
	if err != nil {
		return surface.Message{}, mapErr("post", err, errNoMessage)
	}
	var out discordgo.Message
	if err := discordgo.Unmarshal(raw, &out); err != nil {
		return surface.Message{}, fmt.Errorf("discord: read the posted message: %w", err)
	}
	return d.presentOne(s, &out), nil
}

// CreateThread starts a public thread, from the message from or (from
// "") from the channel, and posts first in it. It needs
// CREATE_PUBLIC_THREADS and SEND_MESSAGES_IN_THREADS (and
// READ_MESSAGE_HISTORY from a message); a thread cannot start in a
// thread.
func (d *Surface) CreateThread(ctx context.Context, s turn.Scope, from, name, first string) (surface.Thread, error) {
	if err := checkText("the thread's name", name, MaxThreadNameRunes); err != nil {
		return surface.Thread{}, err
	}
	if err := checkText("the first message", first, MaxTextRunes); err != nil {
		return surface.Thread{}, err
	}
	p, err := d.resolve(ctx, s)
	if err != nil {
		return surface.Thread{}, err
	}
	if from != "" && !isSnowflake(from) {
		return surface.Thread{}, errNoMessage
	}
	if p.thread() {
		return surface.Thread{}, fmt.Errorf("%w: a thread cannot be started inside a thread", errNotAllowed)
	}
	want := []int64{discordgo.PermissionCreatePublicThreads, discordgo.PermissionSendMessagesInThreads}
	if from != "" {
		want = append(want, discordgo.PermissionReadMessageHistory)
	}
	if err := p.require(want...); err != nil {
		return surface.Thread{}, err
	}
	start := &discordgo.ThreadStart{Name: name, AutoArchiveDuration: 1440, Type: discordgo.ChannelTypeGuildPublicThread}
	var th *discordgo.Channel
	if from != "" {
		th, err = d.dg.MessageThreadStartComplex(p.ch.ID, from, start, opt(ctx))
	} else {
		th, err = d.dg.ThreadStartComplex(p.ch.ID, start, opt(ctx))
	}
	if err != nil {
		if e := threadErr(err); e != nil {
			return surface.Thread{}, e
		}
		return surface.Thread{}, mapErr("start a thread", err, errNoMessage)
	}
	msg, err := d.send(ctx, s, th.ID, &discordgo.MessageSend{Content: first})
	if err != nil {
		return surface.Thread{}, err
	}
	return surface.Thread{Place: surface.Place{ID: th.ID, Name: th.Name, Parent: p.ch.ID}, First: msg}, nil
}

// threadErr words Discord's refusal of a second thread from a message.
func threadErr(err error) error {
	var re *discordgo.RESTError
	if errors.As(err, &re) && re.Message != nil && re.Message.Code == discordgo.ErrCodeThreadAlreadyCreatedForThisMessage {
		return fmt.Errorf("%w: a thread was already started from that message", errNotAllowed)
	}
	return nil
}

// Places lists at most limit of the server's text channels and active
// threads the bot can see and post in, the scope's own left out, the
// latest active first.
func (d *Surface) Places(ctx context.Context, s turn.Scope, limit int) ([]surface.Place, error) {
	p, err := d.resolve(ctx, s)
	if err != nil || limit <= 0 {
		return nil, err
	}
	chans, err := d.dg.GuildChannels(p.guildID, opt(ctx))
	if err != nil {
		return nil, mapErr("list channels", err, errNoPlace)
	}
	threads, err := d.dg.GuildThreadsActive(p.guildID, opt(ctx))
	if err != nil {
		return nil, mapErr("list threads", err, errNoPlace)
	}
	a := p.access
	byID := make(map[string]*discordgo.Channel, len(chans))
	var cands []*discordgo.Channel
	for _, c := range chans {
		byID[c.ID] = c
		if c.Type == discordgo.ChannelTypeGuildText || c.Type == discordgo.ChannelTypeGuildNews {
			cands = append(cands, c)
		}
	}
	cands = append(cands, threads.Threads...)
	var out []surface.Place
	for _, c := range sortByActivity(cands) {
		if c.ID == p.ch.ID || !d.canPost(a, c, byID) {
			continue
		}
		out = append(out, surface.Place{ID: c.ID, Name: c.Name, Parent: threadParent(c)})
		if len(out) == limit {
			break
		}
	}
	return out, nil
}

// canPost reports whether the bot may post in c (a thread by its
// parent's overwrites).
func (d *Surface) canPost(a guildAccess, c *discordgo.Channel, byID map[string]*discordgo.Channel) bool {
	ows, need := c.PermissionOverwrites, int64(discordgo.PermissionSendMessages)
	if c.Type == discordgo.ChannelTypeGuildPrivateThread {
		return false // posting needs membership the list does not show
	}
	if c.IsThread() {
		parent := byID[c.ParentID]
		if parent == nil || c.ThreadMetadata != nil && (c.ThreadMetadata.Archived || c.ThreadMetadata.Locked) {
			return false
		}
		ows, need = parent.PermissionOverwrites, discordgo.PermissionSendMessagesInThreads
	}
	// Both the bot and the person asking may post there: the list shows
	// no channel the person cannot see.
	return a.in(d.bot, ows)&need == need && a.caller(ows)&(need|discordgo.PermissionViewChannel) == need|discordgo.PermissionViewChannel
}

func threadParent(c *discordgo.Channel) string {
	if c.IsThread() {
		return c.ParentID
	}
	return ""
}

// sortByActivity orders channels by their last message, latest first;
// snowflakes order by time, so longer ids are later.
func sortByActivity(cs []*discordgo.Channel) []*discordgo.Channel {
	last := func(c *discordgo.Channel) uint64 {
		n, _ := strconv.ParseUint(cmp.Or(c.LastMessageID, c.ID), 10, 64)
		return n
	}
	slices.SortStableFunc(cs, func(a, b *discordgo.Channel) int { return cmp.Compare(last(b), last(a)) })
	return cs
}

// Post posts text into a channel or thread of the organisation's server
// as the agent; it needs the send permission there.
func (d *Surface) Post(ctx context.Context, s turn.Scope, placeID, text string) (surface.Message, error) {
	if err := checkText("the message", text, MaxTextRunes); err != nil {
		return surface.Message{}, err
	}
	if _, err := d.resolve(ctx, s); err != nil {
		return surface.Message{}, err
	}
	p, err := d.placeOf(ctx, s, placeID)
	if err != nil {
		return surface.Message{}, err
	}
	if p.caller&discordgo.PermissionViewChannel == 0 {
		// A channel the person cannot see is, to them, no channel.
		return surface.Message{}, errNoPlace
	}
	if err := p.require(p.sendPerm()); err != nil {
		return surface.Message{}, err
	}
	if err := p.callerRequire(p.sendPerm()); err != nil {
		return surface.Message{}, err
	}
	return d.send(ctx, s, p.ch.ID, &discordgo.MessageSend{Content: text})
}

// Stickers lists the server's stickers (GET /guilds/{id}/stickers,
// which discordgo v0.28.1 has no method for).
func (d *Surface) Stickers(ctx context.Context, s turn.Scope) ([]surface.Sticker, error) {
	p, err := d.resolve(ctx, s)
	if err != nil {
		return nil, err
	}
	all, err := d.guildStickers(ctx, p.guildID)
	if err != nil {
		return nil, err
	}
	out := make([]surface.Sticker, 0, len(all))
	for _, st := range all {
		if st.Available {
			out = append(out, surface.Sticker{ID: st.ID, Name: st.Name, Description: st.Description})
		}
	}
	return out, nil
}

func (d *Surface) guildStickers(ctx context.Context, guildID string) ([]*discordgo.Sticker, error) {
	ep := discordgo.EndpointGuild(guildID) + "/stickers"
	raw, err := d.dg.RequestWithBucketID("GET", ep, nil, ep, opt(ctx))
	if err != nil {
		return nil, mapErr("list stickers", err, errNoPlace)
	}
	var all []*discordgo.Sticker
	if err := discordgo.Unmarshal(raw, &all); err != nil {
		return nil, fmt.Errorf("discord: read the stickers: %w", err)
	}
	return all, nil
}

// SendSticker sends one of the server's own stickers into the channel
// (so USE_EXTERNAL_STICKERS, which other servers' stickers need, is
// never asked for); it needs the send permission.
func (d *Surface) SendSticker(ctx context.Context, s turn.Scope, id string) error {
	p, err := d.resolve(ctx, s)
	if err != nil {
		return err
	}
	if err := p.require(p.sendPerm()); err != nil {
		return err
	}
	all, err := d.guildStickers(ctx, p.guildID)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(all, func(st *discordgo.Sticker) bool { return st.ID == id && st.Available }) {
		return fmt.Errorf("%w: %q is not one of this server's stickers: list them first", errNotAllowed, id)
	}
	_, err = d.send(ctx, s, p.ch.ID, &discordgo.MessageSend{StickerIDs: []string{id}})
	return err
}
