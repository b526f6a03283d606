package discordtest

import (
	"net/http"
	"unicode/utf8"
)

type threadIn struct {
	Name                string `json:"name"`
	Type                *int   `json:"type"`
	AutoArchiveDuration int    `json:"auto_archive_duration"`
}

var errWrongChannelType = fail(400, 50024, "Cannot execute action on this channel type")

// threadParent checks the body and the parent of a new thread.
func (s *Server) threadParent(r *http.Request, body []byte) (*channelState, uint64, threadIn, *reply) {
	var in threadIn
	if !decode(body, &in) {
		return nil, 0, in, &errInvalidJSON
	}
	if n := utf8.RuneCountInString(in.Name); n < 1 || n > 100 {
		rep := invalidForm("name", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length.")
		return nil, 0, in, &rep
	}
	ch, perms, e := s.channelFor(r)
	if e != nil {
		return nil, 0, in, e
	}
	if ch.Type != ChannelText {
		return nil, 0, in, &errWrongChannelType
	}
	return ch, perms, in, nil
}

// threadCreate is THREAD_CREATE's payload: the channel and newly_created.
type threadCreate struct {
	wireChannel
	NewlyCreated bool `json:"newly_created"`
}

// newThread stores a thread under parent and returns the 201 reply with
// its THREAD_CREATE dispatch.
func (s *Server) newThread(id string, parent *channelState, typ ChannelType, name string) (*channelState, reply) {
	th := &channelState{Channel: Channel{ID: id, GuildID: parent.GuildID, Name: name, Type: typ, ParentID: parent.ID, OwnerID: s.bot.ID}}
	s.w.channels[id] = th
	wc := toWireChannel(th)
	return th, reply{status: http.StatusCreated, body: wc, events: []event{{
		name: "THREAD_CREATE", intent: intentGuilds, guild: parent.GuildID, data: threadCreate{wireChannel: wc, NewlyCreated: true},
	}}}
}

// threadFromMessage starts a public thread on a message; the thread takes
// the message's id, as on Discord.
func (s *Server) threadFromMessage(r *http.Request, body []byte) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, perms, in, e := s.threadParent(r, body)
	if e != nil {
		return *e
	}
	if perms&PermCreatePublicThreads == 0 {
		return errMissingPermissions
	}
	m := s.w.message(ch.ID, r.PathValue("message"))
	if m == nil {
		return errUnknownMessage
	}
	if m.ThreadID != "" {
		return errThreadExists
	}
	m.ThreadID = m.ID
	_, rep := s.newThread(m.ID, ch, ChannelPublicThread, in.Name)
	return rep
}

// threadWithoutMessage starts a thread from nothing. In v9 a missing type
// is a private thread; v10 requires it.
func (s *Server) threadWithoutMessage(r *http.Request, body []byte) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, perms, in, e := s.threadParent(r, body)
	if e != nil {
		return *e
	}
	typ := ChannelPrivateThread
	switch {
	case in.Type != nil:
		typ = ChannelType(*in.Type)
	case r.PathValue("version") == "v10":
		return invalidForm("type", "BASE_TYPE_REQUIRED", "This field is required")
	}
	need := PermCreatePublicThreads
	switch typ {
	case ChannelPublicThread:
	case ChannelPrivateThread:
		need = PermCreatePrivateThreads
	default:
		return invalidForm("type", "BASE_TYPE_CHOICES", "Value must be one of {11, 12}.")
	}
	if perms&need == 0 {
		return errMissingPermissions
	}
	_, rep := s.newThread(s.ids.next(), ch, typ, in.Name)
	return rep
}
