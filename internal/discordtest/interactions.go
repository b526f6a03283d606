package discordtest

import (
	"encoding/json"
	"net/http"
	"unicode/utf8"
)

// Interaction callback types (interactions topic, receiving and responding).
const (
	callbackChannelMessage = 4
	callbackDeferred       = 5
)

// Interaction is what Interact dispatches: a slash command invoked by
// UserID (a member of GuildID) in ChannelID.
type Interaction struct {
	GuildID   string
	ChannelID string
	UserID    string
	// CommandName names the command; CommandID "" looks it up among the
	// registered guild, then global commands, else a fresh id is used.
	CommandName string
	CommandID   string
	Options     []CommandOption
}

// CommandOption is one option value of an invoked command; Type is
// Discord's option type (3 string, 4 integer, 5 boolean, ...).
type CommandOption struct {
	Name    string          `json:"name"`
	Type    int             `json:"type"`
	Value   any             `json:"value,omitempty"`
	Options []CommandOption `json:"options,omitempty"`
}

func (s *Server) interactionRoutes(api api) {
	// Discord authenticates these by the token in the path, not the header.
	api("POST /interactions/{interaction}/{token}/callback", false, s.interactionCallback)
	api("POST /webhooks/{app}/{token}", false, s.followup)
	api("GET /webhooks/{app}/{token}/messages/{message}", false, s.getWebhookMessage)
	api("PATCH /webhooks/{app}/{token}/messages/{message}", false, s.editWebhookMessage)
	api("DELETE /webhooks/{app}/{token}/messages/{message}", false, s.deleteWebhookMessage)
}

// Interact stores a new interaction and dispatches INTERACTION_CREATE of
// type APPLICATION_COMMAND with the member (and its permissions string),
// the bot's app_permissions, the id and the token. It returns the
// interaction's id and token. The guild, channel and member must exist.
func (s *Server) Interact(in Interaction) (id, token string) {
	s.mu.Lock()
	ch := s.w.channels[in.ChannelID]
	mustf(ch != nil && ch.GuildID == in.GuildID, "interact: unknown channel %s in guild %s", in.ChannelID, in.GuildID)
	mem := s.w.guilds[in.GuildID].members[in.UserID]
	mustf(mem != nil, "interact: unknown member %s", in.UserID)
	cmdID := in.CommandID
	if cmdID == "" {
		cmdID = s.commandIDLocked(in.GuildID, in.CommandName)
	}
	id = s.ids.next()
	token = "itok-" + id
	s.w.interactions[token] = &interactionState{id: id, token: token, channelID: ch.ID, guildID: ch.GuildID}
	wm := toWireMember(mem, true)
	wm.Permissions = FormatPermissions(s.w.permissionsIn(in.UserID, ch))
	options := in.Options
	if options == nil {
		options = []CommandOption{}
	}
	payload := map[string]any{
		"id": id, "application_id": s.appID, "type": 2, "token": token, "version": 1,
		"guild_id": ch.GuildID, "channel_id": ch.ID, "channel": toWireChannel(ch),
		"member": wm, "app_permissions": FormatPermissions(s.w.permissionsIn(s.bot.ID, ch)),
		"locale": "en-US", "guild_locale": "en-US", "entitlements": []any{}, "context": 0,
		"authorizing_integration_owners": map[string]string{"0": ch.GuildID},
		"data":                           map[string]any{"id": cmdID, "name": in.CommandName, "type": 1, "guild_id": ch.GuildID, "options": options},
	}
	s.mu.Unlock()
	s.gw.publish(event{name: "INTERACTION_CREATE", guild: in.GuildID, data: payload})
	return id, token
}

func (s *Server) commandIDLocked(guildID, name string) string {
	for _, scope := range []string{guildID, ""} {
		for _, c := range s.w.commands[scope] {
			if c.Name == name {
				return c.ID
			}
		}
	}
	return s.ids.next()
}

type webhookMessageIn struct {
	Content *string `json:"content"`
	Flags   int     `json:"flags"`
}

