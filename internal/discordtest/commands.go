package discordtest

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"unicode/utf8"
)

const (
	maxCommands       = 100
	maxCommandOptions = 25
)

var (
	errTooManyCommands = fail(400, 30032, "Maximum number of application commands reached (100)")
	// chatInputName is Discord's rule for slash command names.
	chatInputName = regexp.MustCompile(`^[-_\p{Ll}\p{Lo}\p{N}]{1,32}$`)
)

func (s *Server) applicationRoutes(api api) {
	for _, prefix := range []string{"/applications/{app}", "/applications/{app}/guilds/{guild}"} {
		api("GET "+prefix+"/commands", true, s.listCommands)
		api("PUT "+prefix+"/commands", true, s.overwriteCommands)
		api("POST "+prefix+"/commands", true, s.createCommand)
		api("DELETE "+prefix+"/commands/{command}", true, s.deleteCommand)
	}
	api("GET /guilds/{guild}/stickers", true, s.listStickers)
	api("GET /guilds/{guild}/members/{user}", true, s.getMember)
	s.guildRoutes(api)
	s.interactionRoutes(api)
}

type commandIn struct {
	ID                       string          `json:"id"`
	Type                     int             `json:"type"`
	Name                     string          `json:"name"`
	Description              string          `json:"description"`
	Options                  json.RawMessage `json:"options"`
	DefaultMemberPermissions *string         `json:"default_member_permissions"`
}

type wireCommand struct {
	ID                       string          `json:"id"`
	ApplicationID            string          `json:"application_id"`
	GuildID                  string          `json:"guild_id,omitempty"`
	Version                  string          `json:"version"`
	Type                     int             `json:"type"`
	Name                     string          `json:"name"`
	Description              string          `json:"description"`
	Options                  json.RawMessage `json:"options,omitempty"`
	DefaultMemberPermissions *string         `json:"default_member_permissions"`
	NSFW                     bool            `json:"nsfw"`
}

func toWireCommand(c *Command) wireCommand {
	wc := wireCommand{ID: c.ID, ApplicationID: c.ApplicationID, GuildID: c.GuildID, Version: c.Version,
		Type: c.Type, Name: c.Name, Description: c.Description, Options: c.Options}
	if c.DefaultMemberPermissions != nil {
		p := FormatPermissions(*c.DefaultMemberPermissions)
		wc.DefaultMemberPermissions = &p
	}
	return wc
}

// commandScope checks the application id and, for guild commands, that
// the bot is in the guild; it returns the guild id ("" for global).
func (s *Server) commandScope(r *http.Request) (string, *reply) {
	if r.PathValue("app") != s.appID {
		return "", &errMissingAccess
	}
	gid := r.PathValue("guild")
	if gid != "" {
		g := s.w.guilds[gid]
		if g == nil {
			return "", &errUnknownGuild
		}
		if g.members[s.bot.ID] == nil {
			return "", &errMissingAccess
		}
	}
	return gid, nil
}

// parseCommand validates one command as Discord does (names, description
// lengths by type, option count, permission string).
func (s *Server) parseCommand(in commandIn, guildID string) (*Command, *reply) {
	if in.Type == 0 {
		in.Type = 1
	}
	if e := validateCommandKind(in); e != nil {
		return nil, e
	}
	bad := func(field, msg string) (*Command, *reply) {
		r := invalidForm(field, "APPLICATION_COMMAND_INVALID", msg)
		return nil, &r
	}
	var opts []json.RawMessage
	if len(in.Options) > 0 && string(in.Options) != "null" {
		if json.Unmarshal(in.Options, &opts) != nil {
			return bad("options", "Must be an array.")
		}
		if len(opts) > maxCommandOptions {
			return bad("options", "Must be 25 or fewer in length.")
		}
	}
	c := &Command{ApplicationID: s.appID, GuildID: guildID, Type: in.Type, Name: in.Name,
		Description: in.Description, Options: slices.Clone(in.Options)}
	if len(opts) == 0 {
		c.Options = nil
	}
	if in.DefaultMemberPermissions != nil {
		p, err := ParsePermissions(*in.DefaultMemberPermissions)
		if err != nil {
			return bad("default_member_permissions", "Invalid permissions")
		}
		c.DefaultMemberPermissions = &p
	}
	return c, nil
}

