package discordtest

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/google/go-cmp/cmp"
)

// Sending twice with the same nonce and enforce_nonce yields one message;
// after the nonce window, or without enforce_nonce, a second one is made.
func TestEnforceNonceReturnsTheFirstMessage(t *testing.T) {
	f := newFixture(t, nil)
	first := f.sendNonce(t, f.text.ID, "exactly once", "turn-42")
	second := f.sendNonce(t, f.text.ID, "exactly once", "turn-42")
	if first.ID != second.ID {
		t.Errorf("second send made %s, want the first message %s", second.ID, first.ID)
	}
	if n := len(f.srv.Messages(f.text.ID)); n != 1 {
		t.Fatalf("%d messages stored, want 1", n)
	}
	if got := f.srv.Messages(f.text.ID)[0].Nonce; got != "turn-42" {
		t.Errorf("stored nonce %q", got)
	}

	f.sendNonce(t, f.text.ID, "another", "turn-43")
	if _, err := f.dg.ChannelMessageSend(f.text.ID, "no nonce"); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(6 * time.Minute)
	late := f.sendNonce(t, f.text.ID, "exactly once", "turn-42")
	if late.ID == first.ID {
		t.Error("a send after the nonce window returned the old message")
	}
	if n := len(f.srv.Messages(f.text.ID)); n != 4 {
		t.Errorf("%d messages stored, want 4", n)
	}
}

func TestPinNeedsManageMessages(t *testing.T) {
	f := newFixture(t, nil)
	m, err := f.dg.ChannelMessageSend(f.text.ID, "pin me")
	if err != nil {
		t.Fatal(err)
	}
	err = f.dg.ChannelMessagePin(f.text.ID, m.ID)
	restErr(t, err, http.StatusForbidden, 50013)
	var re *discordgo.RESTError
	if errors.As(err, &re) && re.Message.Message != "Missing Permissions" {
		t.Errorf("message %q, want Missing Permissions", re.Message.Message)
	}
	if pins := f.srv.Pins(f.text.ID); len(pins) != 0 {
		t.Fatalf("refused pin stored %v", pins)
	}

	mods := f.srv.AddRole(Role{GuildID: f.guild.ID, Name: "mods", Permissions: PermManageMessages})
	f.srv.AddMemberRole(f.guild.ID, f.srv.Bot().ID, mods.ID)
	if err := f.dg.ChannelMessagePin(f.text.ID, m.ID); err != nil {
		t.Fatalf("pin with MANAGE_MESSAGES: %v", err)
	}
	pinned, err := f.dg.ChannelMessagesPinned(f.text.ID)
	if err != nil || len(pinned) != 1 || pinned[0].ID != m.ID || !pinned[0].Pinned {
		t.Fatalf("ChannelMessagesPinned = %+v, %v", pinned, err)
	}
	if err := f.dg.ChannelMessageUnpin(f.text.ID, m.ID); err != nil {
		t.Fatal(err)
	}
	if pins := f.srv.Pins(f.text.ID); len(pins) != 0 {
		t.Errorf("after unpin: %v", pins)
	}

	// A channel overwrite on the role takes the permission away again.
	f.srv.SetChannelOverwrites(f.text.ID, []Overwrite{{ID: mods.ID, Type: OverwriteRole, Deny: PermManageMessages}})
	restErr(t, f.dg.ChannelMessagePin(f.text.ID, m.ID), http.StatusForbidden, 50013)
}

func TestPinPermissionOption(t *testing.T) {
	f := newFixture(t, &Options{PinPermission: PermPinMessages})
	m, err := f.dg.ChannelMessageSend(f.text.ID, "pin me")
	if err != nil {
		t.Fatal(err)
	}
	f.srv.SetRolePermissions(f.guild.ID, f.guild.ID, PermDefaultEveryone|PermManageMessages)
	restErr(t, f.dg.ChannelMessagePin(f.text.ID, m.ID), http.StatusForbidden, 50013)
	f.srv.SetRolePermissions(f.guild.ID, f.guild.ID, PermDefaultEveryone|PermPinMessages)
	if err := f.dg.ChannelMessagePin(f.text.ID, m.ID); err != nil {
		t.Fatalf("pin with PIN_MESSAGES: %v", err)
	}
}

