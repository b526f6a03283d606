package discordtest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Limits Discord documents for messages.
const (
	maxContent     = 2000
	maxNonce       = 25
	maxStickers    = 3
	maxReactions   = 20
	maxPins        = 50
	maxFetchLimit  = 100
	defaultFetch   = 50
	defaultReactFe = 25
)

// Message types the fake produces.
const (
	messageTypeDefault         = 0
	messageTypeReply           = 19
	messageTypeCommandResponse = 20
)

type api = func(pattern string, auth bool, h handlerFunc)

func (s *Server) messageRoutes(api api) {
	api("GET /channels/{channel}/messages", true, s.listMessages)
	api("POST /channels/{channel}/messages", true, s.createMessage)
	api("GET /channels/{channel}/messages/{message}", true, s.getMessage)
	api("PATCH /channels/{channel}/messages/{message}", true, s.editMessage)
	api("DELETE /channels/{channel}/messages/{message}", true, s.deleteMessage)
	api("GET /channels/{channel}/pins", true, s.listPins)
	api("PUT /channels/{channel}/pins/{message}", true, s.pin)
	api("DELETE /channels/{channel}/pins/{message}", true, s.unpin)
	api("PUT /channels/{channel}/messages/{message}/reactions/{emoji}/@me", true, s.addReaction)
	api("DELETE /channels/{channel}/messages/{message}/reactions/{emoji}/@me", true, s.removeReaction)
	api("GET /channels/{channel}/messages/{message}/reactions/{emoji}", true, s.listReactions)
	api("POST /channels/{channel}/messages/{message}/threads", true, s.threadFromMessage)
	api("POST /channels/{channel}/threads", true, s.threadWithoutMessage)
}

// messageEvent builds a MESSAGE_CREATE or MESSAGE_UPDATE dispatch: the
// guild id and the author's member object ride along, and a connection
// without MESSAGE_CONTENT gets the content emptied unless the message is
// the bot's own or mentions it, as Discord does.
func (s *Server) messageEvent(name string, m *Message) event {
	wm := s.toWireMessage(m, s.bot.ID, true)
	wm.GuildID = m.GuildID
	if g := s.w.guilds[m.GuildID]; g != nil {
		if mem := g.members[m.Author.ID]; mem != nil {
			wmem := toWireMember(mem, false)
			wm.Member = &wmem
		}
	}
	ev := event{name: name, intent: intentGuildMessages, guild: m.GuildID, data: wm}
	if m.Author.ID != s.bot.ID && !strings.Contains(m.Content, "<@"+s.bot.ID+">") {
		red := wm
		red.Content = ""
		ev.redacted = red
	}
	return ev
}

func (s *Server) listMessages(r *http.Request, _ []byte) reply {
	q := r.URL.Query()
	limit := defaultFetch
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxFetchLimit {
			return invalidForm("limit", "NUMBER_TYPE_MAX", "int value should be between 1 and 100.")
		}
		limit = n
	}
	before, after := q.Get("before"), q.Get("after")
	for _, id := range []string{before, after} {
		if _, err := ParseSnowflake(id); id != "" && err != nil {
			return invalidForm("before", "NUMBER_TYPE_COERCE", "Value is not snowflake.")
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, perms, e := s.channelFor(r)
	if e != nil {
		return *e
	}
	out := []wireMessage{}
	if perms&PermReadMessageHistory == 0 {
		return ok(out) // Discord answers an empty list without the permission.
	}
	// Newest first, as Discord returns them; "after" walks up from the id.
	ms := ch.messages
	if after != "" {
		for _, m := range ms {
			if snowflakeLess(after, m.ID) && len(out) < limit {
				out = append(out, s.toWireMessage(m, s.bot.ID, true))
			}
		}
		reverse(out)
		return ok(out)
	}
	for i := len(ms) - 1; i >= 0 && len(out) < limit; i-- {
		if before == "" || snowflakeLess(ms[i].ID, before) {
			out = append(out, s.toWireMessage(ms[i], s.bot.ID, true))
		}
	}
	return ok(out)
}

func reverse[T any](xs []T) {
	for i, j := 0, len(xs)-1; i < j; i, j = i+1, j-1 {
		xs[i], xs[j] = xs[j], xs[i]
	}
}

func (s *Server) getMessage(r *http.Request, _ []byte) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, perms, e := s.channelFor(r)
	if e != nil {
		return *e
	}
	if perms&PermReadMessageHistory == 0 {
		return errMissingPermissions
	}
	m := s.w.message(ch.ID, r.PathValue("message"))
	if m == nil {
		return errUnknownMessage
	}
	return ok(s.toWireMessage(m, s.bot.ID, true))
}

