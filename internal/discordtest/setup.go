package discordtest

import (
	"slices"
)

// Setup methods build the world before (or while) a test runs. A mistake
// in setup (an unknown guild, a duplicate id) panics: it is a bug in the
// test, not a condition to handle. An empty ID is generated; each method
// returns what it stored.

// AddUser stores a user (a member needs one; AddMember adds it too).
func (s *Server) AddUser(u User) User {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u.ID == "" {
		u.ID = s.ids.next()
	}
	c := u
	s.w.users[u.ID] = &c
	return u
}

// AddGuild stores a guild, its @everyone role (id = guild id) and the bot
// as a member without roles. An empty OwnerID makes a fresh user the owner,
// so the bot is not the owner unless the test says so.
func (s *Server) AddGuild(g Guild) Guild {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g.ID == "" {
		g.ID = s.ids.next()
	}
	mustf(s.w.guilds[g.ID] == nil, "guild %s added twice", g.ID)
	if g.OwnerID == "" {
		g.OwnerID = s.ids.next()
	}
	gs := &guildState{Guild: g, roles: map[string]*Role{}, members: map[string]*Member{}}
	gs.roles[g.ID] = &Role{ID: g.ID, GuildID: g.ID, Name: "@everyone", Permissions: g.EveryonePermissions}
	gs.members[s.bot.ID] = &Member{GuildID: g.ID, User: s.bot, JoinedAt: s.now()}
	s.w.guilds[g.ID] = gs
	s.w.guildOrder = append(s.w.guildOrder, g.ID)
	return g
}

func (s *Server) guildLocked(id string) *guildState {
	g := s.w.guilds[id]
	mustf(g != nil, "unknown guild %s", id)
	return g
}

// AddRole stores a role in r.GuildID.
func (s *Server) AddRole(r Role) Role {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.guildLocked(r.GuildID)
	if r.ID == "" {
		r.ID = s.ids.next()
	}
	mustf(g.roles[r.ID] == nil, "role %s added twice", r.ID)
	c := r
	g.roles[r.ID] = &c
	return r
}

// SetRolePermissions replaces a role's permissions (the @everyone role's
// id is the guild id).
func (s *Server) SetRolePermissions(guildID, roleID string, perms uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.guildLocked(guildID).roles[roleID]
	mustf(r != nil, "unknown role %s", roleID)
	r.Permissions = perms
}

// AddMember stores a member of m.GuildID (and its user). Every role must
// exist. A zero JoinedAt is now.
func (s *Server) AddMember(m Member) Member {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.guildLocked(m.GuildID)
	if m.User.ID == "" {
		m.User.ID = s.ids.next()
	}
	for _, r := range m.Roles {
		mustf(g.roles[r] != nil, "member %s: unknown role %s", m.User.ID, r)
	}
	if m.JoinedAt.IsZero() {
		m.JoinedAt = s.now()
	}
	c := m
	c.Roles = slices.Clone(m.Roles)
	g.members[m.User.ID] = &c
	u := m.User
	s.w.users[u.ID] = &u
	return m
}

// AddMemberRole gives a member (the bot too: Bot().ID) one more role.
func (s *Server) AddMemberRole(guildID, userID, roleID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.guildLocked(guildID)
	m := g.members[userID]
	mustf(m != nil, "unknown member %s", userID)
	mustf(g.roles[roleID] != nil, "unknown role %s", roleID)
	if !slices.Contains(m.Roles, roleID) {
		m.Roles = append(m.Roles, roleID)
	}
}

// AddChannel stores a text channel or a thread (whose parent must exist
// in the same guild).
func (s *Server) AddChannel(c Channel) Channel {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.guildLocked(c.GuildID)
	if c.ID == "" {
		c.ID = s.ids.next()
	}
	mustf(s.w.channels[c.ID] == nil, "channel %s added twice", c.ID)
	if c.Type.IsThread() {
		p := s.w.channels[c.ParentID]
		mustf(p != nil && p.GuildID == c.GuildID, "thread %s: unknown parent %s", c.ID, c.ParentID)
		if c.OwnerID == "" {
			c.OwnerID = s.bot.ID
		}
	}
	c.Overwrites = slices.Clone(c.Overwrites)
	s.w.channels[c.ID] = &channelState{Channel: c}
	return c
}

// SetChannelOverwrites replaces a channel's permission overwrites.
func (s *Server) SetChannelOverwrites(channelID string, ows []Overwrite) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.w.channels[channelID]
	mustf(ch != nil, "unknown channel %s", channelID)
	ch.Overwrites = slices.Clone(ows)
}

// AddSticker stores a guild sticker; a zero FormatType is PNG.
func (s *Server) AddSticker(st Sticker) Sticker {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.guildLocked(st.GuildID)
	if st.ID == "" {
		st.ID = s.ids.next()
	}
	if st.FormatType == 0 {
		st.FormatType = 1
	}
	c := st
	g.stickers = append(g.stickers, &c)
	return st
}

// Inspection methods return copies: changing them changes nothing.

// Messages returns a channel's messages, oldest first (nil for an unknown
// channel).
func (s *Server) Messages(channelID string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.w.channels[channelID]
	if ch == nil {
		return nil
	}
	return sortedMessages(ch.messages)
}

// Message returns one message and whether it exists.
func (s *Server) Message(channelID, messageID string) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.w.message(channelID, messageID)
	if m == nil {
		return Message{}, false
	}
	return copyMessage(m), true
}

// Pins returns a channel's pinned messages, most recently pinned first.
func (s *Server) Pins(channelID string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.w.channels[channelID]
	if ch == nil {
		return nil
	}
	var out []Message
	for _, id := range ch.pins {
		if m := s.w.message(channelID, id); m != nil {
			out = append(out, copyMessage(m))
		}
	}
	return out
}

// Reactions returns a message's reactions in the order they were first
// added.
func (s *Server) Reactions(channelID, messageID string) []Reaction {
	m, ok := s.Message(channelID, messageID)
	if !ok {
		return nil
	}
	return m.Reactions
}

// Threads returns the threads whose parent is parentID, oldest first.
func (s *Server) Threads(parentID string) []Channel {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Channel
	for _, ch := range s.w.channels {
		if ch.Type.IsThread() && ch.ParentID == parentID {
			c := ch.Channel
			c.Overwrites = slices.Clone(c.Overwrites)
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b Channel) int {
		if snowflakeLess(a.ID, b.ID) {
			return -1
		}
		return 1
	})
	return out
}

// Commands returns the application commands registered for guildID ("" for
// the global ones), in registration order.
func (s *Server) Commands(guildID string) []Command {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Command
	for _, c := range s.w.commands[guildID] {
		cc := *c
		cc.Options = slices.Clone(c.Options)
		out = append(out, cc)
	}
	return out
}

// InteractionResponses returns every interaction callback received, in
// order.
func (s *Server) InteractionResponses() []InteractionResponse {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]InteractionResponse, len(s.w.responses))
	for i, r := range s.w.responses {
		r.Data = slices.Clone(r.Data)
		out[i] = r
	}
	return out
}

// Permissions returns the bot's effective permissions in a channel.
func (s *Server) Permissions(channelID string) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.w.channels[channelID]
	mustf(ch != nil, "unknown channel %s", channelID)
	return s.w.permissionsIn(s.bot.ID, ch)
}