func TestThreads(t *testing.T) {
	f := newFixture(t, nil)
	m, err := f.dg.ChannelMessageSend(f.text.ID, "let's discuss")
	if err != nil {
		t.Fatal(err)
	}
	th, err := f.dg.MessageThreadStart(f.text.ID, m.ID, "discussion", 60)
	if err != nil {
		t.Fatalf("MessageThreadStart: %v", err)
	}
	if th.ID != m.ID || th.Type != discordgo.ChannelTypeGuildPublicThread || th.ParentID != f.text.ID || th.Name != "discussion" {
		t.Errorf("thread %+v", th)
	}
	_, err = f.dg.MessageThreadStart(f.text.ID, m.ID, "again", 60)
	restErr(t, err, http.StatusBadRequest, 160004)
	if got, _ := f.dg.ChannelMessage(f.text.ID, m.ID); got == nil || got.Thread == nil || got.Thread.ID != th.ID {
		t.Errorf("starter message %+v lacks its thread", got)
	}

	if _, err := f.dg.ChannelMessageSend(th.ID, "in the thread"); err != nil {
		t.Fatalf("send in thread: %v", err)
	}
	if ms := f.srv.Messages(th.ID); len(ms) != 1 || ms[0].Content != "in the thread" {
		t.Errorf("thread messages %+v", ms)
	}

	free, err := f.dg.ThreadStart(f.text.ID, "no starter", discordgo.ChannelTypeGuildPublicThread, 60)
	if err != nil || free.Type != discordgo.ChannelTypeGuildPublicThread || free.ID == m.ID {
		t.Fatalf("ThreadStart = %+v, %v", free, err)
	}
	var names []string
	for _, c := range f.srv.Threads(f.text.ID) {
		names = append(names, c.Name)
	}
	if diff := cmp.Diff([]string{"discussion", "no starter"}, names); diff != "" {
		t.Errorf("Threads (-want +got):\n%s", diff)
	}

	// Threads take the parent's overwrites.
	f.srv.SetChannelOverwrites(f.text.ID, []Overwrite{{ID: f.guild.ID, Type: OverwriteRole,
		Deny: PermSendMessagesInThreads | PermCreatePublicThreads}})
	_, err = f.dg.ChannelMessageSend(th.ID, "denied")
	restErr(t, err, http.StatusForbidden, 50013)
	_, err = f.dg.ThreadStart(f.text.ID, "denied", discordgo.ChannelTypeGuildPublicThread, 60)
	restErr(t, err, http.StatusForbidden, 50013)
	if _, err := f.dg.ChannelMessageSend(f.text.ID, "parent still open"); err != nil {
		t.Errorf("send in parent: %v", err)
	}
	_, err = f.dg.ThreadStart(f.text.ID, "private", discordgo.ChannelTypeGuildPrivateThread, 60)
	restErr(t, err, http.StatusForbidden, 50013) // no CREATE_PRIVATE_THREADS
}

func TestReactions(t *testing.T) {
	f := newFixture(t, nil)
	m, err := f.dg.ChannelMessageSend(f.text.ID, "react to me")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []string{"👍", "blob:123456789012345678", "👍"} {
		if err := f.dg.MessageReactionAdd(f.text.ID, m.ID, e); err != nil {
			t.Fatalf("MessageReactionAdd(%s): %v", e, err)
		}
	}
	bot := f.srv.Bot().ID
	want := []Reaction{{Emoji: "👍", UserIDs: []string{bot}}, {Emoji: "blob:123456789012345678", UserIDs: []string{bot}}}
	if diff := cmp.Diff(want, f.srv.Reactions(f.text.ID, m.ID)); diff != "" {
		t.Errorf("Reactions (-want +got):\n%s", diff)
	}
	users, err := f.dg.MessageReactions(f.text.ID, m.ID, "👍", 10, "", "")
	if err != nil || len(users) != 1 || users[0].ID != bot {
		t.Errorf("MessageReactions = %+v, %v", users, err)
	}
	got, err := f.dg.ChannelMessage(f.text.ID, m.ID)
	if err != nil || len(got.Reactions) != 2 || !got.Reactions[0].Me || got.Reactions[0].Count != 1 ||
		got.Reactions[1].Emoji.ID != "123456789012345678" || got.Reactions[1].Emoji.Name != "blob" {
		t.Errorf("message reactions %+v, %v", got.Reactions, err)
	}
	if err := f.dg.MessageReactionRemove(f.text.ID, m.ID, "👍", "@me"); err != nil {
		t.Fatal(err)
	}
	if rs := f.srv.Reactions(f.text.ID, m.ID); len(rs) != 1 {
		t.Errorf("after remove: %+v", rs)
	}

	// Without ADD_REACTIONS the bot may only join an existing reaction.
	f.srv.SetRolePermissions(f.guild.ID, f.guild.ID, PermDefaultEveryone&^PermAddReactions)
	theirs := f.srv.PostMessage(Message{ChannelID: f.text.ID, Author: User{ID: f.alice.User.ID}, Content: "party",
		Reactions: []Reaction{{Emoji: "🎉", UserIDs: []string{f.alice.User.ID}}}})
	restErr(t, f.dg.MessageReactionAdd(f.text.ID, theirs.ID, "🚀"), http.StatusForbidden, 50013)
	if err := f.dg.MessageReactionAdd(f.text.ID, theirs.ID, "🎉"); err != nil {
		t.Errorf("joining an existing reaction: %v", err)
	}
}

