package webui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quiverhq/quiver/mcpclient"
	"github.com/quiverhq/quiver/webui"
)

// The stub stands in for package httpapi in the browser tests: the same
// paths, shapes, cookie session and CSRF rule, with fixtures instead of a
// store and scripted turns instead of a model.
const (
	stubSession = "sess-secret"
	stubCSRF    = "csrf-token-123"
	stubConv    = "conv_1"
)

// Messages that choose a scripted turn.
const (
	msgScripted = "What is 2+2?"         // the full turn: text, tools, usage, chips, pause
	msgSlow     = "Take your time"       // text, then waits until cancelled
	msgDropped  = "Keep going"           // two events, then the stream ends without done; the rest from …/events
	msgNoModel  = "Hello?"               // refused: no model is connected
	msgMarkdown = "Show me **Markdown**" // an answer in Markdown (markdownTurn)
	msgLong     = "Tell me a long story" // a long answer (longTurn), held midway at "long"
	msgTools    = "Search the docs"      // held at "start" and "tool" (toolsTurn)
	msgRefused  = "Refuse this"          // refused before any event: 429
	// msgArtifact (stub_artifacts_test.go) writes an artifact.
)

type stubServer struct {
	Name         string               `json:"name"`
	URL          string               `json:"url"`
	Type         string               `json:"type"`
	Enabled      bool                 `json:"enabled"`
	Token        string               `json:"token"`
	Discovery    string               `json:"discovery"`
	Tools        []string             `json:"tools"`
	Names        []mcpclient.ToolName `json:"names"`
	CreatedAt    string               `json:"created_at"`
	UpdatedAt    string               `json:"updated_at"`
	DiscoveredAt string               `json:"discovered_at,omitempty"`
}

type stubAPI struct {
	mux *http.ServeMux

	mu      sync.Mutex
	servers []stubServer
	agents  map[string]string
	paused  bool
	// released, when set, holds the scripted turn after its first text
	// delta until the test closes it.
	released chan struct{}
	// markdownHeld, when set, holds the Markdown turn while its code fence
	// is open, until the test closes it.
	markdownHeld chan struct{}
	// cancel ends the running slow turn.
	cancel chan struct{}
	// resumed holds the query of each GET …/events.
	resumed []string
	// ended, when set, ends the session: every API request is then 401.
	ended atomic.Bool
	// member, when set, makes the signed-in user a member, not an admin.
	member atomic.Bool
	// noModel, when set, makes every agent's model unreachable.
	noModel atomic.Bool

	settings stubSettings
	users    []stubUser
	dtm      stubDeliberate

	// convs are the conversations (stub_chat_test.go), by id; created
	// counts the ones POST /api/conversations made.
	convs   map[string]*stubConversation
	created int
	// holds are the points of a turn held until released (hold).
	holds map[string]chan struct{}
	// down, when set, drops every API request without an answer, as a
	// lost connection does; downAfterDrop sets it when msgDropped's
	// stream ends.
	down, downAfterDrop atomic.Bool
	// noManage, when set, answers PATCH and DELETE of a conversation 405,
	// as a server without those endpoints does.
	noManage atomic.Bool
	// models are the models each agent offers beyond its own
	// (stub_models_test.go); ranOn is the model each sent message's turn
	// ran on, in order.
	models map[string][]stubModel
	ranOn  []string
	// stored, when it holds a conversation's id, is that conversation's
	// whole stored transcript (one page); workspace are the files GET
	// /api/workspace/file serves, by path.
	stored    map[string][]map[string]any
	workspace map[string][]byte
	// artifacts are each conversation's artifacts
	// (stub_artifacts_test.go), oldest first.
	artifacts map[string][]*stubArtifact
}