func (s *Server) interactionCallback(r *http.Request, body []byte) reply {
	var in struct {
		Type int             `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	if !decode(body, &in) {
		return errInvalidJSON
	}
	var data webhookMessageIn
	if len(in.Data) > 0 && !decode(in.Data, &data) {
		return errInvalidJSON
	}
	if data.Content != nil && utf8.RuneCountInString(*data.Content) > maxContent {
		return invalidForm("data.content", "BASE_TYPE_MAX_LENGTH", "Must be 2000 or fewer in length.")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	it := s.w.interactions[r.PathValue("token")]
	if it == nil || it.id != r.PathValue("interaction") {
		return errUnknownInteraction
	}
	if it.responded {
		return errAlreadyAcked
	}
	if in.Type < 1 || in.Type > 12 || in.Type == 2 || in.Type == 3 {
		return invalidForm("type", "BASE_TYPE_CHOICES", "Value must be one of {1, 4, 5, 6, 7, 8, 9, 10, 12}.")
	}
	it.responded = true
	s.w.responses = append(s.w.responses, InteractionResponse{InteractionID: it.id, Token: it.token, Type: in.Type, Data: append(json.RawMessage(nil), in.Data...)})
	if in.Type != callbackChannelMessage && in.Type != callbackDeferred {
		return noContent()
	}
	content := ""
	if data.Content != nil && in.Type == callbackChannelMessage {
		content = *data.Content
	}
	m := s.interactionMessage(it, content)
	it.originalID = m.ID
	return noContent(s.messageEvent("MESSAGE_CREATE", m))
}

// interactionMessage stores a response or followup message in the
// interaction's channel, authored by the bot.
func (s *Server) interactionMessage(it *interactionState, content string) *Message {
	m := &Message{ID: s.ids.next(), ChannelID: it.channelID, GuildID: it.guildID, Author: s.bot,
		Content: content, Timestamp: s.now(), InteractionID: it.id, Type: messageTypeCommandResponse}
	ch := s.w.channels[it.channelID]
	ch.messages = append(ch.messages, m)
	return m
}

// webhookInteraction finds the acknowledged interaction of a webhook route.
func (s *Server) webhookInteraction(r *http.Request) (*interactionState, *reply) {
	if r.PathValue("app") != s.appID {
		return nil, &errUnknownWebhook
	}
	it := s.w.interactions[r.PathValue("token")]
	if it == nil || !it.responded {
		return nil, &errUnknownWebhook
	}
	return it, nil
}

func (s *Server) followup(r *http.Request, body []byte) reply {
	var in webhookMessageIn
	if !decode(body, &in) {
		return errInvalidJSON
	}
	if in.Content == nil || *in.Content == "" {
		return errEmptyMessage
	}
	if utf8.RuneCountInString(*in.Content) > maxContent {
		return invalidForm("content", "BASE_TYPE_MAX_LENGTH", "Must be 2000 or fewer in length.")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	it, e := s.webhookInteraction(r)
	if e != nil {
		return *e
	}
	m := s.interactionMessage(it, *in.Content)
	return reply{status: http.StatusOK, body: s.toWireMessage(m, s.bot.ID, true), events: []event{s.messageEvent("MESSAGE_CREATE", m)}}
}

// webhookMessage resolves "@original" or a followup id of the interaction.
func (s *Server) webhookMessage(r *http.Request) (*interactionState, *Message, *reply) {
	it, e := s.webhookInteraction(r)
	if e != nil {
		return nil, nil, e
	}
	id := r.PathValue("message")
	if id == "@original" {
		id = it.originalID
	}
	m := s.w.message(it.channelID, id)
	if m == nil || m.InteractionID != it.id {
		return nil, nil, &errUnknownMessage
	}
	return it, m, nil
}

func (s *Server) getWebhookMessage(r *http.Request, _ []byte) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, m, e := s.webhookMessage(r)
	if e != nil {
		return *e
	}
	return ok(s.toWireMessage(m, s.bot.ID, true))
}

func (s *Server) editWebhookMessage(r *http.Request, body []byte) reply {
	var in webhookMessageIn
	if !decode(body, &in) {
		return errInvalidJSON
	}
	if in.Content != nil && utf8.RuneCountInString(*in.Content) > maxContent {
		return invalidForm("content", "BASE_TYPE_MAX_LENGTH", "Must be 2000 or fewer in length.")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, m, e := s.webhookMessage(r)
	if e != nil {
		return *e
	}
	if in.Content != nil {
		m.Content = *in.Content
	}
	t := s.now()
	m.EditedTimestamp = &t
	return reply{status: http.StatusOK, body: s.toWireMessage(m, s.bot.ID, true), events: []event{s.messageEvent("MESSAGE_UPDATE", m)}}
}

func (s *Server) deleteWebhookMessage(r *http.Request, _ []byte) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, m, e := s.webhookMessage(r)
	if e != nil {
		return *e
	}
	s.w.deleteMessage(s.w.channels[it.channelID], m.ID)
	return noContent(event{name: "MESSAGE_DELETE", intent: intentGuildMessages, guild: it.guildID,
		data: map[string]string{"id": m.ID, "channel_id": it.channelID, "guild_id": it.guildID}})
}