func TestStickers(t *testing.T) {
	f := newFixture(t, nil)
	wave := f.srv.AddSticker(Sticker{GuildID: f.guild.ID, Name: "wave", Tags: "👋"})
	other := f.srv.AddGuild(Guild{Name: "elsewhere"})
	foreign := f.srv.AddSticker(Sticker{GuildID: other.ID, Name: "foreign"})

	// discordgo v0.28.1 has no guild-stickers method: the generic request.
	ep := discordgo.EndpointGuildStickers(f.guild.ID)
	raw, err := f.dg.RequestWithBucketID("GET", ep, nil, ep)
	if err != nil {
		t.Fatal(err)
	}
	var list []*discordgo.Sticker
	if err := discordgo.Unmarshal(raw, &list); err != nil || len(list) != 1 || list[0].ID != wave.ID ||
		list[0].Name != "wave" || list[0].FormatType != discordgo.StickerFormatTypePNG || list[0].Type != discordgo.StickerTypeGuild {
		t.Fatalf("stickers %+v, %v", list, err)
	}

	m, err := f.dg.ChannelMessageSendComplex(f.text.ID, &discordgo.MessageSend{StickerIDs: []string{wave.ID}})
	if err != nil || len(m.StickerItems) != 1 || m.StickerItems[0].ID != wave.ID {
		t.Fatalf("sticker message %+v, %v", m, err)
	}
	_, err = f.dg.ChannelMessageSendComplex(f.text.ID, &discordgo.MessageSend{StickerIDs: []string{foreign.ID}})
	restErr(t, err, http.StatusForbidden, 50013)
	_, err = f.dg.ChannelMessageSendComplex(f.text.ID, &discordgo.MessageSend{StickerIDs: []string{"1"}})
	restErr(t, err, http.StatusBadRequest, 50081)
	f.srv.SetRolePermissions(f.guild.ID, f.guild.ID, PermDefaultEveryone|PermUseExternalStickers)
	if _, err := f.dg.ChannelMessageSendComplex(f.text.ID, &discordgo.MessageSend{StickerIDs: []string{foreign.ID}}); err != nil {
		t.Errorf("external sticker with USE_EXTERNAL_STICKERS: %v", err)
	}
}

func TestUserMemberAndAvatarFromCDN(t *testing.T) {
	f := newFixture(t, nil)
	u, err := f.dg.User(f.alice.User.ID)
	if err != nil || u.Username != "alice" || u.GlobalName != "Alice" || u.Avatar != "a1b2c3d4" {
		t.Fatalf("User = %+v, %v", u, err)
	}
	if me, err := f.dg.User("@me"); err != nil || me.ID != f.srv.Bot().ID || !me.Bot {
		t.Errorf("User(@me) = %+v, %v", me, err)
	}
	if gb, err := f.dg.GatewayBot(); err != nil || gb.URL != f.srv.GatewayURL()+"/" || gb.Shards != 1 {
		t.Errorf("GatewayBot = %+v, %v", gb, err)
	}
	mem, err := f.dg.GuildMember(f.guild.ID, f.alice.User.ID)
	if err != nil || mem.Nick != "ali" || mem.User.ID != f.alice.User.ID {
		t.Errorf("GuildMember = %+v, %v", mem, err)
	}
	img, err := f.dg.UserAvatarDecode(u)
	if err != nil || img.Bounds().Dx() != 16 {
		t.Fatalf("UserAvatarDecode = %v, %v", img, err)
	}
	resp, err := f.dg.Client.Get(u.AvatarURL("")) // discordgo builds it from EndpointCDNAvatars
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" || !bytes.Equal(body, f.srv.AvatarPNG()) {
		t.Errorf("avatar GET %s: %d %s, %d bytes", u.AvatarURL(""), resp.StatusCode, resp.Header.Get("Content-Type"), len(body))
	}
	resp, err = f.dg.Client.Get(discordgo.EndpointUserAvatar(u.ID, "wronghash"))
	if err == nil {
		resp.Body.Close()
	}
	if err != nil || resp.StatusCode != 404 {
		t.Errorf("avatar with a wrong hash: %v, %v", resp, err)
	}
}