func newStubAPI() *stubAPI {
	s := &stubAPI{
		mux: http.NewServeMux(),
		servers: []stubServer{
			{Name: "docs", URL: "https://docs.example/mcp", Type: "general", Enabled: true, Token: "set",
				Discovery: "discovered", Tools: []string{"search_docs", "read_page", "page.get"},
				Names:     mcpclient.WireNames("docs", []string{"search_docs", "read_page", "page.get"}),
				CreatedAt: "2026-01-02T10:00:00Z", UpdatedAt: "2026-01-02T10:00:00Z", DiscoveredAt: "2026-01-02T10:00:00Z"},
			{Name: "legacy", URL: "http://10.0.0.7:9000/mcp", Type: "web_search", Enabled: false, Token: "not set",
				Discovery: "unknown", Tools: []string{}, Names: []mcpclient.ToolName{}, CreatedAt: "2026-01-03T10:00:00Z", UpdatedAt: "2026-01-03T10:00:00Z"},
		},
		agents: map[string]string{
			"assistant": "name: assistant\nmodel: openai:gpt-4.1-mini\nprompt: |\n  You are Acme's internal assistant.\ntools: [web_search]\n",
		},
		cancel:   make(chan struct{}, 1),
		settings: newStubSettings(),
		users:    newStubUsers(),
		dtm:      newStubDeliberate(),
		convs:    map[string]*stubConversation{},
		holds:    map[string]chan struct{}{},
	}
	s.convs[stubConv] = &stubConversation{ID: stubConv, Agent: "assistant",
		Created: time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC), Updated: time.Date(2026, 1, 5, 9, 30, 0, 0, time.UTC),
		Said: []string{"Hi there"}}
	api := func(pattern string, h http.HandlerFunc) { s.mux.Handle(pattern, s.auth(h)) }
	s.mux.HandleFunc("GET /login", s.login)
	s.mux.HandleFunc("POST /login", s.confirmLogin)
	api("GET /api/me", s.me)
	api("POST /api/logout", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	api("GET /api/conversations", s.listConversations)
	api("POST /api/conversations", s.createConversation)
	api("GET /api/conversations/{id}", s.getConversation)
	api("GET /api/workspace/file", s.workspaceFile)
	api("PATCH /api/conversations/{id}", s.patchConversation)
	api("DELETE /api/conversations/{id}", s.deleteConversation)
	api("GET /api/conversations/{id}/messages", s.listMessages)
	api("POST /api/conversations/{id}/messages", s.send)
	api("GET /api/conversations/{id}/events", s.events)
	api("POST /api/conversations/{id}/answer", s.answer)
	api("POST /api/conversations/{id}/cancel", s.cancelTurn)
	api("GET /api/conversations/{id}/inspect", s.inspect)
	api("GET /api/agents", s.listAgents)
	api("GET /api/agents/{name}", s.getAgent)
	api("GET /api/agents/{name}/models", s.agentModels)
	api("GET /api/conversations/{id}/models", s.conversationModels)
	api("GET /api/conversations/{id}/attachments", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"attachments": []any{}})
	})
	api("POST /api/conversations/{id}/attachments", s.upload)
	api("GET /api/agents/{name}/knowledge", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"documents": []any{}})
	})
	api("GET /api/agents/{name}/skills", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"skills": []any{}})
	})
	api("GET /api/skills", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"skills": []any{}})
	})
	api("PUT /api/agents/{name}", s.putAgent)
	api("DELETE /api/agents/{name}", s.deleteAgent)
	api("GET /api/tools", s.tools)
	api("GET /api/mcp-servers", s.listServers)
	api("POST /api/mcp-servers", s.addServer)
	api("POST /api/mcp-servers/{name}/{verb}", s.toggleServer)
	api("DELETE /api/mcp-servers/{name}", s.deleteServer)
	s.routeAdmin(api)
	s.routeArtifacts(api)
	s.routeDeliberate(api)
	s.routeMarks(api)
	// Budgets: none set, nothing spent (budget_test.go runs the real API).
	month := map[string]any{"month_start": "2026-01-01T00:00:00Z", "month_end": "2026-02-01T00:00:00Z"}
	api("GET /api/budget", func(w http.ResponseWriter, _ *http.Request) {
		none := map[string]any{"limit": map[string]any{}, "spent": map[string]any{"calls": 0, "tokens": 0, "cost_micros": 0}}
		writeJSON(w, http.StatusOK, map[string]any{"month_start": month["month_start"], "month_end": month["month_end"],
			"you": map[string]any{"limit": none["limit"], "spent": none["spent"], "source": "none"}, "organisation": none})
	})
	api("GET /api/budgets", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"month_start": month["month_start"], "month_end": month["month_end"], "budgets": []any{}})
	})
	s.mux.Handle("/", webui.Handler())
	return s
}