type createMessageIn struct {
	Content          string          `json:"content"`
	Nonce            json.RawMessage `json:"nonce"`
	EnforceNonce     bool            `json:"enforce_nonce"`
	StickerIDs       []string        `json:"sticker_ids"`
	MessageReference *struct {
		MessageID       string `json:"message_id"`
		ChannelID       string `json:"channel_id"`
		GuildID         string `json:"guild_id"`
		FailIfNotExists *bool  `json:"fail_if_not_exists"`
	} `json:"message_reference"`
}

// parseNonce accepts Discord's nonce: a string of at most 25 characters
// or an integer, both kept as their decimal or string form.
func parseNonce(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", true
	}
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return str, utf8.RuneCountInString(str) <= maxNonce
	}
	var n int64
	if json.Unmarshal(raw, &n) == nil {
		return strconv.FormatInt(n, 10), true
	}
	return "", false
}

// validate checks a create body before anything is looked up.
func (in *createMessageIn) validate() (nonce string, rep *reply) {
	nonce, valid := parseNonce(in.Nonce)
	bad := func(field, code, msg string) (string, *reply) {
		r := invalidForm(field, code, msg)
		return "", &r
	}
	switch {
	case !valid:
		return bad("nonce", "BASE_TYPE_MAX_LENGTH", "Must be 25 or fewer in length.")
	case utf8.RuneCountInString(in.Content) > maxContent:
		return bad("content", "BASE_TYPE_MAX_LENGTH", "Must be 2000 or fewer in length.")
	case len(in.StickerIDs) > maxStickers:
		return bad("sticker_ids", "BASE_TYPE_MAX_LENGTH", "Must be 3 or fewer in length.")
	}
	return nonce, nil
}

