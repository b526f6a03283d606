package discordtest

import (
	"net/http"
	"slices"
)

// Pins: MANAGE_MESSAGES (or Options.PinPermission) to change, READ_MESSAGE_HISTORY to list.

func (s *Server) listPins(r *http.Request, _ []byte) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, perms, e := s.channelFor(r)
	if e != nil {
		return *e
	}
	out := []wireMessage{}
	if perms&PermReadMessageHistory == 0 {
		return ok(out)
	}
	for _, id := range ch.pins {
		if m := s.w.message(ch.ID, id); m != nil {
			out = append(out, s.toWireMessage(m, s.bot.ID, true))
		}
	}
	return ok(out)
}

// pinTarget finds the message of a pin route once the bot may pin.
func (s *Server) pinTarget(r *http.Request) (*channelState, *Message, *reply) {
	ch, perms, e := s.channelFor(r)
	if e != nil {
		return nil, nil, e
	}
	if perms&s.opts.PinPermission == 0 {
		return nil, nil, &errMissingPermissions
	}
	m := s.w.message(ch.ID, r.PathValue("message"))
	if m == nil {
		return nil, nil, &errUnknownMessage
	}
	return ch, m, nil
}

func pinsUpdate(ch *channelState) event {
	return event{name: "CHANNEL_PINS_UPDATE", intent: intentGuilds, guild: ch.GuildID,
		data: map[string]string{"guild_id": ch.GuildID, "channel_id": ch.ID}}
}

func (s *Server) pin(r *http.Request, _ []byte) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, m, e := s.pinTarget(r)
	if e != nil {
		return *e
	}
	if m.Pinned {
		return noContent()
	}
	if len(ch.pins) >= maxPins {
		return errTooManyPins
	}
	m.Pinned = true
	ch.pins = append([]string{m.ID}, ch.pins...)
	return noContent(pinsUpdate(ch))
}

func (s *Server) unpin(r *http.Request, _ []byte) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, m, e := s.pinTarget(r)
	if e != nil {
		return *e
	}
	m.Pinned = false
	ch.pins = slices.DeleteFunc(ch.pins, func(id string) bool { return id == m.ID })
	return noContent(pinsUpdate(ch))
}