func (s *stubAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// auth applies httpapi's rules: the session cookie, and X-CSRF-Token on
// unsafe methods. Handlers read the decoded JSON body with body(r).
func (s *stubAPI) auth(next http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b map[string]any
		if r.Body != nil && r.ContentLength != 0 && !strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/") {
			_ = json.NewDecoder(r.Body).Decode(&b)
		}
		if s.down.Load() {
			panic(http.ErrAbortHandler) // the connection closes with no answer
		}
		if c, err := r.Cookie("quiver_session"); err != nil || c.Value != stubSession || s.ended.Load() {
			writeErr(w, http.StatusUnauthorized, "unauthorized", "sign in with a login link, or send an API token")
			return
		}
		if r.Method != http.MethodGet && r.Header.Get("X-CSRF-Token") != stubCSRF {
			writeErr(w, http.StatusForbidden, "csrf", "missing or wrong X-CSRF-Token header (GET /api/me returns it)")
			return
		}
		next(w, r.WithContext(context.WithValue(r.Context(), bodyKey{}, b)))
	})
}

type bodyKey struct{}

func body(r *http.Request) map[string]any {
	b, _ := r.Context().Value(bodyKey{}).(map[string]any)
	return b
}

func str(m map[string]any, k string) string {
	v, _ := m[k].(string)
	return v
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeErr(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]string{"code": code, "message": msg}})
}

// login is httpapi's GET /login: a working link shows a sign-in page
// whose button posts the token; nothing else happens.
func (s *stubAPI) login(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("token") != "login-link" {
		writeErr(w, http.StatusUnauthorized, "invalid_link", "this login link is invalid, already used or expired")
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	io.WriteString(w, `<!doctype html><html lang="en"><title>Sign in · Quiver</title><main><h1>Sign in as Ana?</h1>`+
		`<form method="post" action="/login"><input type="hidden" name="token" value="login-link">`+
		`<button type="submit" id="sign-in">Sign in as Ana</button></form></main></html>`)
}

// confirmLogin is httpapi's POST /login: the session cookie and a
// redirect to the app.
func (s *stubAPI) confirmLogin(w http.ResponseWriter, r *http.Request) {
	if r.PostFormValue("token") != "login-link" {
		writeErr(w, http.StatusUnauthorized, "invalid_link", "this login link is invalid, already used or expired")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: "quiver_session", Value: stubSession, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func (s *stubAPI) me(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.meView(r))
}

// meView is GET /api/me: the timezone is X-Timezone when sent, else the
// stored zone, as httpapi answers.
func (s *stubAPI) meView(r *http.Request) map[string]any {
	u := s.meUser()
	zone := u.Timezone
	if tz := r.Header.Get("X-Timezone"); tz != "" {
		zone = tz
	}
	return map[string]any{
		"user_id": u.ID, "org_id": "o1", "org_name": "Acme", "display_name": u.DisplayName,
		"department": u.Department, "timezone": zone, "role": s.role(),
		"auth": "session", "csrf_token": stubCSRF,
	}
}

// listMessages answers a stored transcript in two pages: the newest
// (one turn, more: true), and before it an older turn.
func (s *stubAPI) listMessages(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	stored, ok := s.stored[r.PathValue("id")]
	s.mu.Unlock()
	if ok {
		writeJSON(w, http.StatusOK, map[string]any{"more": false, "messages": stored})
		return
	}
	at := "2026-01-05T09:00:00Z"
	msg := func(seq int, turn, role, content string) map[string]any {
		return map[string]any{"seq": seq, "turn_id": turn, "role": role, "content": content, "created_at": at}
	}
	if r.URL.Query().Get("before") == "11" {
		writeJSON(w, http.StatusOK, map[string]any{"more": false, "messages": []any{
			msg(1, "turn_a", "user", "Earlier question"), msg(2, "turn_a", "assistant", "Earlier answer"),
		}})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"more": true, "messages": []any{
		msg(11, "turn_0", "context", "Caller: Ana Lima"),
		msg(12, "turn_0", "user", "Hi there"),
		msg(13, "turn_0", "assistant", "Hello **Ana**. How can I help?"),
	}})
}

// events streams evs as httpapi does: id, event and data lines, flushed
// one by one.
type sse struct {
	w   http.ResponseWriter
	seq int
}

func newSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	return &sse{w: w}
}