func TestUnknownIDsAndAuth(t *testing.T) {
	f := newFixture(t, nil)
	_, err := f.dg.Channel("1")
	restErr(t, err, 404, 10003)
	_, err = f.dg.ChannelMessage(f.text.ID, "1")
	restErr(t, err, 404, 10008)
	_, err = f.dg.User("1")
	restErr(t, err, 404, 10013)
	_, err = f.dg.GuildMember(f.guild.ID, "1")
	restErr(t, err, 404, 10007)
	_, err = f.dg.ChannelMessageSend("1", "x")
	restErr(t, err, 404, 10003)
	if ch, err := f.dg.Channel(f.text.ID); err != nil || ch.Name != "general" || ch.GuildID != f.guild.ID {
		t.Errorf("Channel = %+v, %v", ch, err)
	}

	f.srv.SetChannelOverwrites(f.text.ID, []Overwrite{{ID: f.guild.ID, Type: OverwriteRole, Deny: PermViewChannel}})
	_, err = f.dg.Channel(f.text.ID)
	restErr(t, err, 403, 50001)

	f.dg.Token = "Bot wrong"
	_, err = f.dg.User("@me")
	restErr(t, err, 401, 0)
	f.dg.Token = f.srv.Token() // without "Bot ": discordgo's own hint, still a 401
	_, err = f.dg.User("@me")
	if !errors.Is(err, discordgo.ErrUnauthorized) {
		var re *discordgo.RESTError
		if !errors.As(err, &re) || re.Response.StatusCode != 401 {
			t.Errorf("token without Bot prefix: %v", err)
		}
	}
}

func TestMessageHistoryEditDeleteReply(t *testing.T) {
	f := newFixture(t, nil)
	var ids []string
	for _, c := range []string{"one", "two", "three", "four"} {
		m, err := f.dg.ChannelMessageSend(f.text.ID, c)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.ID)
	}
	contents := func(ms []*discordgo.Message) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.Content)
		}
		return out
	}
	tests := []struct {
		name          string
		limit         int
		before, after string
		want          []string
	}{
		{"newest first", 2, "", "", []string{"four", "three"}},
		{"before", 10, ids[2], "", []string{"two", "one"}},
		{"after", 2, "", ids[0], []string{"three", "two"}},
	}
	for _, tt := range tests {
		ms, err := f.dg.ChannelMessages(f.text.ID, tt.limit, tt.before, tt.after, "")
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if diff := cmp.Diff(tt.want, contents(ms)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}

	reply, err := f.dg.ChannelMessageSendReply(f.text.ID, "re: one", &discordgo.MessageReference{MessageID: ids[0]})
	if err != nil || reply.Type != discordgo.MessageTypeReply || reply.MessageReference == nil ||
		reply.MessageReference.MessageID != ids[0] || reply.ReferencedMessage == nil || reply.ReferencedMessage.Content != "one" {
		t.Fatalf("reply %+v, %v", reply, err)
	}
	_, err = f.dg.ChannelMessageSendReply(f.text.ID, "re: nothing", &discordgo.MessageReference{MessageID: "1"})
	restErr(t, err, 400, 50035)

	f.clock.Advance(time.Minute)
	edited, err := f.dg.ChannelMessageEdit(f.text.ID, ids[1], "two (edited)")
	if err != nil || edited.Content != "two (edited)" || edited.EditedTimestamp == nil || !edited.EditedTimestamp.Equal(f.clock.Now()) {
		t.Fatalf("edit %+v, %v", edited, err)
	}
	theirs := f.srv.SendMessage(f.text.ID, f.alice.User.ID, "alice's")
	_, err = f.dg.ChannelMessageEdit(f.text.ID, theirs.ID, "hijack")
	restErr(t, err, 403, 50005)
	restErr(t, f.dg.ChannelMessageDelete(f.text.ID, theirs.ID), 403, 50013)
	if err := f.dg.ChannelMessageDelete(f.text.ID, ids[3]); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.srv.Message(f.text.ID, ids[3]); ok {
		t.Error("deleted message still stored")
	}

	f.srv.SetRolePermissions(f.guild.ID, f.guild.ID, PermDefaultEveryone&^PermReadMessageHistory)
	if ms, err := f.dg.ChannelMessages(f.text.ID, 10, "", "", ""); err != nil || len(ms) != 0 {
		t.Errorf("without READ_MESSAGE_HISTORY: %d messages, %v; want none", len(ms), err)
	}
	f.srv.SetRolePermissions(f.guild.ID, f.guild.ID, PermViewChannel)
	_, err = f.dg.ChannelMessageSend(f.text.ID, "no send")
	restErr(t, err, 403, 50013)
}