func (s *Server) createMessage(r *http.Request, body []byte) reply {
	var in createMessageIn
	if !decode(body, &in) {
		return errInvalidJSON
	}
	nonce, e := in.validate()
	if e != nil {
		return *e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, perms, e := s.channelFor(r)
	if e != nil {
		return *e
	}
	need := PermSendMessages
	if ch.Type.IsThread() {
		need = PermSendMessagesInThreads
	}
	if perms&need == 0 {
		return errMissingPermissions
	}
	if in.EnforceNonce && nonce != "" {
		if m := s.recentNonceLocked(ch.ID, nonce); m != nil {
			return ok(s.toWireMessage(m, s.bot.ID, true))
		}
	}
	if in.Content == "" && len(in.StickerIDs) == 0 {
		return errEmptyMessage
	}
	m := &Message{ID: s.ids.next(), ChannelID: ch.ID, GuildID: ch.GuildID, Author: s.bot,
		Content: in.Content, Timestamp: s.now(), Nonce: nonce, Type: messageTypeDefault}
	if e := s.attachStickers(m, ch, perms, in.StickerIDs); e != nil {
		return *e
	}
	if e := s.attachReference(m, ch, perms, &in); e != nil {
		return *e
	}
	ch.messages = append(ch.messages, m)
	if in.EnforceNonce && nonce != "" {
		s.nonces[ch.ID+"|"+s.bot.ID+"|"+nonce] = nonceEntry{messageID: m.ID, at: m.Timestamp}
	}
	return reply{status: http.StatusOK, body: s.toWireMessage(m, s.bot.ID, true), events: []event{s.messageEvent("MESSAGE_CREATE", m)}}
}

// attachReference makes m a reply: replying needs READ_MESSAGE_HISTORY,
// and a missing target fails unless fail_if_not_exists is false.
func (s *Server) attachReference(m *Message, ch *channelState, perms uint64, in *createMessageIn) *reply {
	ref := in.MessageReference
	if ref == nil {
		return nil
	}
	if perms&PermReadMessageHistory == 0 {
		return &errMissingPermissions
	}
	refCh := ref.ChannelID
	if refCh == "" {
		refCh = ch.ID
	}
	if s.w.message(refCh, ref.MessageID) != nil {
		m.Reference = &MessageReference{MessageID: ref.MessageID, ChannelID: refCh, GuildID: ch.GuildID}
		m.Type = messageTypeReply
		return nil
	}
	if ref.FailIfNotExists == nil || *ref.FailIfNotExists {
		r := invalidForm("message_reference", "MESSAGE_REFERENCE_UNKNOWN_MESSAGE", "Unknown message")
		return &r
	}
	return nil
}

// recentNonceLocked finds the bot's message sent with nonce in channel
// within the nonce window.
func (s *Server) recentNonceLocked(channelID, nonce string) *Message {
	e, found := s.nonces[channelID+"|"+s.bot.ID+"|"+nonce]
	if !found || s.now().Sub(e.at) > s.opts.NonceWindow {
		return nil
	}
	return s.w.message(channelID, e.messageID)
}

// attachStickers checks sticker ids: each must exist, and one from another
// guild needs USE_EXTERNAL_STICKERS.
func (s *Server) attachStickers(m *Message, ch *channelState, perms uint64, ids []string) *reply {
	for _, id := range ids {
		st := s.stickerLocked(id)
		if st == nil {
			return &errInvalidSticker
		}
		if st.GuildID != ch.GuildID && perms&PermUseExternalStickers == 0 {
			return &errMissingPermissions
		}
		m.StickerIDs = append(m.StickerIDs, id)
	}
	return nil
}

func (s *Server) editMessage(r *http.Request, body []byte) reply {
	var in struct {
		Content *string `json:"content"`
	}
	if !decode(body, &in) {
		return errInvalidJSON
	}
	if in.Content != nil && utf8.RuneCountInString(*in.Content) > maxContent {
		return invalidForm("content", "BASE_TYPE_MAX_LENGTH", "Must be 2000 or fewer in length.")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, _, e := s.channelFor(r)
	if e != nil {
		return *e
	}
	m := s.w.message(ch.ID, r.PathValue("message"))
	if m == nil {
		return errUnknownMessage
	}
	if m.Author.ID != s.bot.ID {
		return errNotAuthor
	}
	if in.Content != nil {
		if *in.Content == "" && len(m.StickerIDs) == 0 {
			return errEmptyMessage
		}
		m.Content = *in.Content
	}
	t := s.now()
	m.EditedTimestamp = &t
	return reply{status: http.StatusOK, body: s.toWireMessage(m, s.bot.ID, true), events: []event{s.messageEvent("MESSAGE_UPDATE", m)}}
}

func (s *Server) deleteMessage(r *http.Request, _ []byte) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, perms, e := s.channelFor(r)
	if e != nil {
		return *e
	}
	m := s.w.message(ch.ID, r.PathValue("message"))
	if m == nil {
		return errUnknownMessage
	}
	if m.Author.ID != s.bot.ID && perms&PermManageMessages == 0 {
		return errMissingPermissions
	}
	s.w.deleteMessage(ch, m.ID)
	return noContent(event{name: "MESSAGE_DELETE", intent: intentGuildMessages, guild: ch.GuildID,
		data: map[string]string{"id": m.ID, "channel_id": ch.ID, "guild_id": ch.GuildID}})
}