func (e *sse) send(ev map[string]any) {
	ev["conversation_id"] = stubConv
	ev["turn_id"] = "turn_1"
	data, _ := json.Marshal(ev)
	e.seq++
	fmt.Fprintf(e.w, "id: %d\nevent: %s\ndata: %s\n\n", e.seq, ev["type"], data)
	e.w.(http.Flusher).Flush()
}

func (s *stubAPI) send(w http.ResponseWriter, r *http.Request) {
	msg := str(body(r), "message")
	if msg == msgRefused {
		writeErr(w, http.StatusTooManyRequests, "too_many_turns", "you have too many turns running at once; wait for one to end")
		return
	}
	if !s.start(w, r.PathValue("id"), body(r)) {
		return
	}
	if !s.said(r.PathValue("id"), msg) || !s.run(r.PathValue("id")) {
		writeErr(w, http.StatusNotFound, "not_found", "no such conversation")
		return
	}
	switch msg {
	case msgNoModel:
		writeErr(w, http.StatusBadRequest, "invalid_request",
			"no model is connected: no model connected: set OPENAI_API_KEY, ANTHROPIC_API_KEY or GEMINI_API_KEY (or a provider in --config), or start Ollama on localhost:11434")
	case msgScripted:
		s.scripted(r.Context(), newSSE(w))
	case msgMarkdown:
		s.markdownTurn(r.Context(), newSSE(w))
	case msgLong:
		s.longTurn(r.Context(), newSSE(w))
	case msgTools:
		s.toolsTurn(r.Context(), w)
	case msgArtifact:
		s.artifactTurn(r.Context(), newSSE(w), r.PathValue("id"))
	case msgMarks:
		s.marksTurn(r.Context(), newSSE(w))
	case msgDropped:
		e := newSSE(w)
		e.send(map[string]any{"type": "text", "text": "Part one, "})
		e.send(map[string]any{"type": "usage", "usage": map[string]any{"input_tokens": 10, "output_tokens": 2}})
		// The stream ends without done, as when a proxy or a stopping
		// server cuts it. (An aborted connection may lose its last
		// chunks inside the browser before the page reads them: the
		// page resumes from the last event it read either way.)
		if s.downAfterDrop.Load() {
			s.down.Store(true)
		}
	case msgSlow:
		e := newSSE(w)
		e.send(map[string]any{"type": "text", "text": "Working on it…"})
		select {
		case <-s.cancel:
			e.send(map[string]any{"type": "done", "stop": "cancelled"})
		case <-r.Context().Done():
		}
	default:
		e := newSSE(w)
		e.send(map[string]any{"type": "text", "text": "You said: " + msg})
		e.send(map[string]any{"type": "done", "stop": "answer"})
	}
}

// events resumes msgDropped's turn after its second event, as httpapi's
// GET …/events does; it records the query it was asked.
func (s *stubAPI) events(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.resumed = append(s.resumed, r.URL.RawQuery)
	s.mu.Unlock()
	if r.URL.Query().Get("turn") != "turn_1" || r.URL.Query().Get("after") != "2" {
		writeErr(w, http.StatusBadRequest, "bad_cursor", "unexpected cursor "+r.URL.RawQuery)
		return
	}
	e := newSSE(w)
	e.seq = 2
	e.send(map[string]any{"type": "text", "text": "part two."})
	e.send(map[string]any{"type": "done", "stop": "answer"})
}

