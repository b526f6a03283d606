package discordtest

import (
	"net/http"
	"slices"
	"strconv"
	"unicode/utf8"
)

// reactionTarget finds the message of a reaction route and validates the
// emoji key.
func (s *Server) reactionTarget(r *http.Request) (*channelState, uint64, *Message, string, *reply) {
	emoji := r.PathValue("emoji")
	if emoji == "" || utf8.RuneCountInString(emoji) > 100 || !utf8.ValidString(emoji) {
		return nil, 0, nil, "", &errUnknownEmoji
	}
	ch, perms, e := s.channelFor(r)
	if e != nil {
		return nil, 0, nil, "", e
	}
	if perms&PermReadMessageHistory == 0 {
		return nil, 0, nil, "", &errMissingPermissions
	}
	m := s.w.message(ch.ID, r.PathValue("message"))
	if m == nil {
		return nil, 0, nil, "", &errUnknownMessage
	}
	return ch, perms, m, emoji, nil
}

func reactionEvent(name string, ch *channelState, m *Message, userID, emoji string) event {
	return event{name: name, intent: intentGuildReactions, guild: ch.GuildID, data: map[string]any{
		"user_id": userID, "channel_id": ch.ID, "message_id": m.ID, "guild_id": ch.GuildID,
		"emoji": splitEmoji(emoji), "burst": false, "type": 0,
	}}
}

// addReaction adds the bot's reaction. ADD_REACTIONS is needed only for an
// emoji nobody has reacted with yet, as Discord documents.
func (s *Server) addReaction(r *http.Request, _ []byte) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, perms, m, emoji, e := s.reactionTarget(r)
	if e != nil {
		return *e
	}
	i := slices.IndexFunc(m.Reactions, func(x Reaction) bool { return x.Emoji == emoji })
	if i < 0 {
		if perms&PermAddReactions == 0 {
			return errMissingPermissions
		}
		if len(m.Reactions) >= maxReactions {
			return errTooManyReactions
		}
		m.Reactions = append(m.Reactions, Reaction{Emoji: emoji})
		i = len(m.Reactions) - 1
	}
	if slices.Contains(m.Reactions[i].UserIDs, s.bot.ID) {
		return noContent()
	}
	m.Reactions[i].UserIDs = append(m.Reactions[i].UserIDs, s.bot.ID)
	return noContent(reactionEvent("MESSAGE_REACTION_ADD", ch, m, s.bot.ID, emoji))
}

func (s *Server) removeReaction(r *http.Request, _ []byte) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, _, m, emoji, e := s.reactionTarget(r)
	if e != nil {
		return *e
	}
	i := slices.IndexFunc(m.Reactions, func(x Reaction) bool { return x.Emoji == emoji })
	if i < 0 || !slices.Contains(m.Reactions[i].UserIDs, s.bot.ID) {
		return noContent()
	}
	m.Reactions[i].UserIDs = slices.DeleteFunc(m.Reactions[i].UserIDs, func(id string) bool { return id == s.bot.ID })
	if len(m.Reactions[i].UserIDs) == 0 {
		m.Reactions = slices.Delete(m.Reactions, i, i+1)
	}
	return noContent(reactionEvent("MESSAGE_REACTION_REMOVE", ch, m, s.bot.ID, emoji))
}

func (s *Server) listReactions(r *http.Request, _ []byte) reply {
	limit := defaultReactFe
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxFetchLimit {
			return invalidForm("limit", "NUMBER_TYPE_MAX", "int value should be between 1 and 100.")
		}
		limit = n
	}
	after := r.URL.Query().Get("after")
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _, m, emoji, e := s.reactionTarget(r)
	if e != nil {
		return *e
	}
	out := []wireUser{}
	i := slices.IndexFunc(m.Reactions, func(x Reaction) bool { return x.Emoji == emoji })
	if i < 0 {
		return ok(out)
	}
	ids := slices.Clone(m.Reactions[i].UserIDs)
	slices.SortFunc(ids, func(a, b string) int {
		if snowflakeLess(a, b) {
			return -1
		}
		return 1
	})
	for _, id := range ids {
		if u := s.w.users[id]; u != nil && len(out) < limit && (after == "" || snowflakeLess(after, id)) {
			out = append(out, toWireUser(*u))
		}
	}
	return ok(out)
}
