package webui_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"
)

// The stub's organisation settings, people, tool console and model status,
// with httpapi's shapes and rules: admin-only settings and users, versioned
// settings saves (409 conflict), write-only keys, the last admin kept, no
// disabling oneself, no login link for a disabled user.

// stubSecret is a key value the stub stores at the start; no response
// may ever contain it.
const stubSecret = "sk-stored-secret-0001"

// stubModelHelp is the model-status help for an unreachable model.
const stubModelHelp = "No model connected: set OPENAI_API_KEY (or another provider's key) where quiver serve runs, or start Ollama on localhost:11434."

type stubKey struct{ name, label, env string }

// stubKeys are the keys the settings know; env is a value the deployment's
// environment supplies.
var stubKeys = []stubKey{
	{"openai_api_key", "OpenAI API key", ""},
	{"anthropic_api_key", "Anthropic API key", ""},
	{"brave_api_key", "Brave Search API key", "env-brave-value"},
}

var stubSwitchNames = []string{"tool_use", "personal_memories", "emoji_usage", "web_search", "image_generation", "time_awareness"}

// stubSwitchInfo is switch_info as the engine gives it: image_generation
// has no tool behind it yet.
var stubSwitchInfo = []map[string]any{
	{"name": "tool_use", "tools": []string{}, "no_tool": false, "effect": "every tool: off, the turn declares none"},
	{"name": "personal_memories", "tools": []string{}, "no_tool": false, "effect": "prompt conditions only"},
	{"name": "emoji_usage", "tools": []string{}, "no_tool": false, "effect": "prompt conditions only"},
	{"name": "web_search", "family": "web_search", "tools": []string{"web_search", "research_web"}, "no_tool": false,
		"effect": "off leaves out web_search, research_web"},
	{"name": "image_generation", "family": "image_generation", "tools": []string{}, "no_tool": true,
		"effect": "no tool yet: would gate the image_generation family; setting it changes nothing"},
	{"name": "time_awareness", "tools": []string{}, "no_tool": false, "effect": "the current time in the context message: off leaves it out"},
}

type stubWeb struct {
	Disabled           bool     `json:"disabled"`
	SearXNGURL         string   `json:"searxng_url"`
	IAskURL            string   `json:"iask_url"`
	DuckDuckGoDisabled bool     `json:"duckduckgo_disabled"`
	ExcludeProviders   []string `json:"exclude_providers"`
}

// stubSettings are the organisation's settings; keys holds the values
// saved in settings (write-only: never sent back).
type stubSettings struct {
	version   int64
	switches  map[string]bool
	mode      string
	web       stubWeb
	keys      map[string]string
	updatedAt time.Time
}

func newStubSettings() stubSettings {
	return stubSettings{
		version:   3,
		switches:  map[string]bool{"emoji_usage": true},
		mode:      "public",
		web:       stubWeb{SearXNGURL: "https://searx.example.org", ExcludeProviders: []string{"iask"}},
		keys:      map[string]string{"openai_api_key": stubSecret},
		updatedAt: time.Date(2026, 1, 4, 12, 0, 0, 0, time.UTC),
	}
}

type stubUser struct {
	ID          string `json:"id"`
	DisplayName string `json:"display_name"`
	Department  string `json:"department"`
	Timezone    string `json:"timezone"`
	Role        string `json:"role"`
	Disabled    bool   `json:"disabled"`
	CreatedAt   string `json:"created_at"`
	UpdatedAt   string `json:"updated_at"`
}

// stubMe is the signed-in user's id (Ana Lima).
const stubMe = "u1"

func newStubUsers() []stubUser {
	at := "2026-01-01T09:00:00Z"
	return []stubUser{
		{ID: stubMe, DisplayName: "Ana Lima", Department: "Finance", Timezone: "Asia/Ho_Chi_Minh", Role: "admin", CreatedAt: at, UpdatedAt: at},
		{ID: "u2", DisplayName: "Bruno Costa", Department: "Sales", Timezone: "Europe/Lisbon", Role: "member", CreatedAt: at, UpdatedAt: at},
		{ID: "u3", DisplayName: "Chi Nguyen", Role: "member", Disabled: true, CreatedAt: at, UpdatedAt: at},
	}
}