// scripted streams the full turn: text deltas (held after the first when
// released is set), a checklist, a successful and a failed tool call,
// the checklist updated, more text, usage, next actions, and a
// clarifying question with a suggested answer.
func (s *stubAPI) scripted(ctx context.Context, e *sse) {
	s.mu.Lock()
	hold := s.released
	s.paused = true
	s.mu.Unlock()
	e.send(map[string]any{"type": "text", "text": "Let me "})
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return
		}
	}
	e.send(map[string]any{"type": "text", "text": "work that out."})
	e.send(map[string]any{"type": "checklist", "checklist": map[string]any{"items": []map[string]string{{"text": "Add the numbers", "status": "in_progress"}, {"text": "Check the page", "status": "pending"}}}})
	e.send(map[string]any{"type": "tool_call", "call": map[string]any{"id": "call_1", "name": "calculate", "args": map[string]any{"expression": "2+2"}}})
	e.send(map[string]any{"type": "tool_result", "result": map[string]any{"call_id": "call_1", "name": "calculate", "content": "4"}})
	e.send(map[string]any{"type": "tool_call", "call": map[string]any{"id": "call_2", "name": "fetch_url", "args": map[string]any{"url": "http://10.0.0.1/"}}})
	e.send(map[string]any{"type": "tool_result", "result": map[string]any{"call_id": "call_2", "name": "fetch_url", "content": "fetch_url: blocked address 10.0.0.1", "is_error": true}})
	e.send(map[string]any{"type": "checklist", "checklist": map[string]any{"items": []map[string]string{{"text": "Add the numbers", "status": "completed"}, {"text": "Check the page", "status": "in_progress"}}}})
	e.send(map[string]any{"type": "text", "text": "2 + 2 = 4."})
	e.send(map[string]any{"type": "usage", "usage": map[string]any{"input_tokens": 1200, "cached_input_tokens": 1000, "output_tokens": 42}, "cost_micros": 310})
	e.send(map[string]any{"type": "next_actions", "actions": []string{"Show the steps", "Convert it to EUR"}})
	e.send(map[string]any{"type": "pause", "pause": map[string]any{"question": "Which currency should I use?", "suggested": "EUR"}})
	e.send(map[string]any{"type": "done", "stop": "pause"})
}

// The Markdown turn's answer comes as markdownDeltas, which split a code
// fence and a bold marker (the turn holds after markdownHoldAfter of them,
// the fence still open), then as markdownTail one character per event, in
// a burst. Its code line and table are wider than a phone.
const (
	markdownCode      = "go test ./webui/ -run TestChatRendersMarkdownAnswer -count=1 -v -timeout=10m -coverprofile=/tmp/quiver-webui-cover.out"
	markdownHoldAfter = 3
	markdownTail      = "| step | command | expected | owner |\n" +
		"|---|:---:|---|---:|\n" +
		"| 1 | `go vet ./webui/` | NothingOnACleanWorkingTree | TheWebInterfaceMaintainers |\n\n" +
		"3. [the docs](https://example.com/docs/web-ui)\n" +
		"4. [not a link](javascript:alert(1))\n\n" +
		"<script>alert(1)</script> <img src=x onerror=alert(2)>"
)

var markdownDeltas = []string{
	"## Steps\n\nRun it *now*, with *",
	"*care**:\n\n`",
	"``sh\n" + markdownCode + "\n",
	"``",
	"`\n\n",
}

func (s *stubAPI) markdownTurn(ctx context.Context, e *sse) {
	s.mu.Lock()
	hold := s.markdownHeld
	s.mu.Unlock()
	for i, d := range markdownDeltas {
		if i == markdownHoldAfter && hold != nil {
			select {
			case <-hold:
			case <-ctx.Done():
				return
			}
		}
		e.send(map[string]any{"type": "text", "text": d})
	}
	for _, c := range markdownTail {
		e.send(map[string]any{"type": "text", "text": string(c)})
	}
	e.send(map[string]any{"type": "done", "stop": "answer"})
}