// validateCommandKind checks the name and description rules of the
// command's type: slash commands have lower-case names and a description,
// context-menu commands (user 2, message 3) have none.
func validateCommandKind(in commandIn) *reply {
	bad := func(field, msg string) *reply {
		r := invalidForm(field, "APPLICATION_COMMAND_INVALID", msg)
		return &r
	}
	switch in.Type {
	case 1:
		if !chatInputName.MatchString(in.Name) {
			return bad("name", "Command name is invalid")
		}
		if n := utf8.RuneCountInString(in.Description); n < 1 || n > 100 {
			return bad("description", "Must be between 1 and 100 in length.")
		}
	case 2, 3:
		if n := utf8.RuneCountInString(in.Name); n < 1 || n > 32 {
			return bad("name", "Must be between 1 and 32 in length.")
		}
		if in.Description != "" {
			return bad("description", "Context menu commands cannot have description")
		}
	default:
		return bad("type", "Value must be one of {1, 2, 3}.")
	}
	return nil
}

func (s *Server) listCommands(r *http.Request, _ []byte) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	gid, e := s.commandScope(r)
	if e != nil {
		return *e
	}
	out := []wireCommand{}
	for _, c := range s.w.commands[gid] {
		out = append(out, toWireCommand(c))
	}
	return ok(out)
}

// keepIdentity gives c the id of an existing command of the same name
// and type, as Discord keeps ids across overwrites.
func (s *Server) keepIdentity(c *Command, existing []*Command) bool {
	for _, old := range existing {
		if old.Name == c.Name && old.Type == c.Type {
			c.ID = old.ID
			c.Version = s.ids.next()
			return true
		}
	}
	c.ID = s.ids.next()
	c.Version = c.ID
	return false
}

func (s *Server) overwriteCommands(r *http.Request, body []byte) reply {
	var ins []commandIn
	if !decode(body, &ins) {
		return errInvalidJSON
	}
	if len(ins) > maxCommands {
		return errTooManyCommands
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	gid, e := s.commandScope(r)
	if e != nil {
		return *e
	}
	next := make([]*Command, 0, len(ins))
	seen := map[string]bool{}
	for i, in := range ins {
		c, e := s.parseCommand(in, gid)
		if e != nil {
			return *e
		}
		key := strconv.Itoa(c.Type) + ":" + c.Name
		if seen[key] {
			return invalidForm(strconv.Itoa(i), "APPLICATION_COMMANDS_DUPLICATE_NAME", "Application command names must be unique")
		}
		seen[key] = true
		s.keepIdentity(c, s.w.commands[gid])
		next = append(next, c)
	}
	s.w.commands[gid] = next
	out := []wireCommand{}
	for _, c := range next {
		out = append(out, toWireCommand(c))
	}
	return ok(out)
}

// createCommand adds a command; one with the same name and type is
// replaced (200) rather than added (201).
func (s *Server) createCommand(r *http.Request, body []byte) reply {
	var in commandIn
	if !decode(body, &in) {
		return errInvalidJSON
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	gid, e := s.commandScope(r)
	if e != nil {
		return *e
	}
	c, e := s.parseCommand(in, gid)
	if e != nil {
		return *e
	}
	list := s.w.commands[gid]
	if s.keepIdentity(c, list) {
		i := slices.IndexFunc(list, func(o *Command) bool { return o.ID == c.ID })
		list[i] = c
		return ok(toWireCommand(c))
	}
	if len(list) >= maxCommands {
		return errTooManyCommands
	}
	s.w.commands[gid] = append(list, c)
	return reply{status: http.StatusCreated, body: toWireCommand(c)}
}

func (s *Server) deleteCommand(r *http.Request, _ []byte) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	gid, e := s.commandScope(r)
	if e != nil {
		return *e
	}
	list := s.w.commands[gid]
	i := slices.IndexFunc(list, func(c *Command) bool { return c.ID == r.PathValue("command") })
	if i < 0 {
		return errUnknownCommand
	}
	s.w.commands[gid] = slices.Delete(list, i, i+1)
	return noContent()
}

func (s *Server) listStickers(r *http.Request, _ []byte) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.w.guilds[r.PathValue("guild")]
	if g == nil {
		return errUnknownGuild
	}
	if g.members[s.bot.ID] == nil {
		return errMissingAccess
	}
	out := []wireSticker{}
	for _, st := range g.stickers {
		out = append(out, toWireSticker(st))
	}
	return ok(out)
}

func (s *Server) getMember(r *http.Request, _ []byte) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.w.guilds[r.PathValue("guild")]
	if g == nil {
		return errUnknownGuild
	}
	if g.members[s.bot.ID] == nil {
		return errMissingAccess
	}
	m := g.members[r.PathValue("user")]
	if m == nil {
		return errUnknownMember
	}
	return ok(toWireMember(m, true))
}