func (s *stubAPI) routeAdmin(api func(string, http.HandlerFunc)) {
	api("GET /api/settings", s.admin(s.getSettings))
	api("PUT /api/settings", s.admin(s.putSettings))
	api("GET /api/users", s.admin(s.listUsers))
	api("POST /api/users", s.admin(s.createUser))
	api("PATCH /api/users/{id}", s.admin(s.patchUser))
	api("DELETE /api/users/{id}", s.admin(s.disableUser))
	api("POST /api/users/{id}/enable", s.admin(s.enableUser))
	api("POST /api/users/{id}/erase", s.admin(s.eraseUser))
	api("POST /api/users/{id}/login-link", s.admin(s.loginLink))
	api("GET /api/console/tools", s.consoleTools)
	api("POST /api/console/run", s.consoleRun)
	api("GET /api/agents/{name}/model-status", s.modelStatus)
}

// meUser is the signed-in user's record.
func (s *stubAPI) meUser() stubUser {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.users[slices.IndexFunc(s.users, func(u stubUser) bool { return u.ID == stubMe })]
}

// role is the signed-in user's role.
func (s *stubAPI) role() string {
	if s.member.Load() {
		return "member"
	}
	return s.meUser().Role
}

func (s *stubAPI) admin(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.role() != "admin" {
			writeErr(w, http.StatusForbidden, "forbidden", "only admins may do this")
			return
		}
		next(w, r)
	}
}

// settingsView is GET /api/settings: keys say only whether they are set.
func (s *stubAPI) settingsView() map[string]any {
	st := s.settings
	keys := []any{}
	for _, k := range stubKeys {
		state := map[string]any{"name": k.name, "label": k.label, "set": false, "source": ""}
		switch {
		case st.keys[k.name] != "":
			state["set"], state["source"] = true, "settings"
		case k.env != "":
			state["set"], state["source"] = true, "environment"
		}
		keys = append(keys, state)
	}
	web := st.web
	web.ExcludeProviders = append([]string{}, web.ExcludeProviders...)
	return map[string]any{
		"version": st.version, "switches": maps.Clone(st.switches), "switch_names": stubSwitchNames, "switch_info": stubSwitchInfo,
		"network_mode": st.mode, "network_modes": []string{"public", "self-hosted"}, "web": web,
		"keys": keys, "connections": []any{}, "server_connections": []string{}, "embedding_model": "local:ngram-512", "updated_at": st.updatedAt.Format(time.RFC3339),
	}
}

func (s *stubAPI) getSettings(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	writeJSON(w, http.StatusOK, s.settingsView())
}

// settingsUpdate is PUT /api/settings's body.
type settingsUpdate struct {
	Version     int64             `json:"version"`
	Switches    map[string]bool   `json:"switches"`
	NetworkMode string            `json:"network_mode"`
	Web         stubWeb           `json:"web"`
	SetKeys     map[string]string `json:"set_keys"`
	ClearKeys   []string          `json:"clear_keys"`
}

// putSettings validates as internal/app does, then stores the update as
// the next version.
func (s *stubAPI) putSettings(w http.ResponseWriter, r *http.Request) {
	var u settingsUpdate
	raw, _ := json.Marshal(body(r))
	if err := json.Unmarshal(raw, &u); err != nil {
		writeErr(w, http.StatusBadRequest, "invalid_request", "validation failed: "+err.Error())
		return
	}
	if msg := checkSettings(u); msg != "" {
		writeErr(w, http.StatusBadRequest, "invalid_request", msg)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if u.Version != s.settings.version {
		writeErr(w, http.StatusConflict, "conflict", "the settings were changed by someone else since you opened them; reload and try again")
		return
	}
	st := &s.settings
	st.version++
	st.switches, st.mode, st.web = maps.Clone(u.Switches), u.NetworkMode, u.Web
	for _, name := range u.ClearKeys {
		delete(st.keys, name)
	}
	maps.Copy(st.keys, u.SetKeys)
	st.updatedAt = time.Date(2026, 1, 6, 8, 0, 0, 0, time.UTC)
	writeJSON(w, http.StatusOK, s.settingsView())
}

func checkSettings(u settingsUpdate) string {
	for name := range u.Switches {
		if !slices.Contains(stubSwitchNames, name) {
			return fmt.Sprintf("switches: %q is not a switch", name)
		}
	}
	if u.NetworkMode != "public" && u.NetworkMode != "self-hosted" {
		return fmt.Sprintf("network_mode: %q is not one of public, self-hosted", u.NetworkMode)
	}
	if u.Web.SearXNGURL != "" && !strings.HasPrefix(u.Web.SearXNGURL, "http") {
		return "web.searxng_url: not an http or https URL"
	}
	known := func(n string) bool { return slices.ContainsFunc(stubKeys, func(k stubKey) bool { return k.name == n }) }
	for name, v := range u.SetKeys {
		if !known(name) || strings.TrimSpace(v) == "" {
			return fmt.Sprintf("set_keys: %s is not a key name or is empty", name)
		}
	}
	for _, name := range u.ClearKeys {
		if _, both := u.SetKeys[name]; both || !known(name) {
			return fmt.Sprintf("clear_keys: %s is not a key name or is also set", name)
		}
	}
	return ""
}

// otherAdminSaves stands for another admin saving the settings meanwhile.
func (s *stubAPI) otherAdminSaves() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settings.version++
	s.settings.web.IAskURL = "https://iask.example/api"
}