func (s *stubAPI) answer(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	paused := s.paused
	s.paused = false
	s.mu.Unlock()
	if !paused {
		writeErr(w, http.StatusConflict, "not_paused", "the conversation has no question waiting for an answer")
		return
	}
	e := newSSE(w)
	e.send(map[string]any{"type": "text", "text": "Using " + str(body(r), "answer") + ": 4.00."})
	e.send(map[string]any{"type": "done", "stop": "answer"})
}

func (s *stubAPI) cancelTurn(w http.ResponseWriter, _ *http.Request) {
	select {
	case s.cancel <- struct{}{}:
		writeJSON(w, http.StatusAccepted, map[string]any{"cancelled": true})
	default:
		writeErr(w, http.StatusConflict, "not_running", "no turn of this conversation is running in this server")
	}
}

func (s *stubAPI) inspect(w http.ResponseWriter, r *http.Request) {
	params := json.RawMessage(`{"type":"object","properties":{"expression":{"type":"string"}},"required":["expression"]}`)
	// Why Deliberate Tool Mode declared each tool: given for a draft, not
	// for a stored turn, as httpapi does.
	declared := []any{}
	if r.URL.Query().Get("turn") == "" {
		declared = append(declared, map[string]any{"name": "calculate", "reason": "always-on: kept by deliberate tool mode"})
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"turn_id": r.URL.Query().Get("turn"), "agent": "assistant", "model": "openai:gpt-4.1-mini",
		"system":  "You are Acme's internal assistant.\n\nWhen numbers matter, use the calculator.",
		"context": "Caller: Ana Lima (Finance, Acme)\nTime: 2026-01-05 16:00 Asia/Ho_Chi_Minh",
		"tools": []any{
			map[string]any{"name": "calculate", "description": "Evaluate an arithmetic expression exactly.", "parameters": params},
			map[string]any{"name": "docs__search_docs", "description": "Searches the docs.", "parameters": params},
		},
		"origins": []any{map[string]any{"name": "docs__search_docs", "server": "docs", "tool": "search_docs"}},
		"sizes":   map[string]any{"definitions_chars": 2900, "always_paid_chars": 2400, "system_chars": 64, "context_chars": 70},
		"excluded": []any{
			map[string]any{"name": "web_search", "reason": "Deliberate Tool Mode: the message asks for no web search"},
			map[string]any{"name": "memory_save", "reason": "memory: switch off"},
		},
		"intent":   []any{map[string]any{"family": "calc", "trigger": "what is", "source": "en"}},
		"declared": declared,
		"warnings": []string{"prompt: {user_department} is empty for this caller"},
	})
}

func (s *stubAPI) listAgents(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := []any{}
	for _, n := range slices.Sorted(maps.Keys(s.agents)) {
		list = append(list, map[string]any{"name": n, "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-04T00:00:00Z"})
	}
	writeJSON(w, http.StatusOK, map[string]any{"agents": list})
}

func (s *stubAPI) getAgent(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	def, ok := s.agents[r.PathValue("name")]
	s.mu.Unlock()
	if !ok {
		writeErr(w, http.StatusNotFound, "not_found", "no such agent")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"name": r.PathValue("name"), "definition": def,
		"created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-04T00:00:00Z"})
}

// putAgent validates like the engine, roughly: the name line must match
// the path; an unknown macro is a warning, an unknown key an error, and a
// definition naming web_serch gets two allowlist warnings.
func (s *stubAPI) putAgent(w http.ResponseWriter, r *http.Request) {
	def := str(body(r), "definition")
	name := r.PathValue("name")
	if strings.Contains(def, "colour:") {
		writeErr(w, http.StatusBadRequest, "invalid_agent", "line 3: field colour not found in type config.Agent")
		return
	}
	if !strings.Contains(def, "name: "+name+"\n") {
		writeErr(w, http.StatusBadRequest, "name_mismatch", "the definition names another agent than the path "+name)
		return
	}
	var warnings []string
	if strings.Contains(def, "{user_nam}") {
		warnings = append(warnings, "prompt: unknown macro {user_nam}")
	}
	resp := map[string]any{"name": name, "definition": def, "warnings": warnings,
		"created_at": "2026-01-01T00:00:00Z", "updated_at": time.Now().UTC().Format(time.RFC3339)}
	if strings.Contains(def, "web_serch") {
		resp["allowlist_warnings"] = []map[string]string{
			{"entry": "web_serch", "message": `"web_serch" is not a tool or family name`, "suggestion": "web_search"},
			{"entry": "gitlab/*", "message": `no MCP server "gitlab" is registered in this organisation`},
		}
	}
	s.mu.Lock()
	s.agents[name] = def
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, resp)
}

