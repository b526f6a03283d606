package discordtest

import (
	"net/http"
	"sort"
)

// guildRoutes serves what a client reads to compute its permissions and
// list where it may post: the guild with its roles, its channels and its
// active threads. Discord answers these for any guild the bot is in.
func (s *Server) guildRoutes(api api) {
	api("GET /guilds/{guild}", true, s.getGuild)
	api("GET /guilds/{guild}/channels", true, s.listGuildChannels)
	api("GET /guilds/{guild}/threads/active", true, s.listActiveThreads)
}

// memberGuildLocked returns the guild the path names when the bot is in
// it, or Discord's error.
func (s *Server) memberGuildLocked(r *http.Request) (*guildState, *reply) {
	g := s.w.guilds[r.PathValue("guild")]
	if g == nil {
		return nil, &errUnknownGuild
	}
	if g.members[s.bot.ID] == nil {
		return nil, &errMissingAccess
	}
	return g, nil
}

func (s *Server) getGuild(r *http.Request, _ []byte) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, e := s.memberGuildLocked(r)
	if e != nil {
		return *e
	}
	wg := s.guildCreateLocked(g, 0)
	// GET /guilds/{id} carries no channels, threads or members.
	wg.Channels, wg.Threads, wg.Members, wg.JoinedAt = nil, nil, nil, ""
	return ok(wg)
}

// guildChannelsLocked returns the guild's channels (threads when
// threads is set), in id order.
func (s *Server) guildChannelsLocked(g *guildState, threads bool) []wireChannel {
	out := []wireChannel{}
	for _, ch := range s.w.channels {
		if ch.GuildID == g.ID && ch.Type.IsThread() == threads {
			out = append(out, toWireChannel(ch))
		}
	}
	sort.Slice(out, func(i, j int) bool { return snowflakeLess(out[i].ID, out[j].ID) })
	return out
}

func (s *Server) listGuildChannels(r *http.Request, _ []byte) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, e := s.memberGuildLocked(r)
	if e != nil {
		return *e
	}
	return ok(s.guildChannelsLocked(g, false))
}

func (s *Server) listActiveThreads(r *http.Request, _ []byte) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, e := s.memberGuildLocked(r)
	if e != nil {
		return *e
	}
	return ok(map[string]any{"threads": s.guildChannelsLocked(g, true), "members": []any{}, "has_more": false})
}
