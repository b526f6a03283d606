package discordtest

import "sort"

// readyEvents is what a new session receives: READY with every guild
// unavailable, then one GUILD_CREATE per guild of the session's shard
// (with the GUILDS intent), as Discord sends them.
func (s *Server) readyEvents(sess *gwSession) []event {
	s.mu.Lock()
	defer s.mu.Unlock()
	var unavailable []map[string]any
	var creates []event
	for _, gid := range s.w.guildOrder {
		if id, err := ParseSnowflake(gid); sess.nShards > 1 && err == nil && (id>>22)%sess.nShards != sess.shard {
			continue
		}
		unavailable = append(unavailable, map[string]any{"id": gid, "unavailable": true})
		creates = append(creates, event{name: "GUILD_CREATE", intent: intentGuilds, data: s.guildCreateLocked(s.w.guilds[gid], sess.intents)})
	}
	if unavailable == nil {
		unavailable = []map[string]any{}
	}
	ready := event{name: "READY", data: map[string]any{
		"v": 10, "user": toWireUser(s.bot), "guilds": unavailable, "session_id": sess.id,
		"resume_gateway_url": s.GatewayURL(), "shard": []uint64{sess.shard, sess.nShards},
		"application":      map[string]any{"id": s.appID, "flags": 0},
		"private_channels": []any{}, "relationships": []any{}, "presences": []any{},
	}}
	return append([]event{ready}, creates...)
}

// guildCreateLocked renders a guild with its roles, channels, threads,
// stickers and members: every member with the GUILD_MEMBERS intent, else
// the bot's own, as Discord sends it.
func (s *Server) guildCreateLocked(g *guildState, intents uint64) wireGuild {
	wg := wireGuild{ID: g.ID, Name: g.Name, OwnerID: g.OwnerID, Emojis: []struct{}{}, Features: []string{},
		MemberCount: len(g.members), Roles: []wireRole{}, Stickers: []wireSticker{},
		Channels: []wireChannel{}, Threads: []wireChannel{}, Members: []wireMember{}}
	for _, r := range g.roles {
		wg.Roles = append(wg.Roles, toWireRole(r))
	}
	sort.Slice(wg.Roles, func(i, j int) bool { return snowflakeLess(wg.Roles[i].ID, wg.Roles[j].ID) })
	for _, st := range g.stickers {
		wg.Stickers = append(wg.Stickers, toWireSticker(st))
	}
	for _, ch := range s.w.channels {
		if ch.GuildID != g.ID {
			continue
		}
		if ch.Type.IsThread() {
			wg.Threads = append(wg.Threads, toWireChannel(ch))
		} else {
			wg.Channels = append(wg.Channels, toWireChannel(ch))
		}
	}
	sort.Slice(wg.Channels, func(i, j int) bool { return snowflakeLess(wg.Channels[i].ID, wg.Channels[j].ID) })
	sort.Slice(wg.Threads, func(i, j int) bool { return snowflakeLess(wg.Threads[i].ID, wg.Threads[j].ID) })
	if m := g.members[s.bot.ID]; m != nil {
		wg.JoinedAt = wireTime(m.JoinedAt)
	}
	for id, m := range g.members {
		if id == s.bot.ID || intents&intentGuildMembers != 0 {
			wg.Members = append(wg.Members, toWireMember(m, true))
		}
	}
	sort.Slice(wg.Members, func(i, j int) bool { return snowflakeLess(wg.Members[i].User.ID, wg.Members[j].User.ID) })
	return wg
}