func (s *stubAPI) deleteAgent(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	delete(s.agents, r.PathValue("name"))
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (s *stubAPI) tools(w http.ResponseWriter, _ *http.Request) {
	tool := func(name, family, access string, always bool, size int, desc string) map[string]any {
		return map[string]any{"name": name, "family": family, "access": access, "always_on": always, "definition_chars": size, "description": desc}
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"tools": []any{
			tool("calculate", "calc", "read", true, 520, "Evaluate an arithmetic expression exactly."),
			tool("ask_clarifying_question", "ask", "read", true, 610, "Ask the user one question when the request is ambiguous."),
			tool("web_search", "web", "read", false, 880, "Search the web. Do not use it for facts you already know."),
			tool("write_file", "workspace", "write", false, 700, "Write a file in the user's workspace."),
		},
		"always_paid_chars": 2400, "always_paid_ceiling": 3000, "widest_chars": 9100, "widest_ceiling": 12000,
	})
}

func (s *stubAPI) listServers(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"servers": slices.Clone(s.servers)})
}

func (s *stubAPI) addServer(w http.ResponseWriter, r *http.Request) {
	b := body(r)
	u, err := url.Parse(str(b, "url"))
	if err != nil || u.Host == "" {
		writeErr(w, http.StatusBadRequest, "invalid_request", "url: not an http(s) URL")
		return
	}
	srv := stubServer{Name: str(b, "name"), URL: u.String(), Type: str(b, "type"), Enabled: true, Token: "not set",
		Discovery: "none", Tools: []string{}, Names: []mcpclient.ToolName{}, CreatedAt: "2026-01-06T10:00:00Z", UpdatedAt: "2026-01-06T10:00:00Z",
		DiscoveredAt: "2026-01-06T10:00:00Z"}
	if str(b, "token") != "" {
		srv.Token = "set"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range s.servers {
		if x.Name == srv.Name {
			writeErr(w, http.StatusConflict, "name_taken", "an MCP server of that name is already registered")
			return
		}
	}
	s.servers = append(s.servers, srv)
	writeJSON(w, http.StatusCreated, srv)
}

func (s *stubAPI) toggleServer(w http.ResponseWriter, r *http.Request) {
	verb := r.PathValue("verb")
	if verb != "enable" && verb != "disable" {
		writeErr(w, http.StatusNotFound, "not_found", "no such endpoint")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.servers {
		if s.servers[i].Name == r.PathValue("name") {
			s.servers[i].Enabled = verb == "enable"
			w.WriteHeader(http.StatusNoContent)
			return
		}
	}
	writeErr(w, http.StatusNotFound, "not_found", "no such MCP server")
}

func (s *stubAPI) deleteServer(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("confirm") != "true" {
		writeErr(w, http.StatusBadRequest, "confirmation_required", "add ?confirm=true to delete the server")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.servers)
	s.servers = slices.DeleteFunc(s.servers, func(x stubServer) bool { return x.Name == r.PathValue("name") })
	if len(s.servers) == n {
		writeErr(w, http.StatusNotFound, "not_found", "no such MCP server")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// workspaceFile serves a file of s.workspace inline, as httpapi serves a
// workspace image; any other path is 404.
func (s *stubAPI) workspaceFile(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	data, ok := s.workspace[r.URL.Query().Get("path")]
	s.mu.Unlock()
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]string{"code": "not_found", "message": "no such file in your workspace"}})
		return
	}
	w.Header().Set("Content-Type", "image/png")
	_, _ = w.Write(data)
}