// Everything a client can make large is capped where it enters.
func TestCaps(t *testing.T) {
	f := newFixture(t, nil)
	_, err := f.dg.ChannelMessageSend(f.text.ID, strings.Repeat("x", 2001))
	restErr(t, err, 400, 50035)
	if _, err := f.dg.ChannelMessageSend(f.text.ID, strings.Repeat("é", 2000)); err != nil {
		t.Errorf("2000 characters: %v", err)
	}
	_, err = f.dg.ChannelMessageSend(f.text.ID, "")
	restErr(t, err, 400, 50006)

	ep := discordgo.EndpointChannelMessages(f.text.ID)
	_, err = f.dg.RequestWithBucketID("POST", ep, map[string]any{"content": "x", "nonce": strings.Repeat("n", 26)}, ep)
	restErr(t, err, 400, 50035)
	_, err = f.dg.RequestWithBucketID("POST", ep, map[string]any{"sticker_ids": []string{"1", "2", "3", "4"}}, ep)
	restErr(t, err, 400, 50035)
	_, err = f.dg.RequestWithBucketID("POST", ep, map[string]any{"content": strings.Repeat("x", 2<<20)}, ep)
	restErr(t, err, 413, 40005)
	_, err = f.dg.ChannelMessages(f.text.ID, 101, "", "", "")
	restErr(t, err, 400, 50035)

	// discordgo spaces reaction calls 200 ms apart itself, so the first 19
	// reactions are set up directly.
	var rs []Reaction
	for i := 0; i < maxReactions-1; i++ {
		rs = append(rs, Reaction{Emoji: "e" + strconv.Itoa(i) + ":1" + strconv.Itoa(i), UserIDs: []string{f.alice.User.ID}})
	}
	m := f.srv.PostMessage(Message{ChannelID: f.text.ID, Author: User{ID: f.alice.User.ID}, Content: "many", Reactions: rs})
	if err := f.dg.MessageReactionAdd(f.text.ID, m.ID, "🥇"); err != nil {
		t.Fatalf("20th reaction: %v", err)
	}
	restErr(t, f.dg.MessageReactionAdd(f.text.ID, m.ID, "👍"), 400, 30010)

	f.srv.SetRolePermissions(f.guild.ID, f.guild.ID, PermDefaultEveryone|PermManageMessages)
	for i := 0; i <= maxPins; i++ {
		p := f.srv.SendMessage(f.text.ID, f.alice.User.ID, "pin")
		err := f.dg.ChannelMessagePin(f.text.ID, p.ID)
		if i < maxPins && err != nil {
			t.Fatalf("pin %d: %v", i, err)
		}
		if i == maxPins {
			restErr(t, err, 400, 30003)
		}
	}
}

func TestRateLimitIsRetried(t *testing.T) {
	f := newFixture(t, nil)
	limited := make(chan *discordgo.RateLimit, 1)
	f.dg.AddHandler(func(_ *discordgo.Session, e *discordgo.RateLimit) { limited <- e })
	f.srv.RateLimit("POST /channels/{channel}/messages", 1, 10*time.Millisecond)
	if _, err := f.dg.ChannelMessageSend(f.text.ID, "eventually"); err != nil {
		t.Fatalf("send after a 429: %v", err)
	}
	if rl := recv(t, limited, "RateLimit event"); rl.RetryAfter != 10*time.Millisecond {
		t.Errorf("retry after %v, want 10ms", rl.RetryAfter)
	}
	if n := len(f.srv.Messages(f.text.ID)); n != 1 {
		t.Errorf("%d messages, want 1", n)
	}

	f.srv.RateLimit("POST /channels/{channel}/messages", 1, time.Second)
	_, err := f.dg.ChannelMessageSend(f.text.ID, "refused", discordgo.WithRetryOnRatelimit(false))
	var rle *discordgo.RateLimitError
	if !errors.As(err, &rle) || rle.RetryAfter != time.Second {
		t.Errorf("without retry: %v, want a RateLimitError of 1s", err)
	}
}
