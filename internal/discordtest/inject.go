package discordtest

// SendMessage stores a message from authorID (a member of the channel's
// guild) and dispatches MESSAGE_CREATE with the author's member object, as
// when a person writes in Discord. It returns the stored message.
func (s *Server) SendMessage(channelID, authorID, content string) Message {
	return s.PostMessage(Message{ChannelID: channelID, Author: User{ID: authorID}, Content: content})
}

// PostMessage is SendMessage with every field the test wants (a reply's
// Reference, StickerIDs, a Nonce). ID, GuildID, Timestamp and the author's
// user come from the fake; Author.ID must be a member of the guild.
func (s *Server) PostMessage(m Message) Message {
	s.mu.Lock()
	ch := s.w.channels[m.ChannelID]
	mustf(ch != nil, "post message: unknown channel %s", m.ChannelID)
	g := s.w.guilds[ch.GuildID]
	mem := g.members[m.Author.ID]
	mustf(mem != nil, "post message: %s is not a member of guild %s", m.Author.ID, ch.GuildID)
	stored := m
	stored.ID = s.ids.next()
	stored.GuildID = ch.GuildID
	stored.Author = mem.User
	stored.Timestamp = s.now()
	if stored.Reference != nil {
		ref := *stored.Reference
		if ref.ChannelID == "" {
			ref.ChannelID = ch.ID
		}
		ref.GuildID = ch.GuildID
		stored.Reference = &ref
		stored.Type = messageTypeReply
	}
	c := copyMessage(&stored)
	ch.messages = append(ch.messages, &c)
	ev := s.messageEvent("MESSAGE_CREATE", &c)
	out := copyMessage(&c)
	s.mu.Unlock()
	s.gw.publish(ev)
	return out
}