func (s *stubAPI) listUsers(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"users": slices.Clone(s.users)})
}

func (s *stubAPI) createUser(w http.ResponseWriter, r *http.Request) {
	b := body(r)
	if strings.TrimSpace(str(b, "display_name")) == "" {
		writeErr(w, http.StatusBadRequest, "invalid_request", "validation failed: body.display_name: expected length >= 1")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	at := "2026-01-06T10:00:00Z"
	u := stubUser{ID: fmt.Sprintf("u%d", len(s.users)+1), DisplayName: str(b, "display_name"), Department: str(b, "department"),
		Timezone: str(b, "timezone"), Role: str(b, "role"), CreatedAt: at, UpdatedAt: at}
	s.users = append(s.users, u)
	writeJSON(w, http.StatusCreated, map[string]any{"user": u, "login_link": "/login?token=invite-" + u.ID + "-secret",
		"expires_at": "2026-01-13T10:00:00Z"})
}

// enabledAdmins counts the enabled admins other than id.
func (s *stubAPI) enabledAdmins(except string) int {
	n := 0
	for _, u := range s.users {
		if u.ID != except && u.Role == "admin" && !u.Disabled {
			n++
		}
	}
	return n
}

// user returns the index of the user id, or -1 after answering 404.
func (s *stubAPI) user(w http.ResponseWriter, id string) int {
	i := slices.IndexFunc(s.users, func(u stubUser) bool { return u.ID == id })
	if i < 0 {
		writeErr(w, http.StatusNotFound, "not_found", "no such user")
	}
	return i
}

func lastAdmin(w http.ResponseWriter) {
	writeErr(w, http.StatusConflict, "last_admin", "this is the organisation's last admin: make another user an admin first")
}

func (s *stubAPI) patchUser(w http.ResponseWriter, r *http.Request) {
	b := body(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.user(w, r.PathValue("id"))
	if i < 0 {
		return
	}
	u := s.users[i]
	if tz, ok := b["timezone"].(string); ok && tz != "" {
		if _, err := time.LoadLocation(tz); err != nil {
			writeErr(w, http.StatusBadRequest, "bad_timezone", "timezone: "+err.Error())
			return
		}
	}
	if role, ok := b["role"].(string); ok && role != "admin" && u.Role == "admin" && s.enabledAdmins(u.ID) == 0 {
		lastAdmin(w)
		return
	}
	for k, p := range map[string]*string{"display_name": &u.DisplayName, "department": &u.Department, "timezone": &u.Timezone, "role": &u.Role} {
		if v, ok := b[k].(string); ok {
			*p = v
		}
	}
	s.users[i] = u
	writeJSON(w, http.StatusOK, u)
}

func (s *stubAPI) disableUser(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("id") == stubMe {
		writeErr(w, http.StatusBadRequest, "cannot_disable_self", "you cannot disable yourself; another admin can")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.user(w, r.PathValue("id"))
	if i < 0 {
		return
	}
	if u := s.users[i]; u.Role == "admin" && !u.Disabled && s.enabledAdmins(u.ID) == 0 {
		lastAdmin(w)
		return
	}
	s.users[i].Disabled = true
	w.WriteHeader(http.StatusNoContent)
}

// eraseUser removes the user, with httpapi's refusals of yourself and of
// the last enabled admin.
func (s *stubAPI) eraseUser(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("id") == stubMe {
		writeErr(w, http.StatusBadRequest, "cannot_erase_self", "you cannot erase yourself; another admin can")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.user(w, r.PathValue("id"))
	if i < 0 {
		return
	}
	if u := s.users[i]; u.Role == "admin" && !u.Disabled && s.enabledAdmins(u.ID) == 0 {
		lastAdmin(w)
		return
	}
	s.users = slices.Delete(s.users, i, i+1)
	w.WriteHeader(http.StatusNoContent)
}

// enableUser answers the user enabled; an enabled one as it is.
func (s *stubAPI) enableUser(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.user(w, r.PathValue("id"))
	if i < 0 {
		return
	}
	if s.users[i].Disabled {
		s.users[i].Disabled, s.users[i].UpdatedAt = false, "2026-01-12T10:00:00Z"
	}
	writeJSON(w, http.StatusOK, s.users[i])
}

func (s *stubAPI) loginLink(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.user(w, r.PathValue("id"))
	if i < 0 {
		return
	}
	if s.users[i].Disabled {
		writeErr(w, http.StatusConflict, "user_disabled", "this user is disabled: enable them first")
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"login_link": "/login?token=relink-" + s.users[i].ID + "-secret",
		"expires_at": "2026-01-13T10:00:00Z"})
}

// consoleTool lists a tool with its input schema.
func consoleTool(name, family, access, desc, schema string) map[string]any {
	return map[string]any{"name": name, "family": family, "access": access, "description": desc, "input_schema": json.RawMessage(schema)}
}

// consoleTools answers the assistant's tools; other agents have none.
func (s *stubAPI) consoleTools(w http.ResponseWriter, r *http.Request) {
	agent := r.URL.Query().Get("agent")
	s.mu.Lock()
	_, ok := s.agents[agent]
	s.mu.Unlock()
	if !ok {
		writeErr(w, http.StatusBadRequest, "unknown_agent", "no agent named "+agent)
		return
	}
	tools := []any{}
	if agent == "assistant" {
		tools = []any{
			consoleTool("calculate", "calc", "read", "Evaluate an arithmetic expression exactly.",
				`{"type":"object","properties":{"expression":{"type":"string"}},"required":["expression"]}`),
			consoleTool("convert_currency", "calc", "read", "Convert an amount between currencies.",
				`{"type":"object","properties":{"amount":{"type":"number","minimum":1},"currency":{"type":"string","enum":["EUR","USD"]},`+
					`"options":{"type":"object","properties":{"round":{"type":"boolean"},"note":{"type":"string"}},"required":["round"]},`+
					`"tags":{"type":"array","items":{"type":"string"}},"count":{"type":["integer","null"]},"date":{"type":"string"}},`+
					`"required":["amount","currency","options","tags","count"]}`),
			consoleTool("fetch_url", "url_fetch", "read", "Read one web page.",
				`{"type":"object","properties":{"url":{"type":"string"},"max_length":{"type":"integer"}},"required":["url"]}`),
			consoleTool("write_file", "workspace", "write", "Write a file in the user's workspace.",
				`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}`),
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"tools": tools})
}

// consoleRun runs calculate on "2+2" and fails every other call as the
// tool would.
func (s *stubAPI) consoleRun(w http.ResponseWriter, r *http.Request) {
	b := body(r)
	args, _ := b["arguments"].(map[string]any)
	name := str(b, "tool")
	run := map[string]any{"tool": name, "duration_ms": 12, "is_error": false}
	switch {
	case str(b, "agent") != "assistant":
		writeErr(w, http.StatusBadRequest, "unknown_agent", "no agent named "+str(b, "agent"))
		return
	case name == "calculate" && args["expression"] == "2+2":
		run["result"] = `{"value":4}`
	case name == "calculate":
		run["result"], run["is_error"] = fmt.Sprintf("calculate: cannot parse %q", args["expression"]), true
	case name == "fetch_url":
		run["result"], run["is_error"], run["duration_ms"] = "fetch_url: blocked: address not allowed (10.0.0.1)", true, 3
	default:
		writeErr(w, http.StatusBadRequest, "invalid_request", "the agent has no tool "+name)
		return
	}
	writeJSON(w, http.StatusOK, run)
}

func (s *stubAPI) modelStatus(w http.ResponseWriter, r *http.Request) {
	st := map[string]any{"model": "openai:gpt-4.1-mini", "connected": true}
	if s.noModel.Load() {
		st["connected"], st["help"] = false, stubModelHelp
	}
	writeJSON(w, http.StatusOK, st)
}
