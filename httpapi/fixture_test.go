package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/quiverhq/quiver/accounts"
	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/budget"
	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/ids"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
	"github.com/quiverhq/quiver/tool"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// sendCall is one Engine.Run the fake saw.
type sendCall struct {
	Caller         httpapi.Caller
	ConversationID string
	Message        string
}

// fakeEngine scripts turns by message:
//
//	"block"      one text event, then waits for ctx and ends as
//	             agent/loop.go does when cancelled: an error event, then
//	             done with stop "cancelled", and a nil error
//	"block-bare" one text event, then waits for ctx and returns its error
//	             without done (an engine cancelled outside its loop)
//	"silent"     waits for ctx without an event and returns its error
//	"bad"        a *BadRequest before any event
//	"over-budget" a *budget.ExceededError before any event
//	"boom"       an internal error before any event
//	"late-boom"  one text event, then an internal error
//	anything     the scripted events of a whole turn, ending with done
//
// Its settings, console and model status are in fake_test.go.
type fakeEngine struct {
	// st is the fixture's store, which Begin reads.
	st     httpapi.Repositories
	mu     sync.Mutex
	calls  []sendCall
	begun  int            // ordinary turns begun, numbering their ids
	begins map[string]int // Begin calls by message
	// onBegin, when set (before any request), runs at the end of every
	// Begin with its message and how many times it was begun.
	onBegin func(message string, n int)
	blocked chan error // receives context.Cause(ctx) when a blocked turn ends, ctx.Err() when a tool run does
	// toolRunning receives the context of a console run of the tool
	// "block" once it runs.
	toolRunning chan context.Context

	catalogCallers []httpapi.Caller
	consoleCallers []httpapi.Caller
	runs           []toolRunCall
	settings       map[string]*fakeSettings // by organisation
}

const secretDetail = "sqlite: disk I/O error at /var/lib/secret"

func scriptedEvents(conv string) []agent.Event {
	return []agent.Event{
		{Kind: agent.EventText, ConversationID: conv, TurnID: "turn_1", Text: "Hel"},
		{Kind: agent.EventText, ConversationID: conv, TurnID: "turn_1", Text: "lo"},
		{Kind: agent.EventToolCall, ConversationID: conv, TurnID: "turn_1", Call: &llm.ToolCall{ID: "c1", Name: "calculate", Args: json.RawMessage(`{"expression":"1+1"}`)}},
		{Kind: agent.EventToolResult, ConversationID: conv, TurnID: "turn_1", Result: &agent.Result{CallID: "c1", Name: "calculate", Content: "2"}},
		{Kind: agent.EventPause, ConversationID: conv, TurnID: "turn_1", Pause: &tool.Pause{Question: "Which unit?", Suggested: "metres"}},
		{Kind: agent.EventNextActions, ConversationID: conv, TurnID: "turn_1", Actions: []string{"Convert to feet"}},
		{Kind: agent.EventUsage, ConversationID: conv, TurnID: "turn_1", Usage: &llm.Usage{InputTokens: 10, OutputTokens: 2}, CostMicros: 5},
		{Kind: agent.EventDone, ConversationID: conv, TurnID: "turn_1", Stop: "paused"},
	}
}

// fakeTurn is a turn the fake began.
type fakeTurn struct {
	caller  httpapi.Caller
	conv    store.Conversation
	message string
	answers bool
	id      string
	last    int64
	fresh   bool
}

func (t fakeTurn) Conversation() store.Conversation { return t.conv }
func (t fakeTurn) New() bool                        { return t.fresh }
func (t fakeTurn) Answers() bool                    { return t.answers }
func (t fakeTurn) LastSeq() int64                   { return t.last }

// TurnID is the turn's id: the one Begin was given, else the one its
// script's events carry for the blocking and failing scripts, else
// turn_1, turn_2, … in the order the fixture began them.
func (t fakeTurn) TurnID() string { return t.id }

// Begin reads the conversation as the engine does: another user's is
// engine.ErrNoConversation, a missing one too unless start is given (then
// the turn is New), and the turn answers when the last turn is paused
// (store.PausedTurn).
func (f *fakeEngine) Begin(ctx context.Context, c httpapi.Caller, id, message, turnID, _ string, start *httpapi.NewConversation) (httpapi.PendingTurn, error) {
	conv, err := f.st.GetConversation(ctx, c.OrgID, id)
	fresh := false
	switch {
	case errors.Is(err, store.ErrNotFound) && start != nil:
		if err := fakeStart(ctx, f.st, c.OrgID, *start); err != nil {
			return nil, err
		}
		conv, err, fresh = store.Conversation{ID: id, OrgID: c.OrgID, UserID: c.UserID, Agent: start.Agent, Model: start.Model}, nil, true
	case errors.Is(err, store.ErrNotFound) || err == nil && conv.UserID != c.UserID:
		return nil, engine.ErrNoConversation
	case err == nil && start != nil && start.Agent != conv.Agent:
		return nil, &httpapi.BadRequest{Msg: "the conversation exists with another agent"}
	}
	if err != nil {
		return nil, err
	}
	ms, err := f.st.ListMessages(ctx, c.OrgID, id, 0)
	if err != nil {
		return nil, err
	}
	paused, err := store.PausedTurn(ctx, f.st, c.OrgID, ms)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	if f.begins == nil {
		f.begins = map[string]int{}
	}
	f.begins[message]++
	n := f.begins[message]
	f.mu.Unlock()
	if f.onBegin != nil {
		defer f.onBegin(message, n)
	}
	t := fakeTurn{caller: c, conv: conv, message: message, answers: paused != nil, id: turnID, fresh: fresh}
	if len(ms) > 0 {
		t.last = ms[len(ms)-1].Seq
	}
	switch {
	case paused != nil:
		t.id = paused.ID
	case t.id != "":
	case message == "block" || message == "block-bare" || message == "silent":
		t.id = "turn_b"
	case message == "late-boom":
		t.id = "turn_l"
	default:
		f.mu.Lock()
		f.begun++
		t.id = fmt.Sprintf("turn_%d", f.begun)
		f.mu.Unlock()
	}
	return t, nil
}

// fakeStart refuses, as the engine does, a conversation's start with an
// agent the organisation lacks or a model the agent does not offer.
func fakeStart(ctx context.Context, st httpapi.Repositories, orgID string, start httpapi.NewConversation) error {
	if _, err := st.GetAgent(ctx, orgID, start.Agent); err != nil {
		return &engine.InputError{Msg: "no agent named " + start.Agent}
	}
	if start.Model == "" {
		return nil
	}
	for _, m := range fakeModels(start.Agent) {
		if m.Ref == start.Model {
			return nil
		}
	}
	return &engine.InputError{Msg: "model " + start.Model + " is not one the agent offers"}
}

func (f *fakeEngine) Run(ctx context.Context, pt httpapi.PendingTurn, emit func(agent.Event)) error {
	t := pt.(fakeTurn)
	c, conv, message := t.caller, t.conv.ID, t.message
	f.mu.Lock()
	f.calls = append(f.calls, sendCall{Caller: c, ConversationID: conv, Message: message})
	f.mu.Unlock()
	switch message {
	case "block":
		emit(agent.Event{Kind: agent.EventText, ConversationID: conv, TurnID: "turn_b", Text: "thinking"})
		<-ctx.Done()
		f.blocked <- context.Cause(ctx)
		emit(agent.Event{Kind: agent.EventDone, ConversationID: conv, TurnID: "turn_b", Stop: agent.StopCancelled})
		return nil
	case "block-bare":
		emit(agent.Event{Kind: agent.EventText, ConversationID: conv, TurnID: "turn_b", Text: "thinking"})
		<-ctx.Done()
		f.blocked <- context.Cause(ctx)
		return ctx.Err()
	case "silent":
		<-ctx.Done()
		f.blocked <- context.Cause(ctx)
		return ctx.Err()
	case "bad":
		return &httpapi.BadRequest{Msg: "no model is connected"}
	case "over-budget":
		return &budget.ExceededError{Spent: 120, Limit: 100, Resets: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)}
	case "boom":
		return errors.New(secretDetail)
	case "late-boom":
		emit(agent.Event{Kind: agent.EventText, ConversationID: conv, TurnID: "turn_l", Text: "partial"})
		return errors.New(secretDetail)
	}
	for _, ev := range scriptedEvents(conv) {
		emit(ev)
	}
	return nil
}

func (f *fakeEngine) lastCall(t *testing.T) sendCall {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls) == 0 {
		t.Fatal("the engine was never called")
	}
	return f.calls[len(f.calls)-1]
}

func (f *fakeEngine) Inspect(ctx context.Context, c httpapi.Caller, conv, turnID, message string) (httpapi.Inspection, error) {
	if _, err := f.Begin(ctx, c, conv, message, "", "", nil); err != nil {
		return httpapi.Inspection{}, err
	}
	if turnID == "turn_missing" {
		return httpapi.Inspection{}, &httpapi.BadRequest{Msg: "no such turn in this conversation"}
	}
	return httpapi.Inspection{
		TurnID: turnID, Agent: "helper", Model: "fake:model", System: "You help.",
		Context:  "caller " + c.UserID + " in " + c.Timezone + ": " + message,
		Excluded: nil, Intent: nil, Warnings: nil,
	}, nil
}

// ValidateAgent parses {name, prompt, tools}; a prompt with "{{" warns,
// and so does each tool not named "calculate" or "web_search" (suggesting
// "web_search").
func (f *fakeEngine) ValidateAgent(_ context.Context, _ httpapi.Caller, def []byte) (httpapi.AgentValidation, error) {
	var a struct {
		Name   string   `yaml:"name"`
		Prompt string   `yaml:"prompt"`
		Tools  []string `yaml:"tools"`
	}
	if err := yaml.Unmarshal(def, &a); err != nil {
		return httpapi.AgentValidation{}, &httpapi.BadRequest{Msg: "agent: " + err.Error()}
	}
	if a.Name == "" {
		return httpapi.AgentValidation{}, &httpapi.BadRequest{Msg: "agent: name is required"}
	}
	v := httpapi.AgentValidation{Name: a.Name}
	if strings.Contains(a.Prompt, "{{") {
		v.Warnings = []string{"prompt: unknown macro"}
	}
	for _, e := range a.Tools {
		if e != "calculate" && e != "web_search" {
			v.Allowlist = append(v.Allowlist, registry.Warning{Entry: e, Message: strconv.Quote(e) + " is not a tool or family name", Suggestion: "web_search"})
		}
	}
	return v, nil
}

// fakeMCP registers servers in the store as internal/app would, without
// a network; the URL "http://unreachable" fails the connection test.
type fakeMCP struct {
	st  store.Store
	now func() time.Time
}

func (m *fakeMCP) Add(ctx context.Context, orgID, name, url, token, typ string) (store.MCPServer, error) {
	if url == "http://unreachable" {
		return store.MCPServer{}, &httpapi.BadRequest{Msg: "connection test failed: connection refused"}
	}
	s := store.MCPServer{
		ID: ids.Random{}.New("mcp_"), OrgID: orgID, Name: name, URL: url, Type: typ, Enabled: true,
		Tools: []string{"lookup"}, CreatedAt: m.now(), UpdatedAt: m.now(), DiscoveredAt: m.now(),
	}
	if token != "" {
		s.Token = "sealed:" + token
	}
	if err := m.st.CreateMCPServer(ctx, s, 0); err != nil {
		return store.MCPServer{}, err
	}
	return m.st.GetMCPServer(ctx, orgID, name)
}

func (m *fakeMCP) SetEnabled(ctx context.Context, orgID, name string, on bool) error {
	return m.st.SetMCPServerEnabled(ctx, orgID, name, on, m.now())
}

func (m *fakeMCP) Remove(ctx context.Context, orgID, name string) error {
	return m.st.DeleteMCPServer(ctx, orgID, name)
}

// who is a credential a request carries; nil is anonymous.
type who struct {
	token   string // bearer
	session string // cookie value
	csrf    string // sent as X-CSRF-Token when set
}

// fixture is a server over a real SQLite store with two organisations:
// org_a (alice admin, bob and carol members) and org_b (dave admin).
type fixture struct {
	t     *testing.T
	st    *sqlite.Store
	eng   *fakeEngine
	clock *clock
	srv   *httptest.Server
	logs  *syncBuffer
	ctx   context.Context

	alice, bob, carol, dave *who
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var start = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// newFixture builds the fixture; edit adjusts the Config first.
func newFixture(t *testing.T, edit func(*httpapi.Config)) *fixture {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f := &fixture{t: t, st: st, eng: &fakeEngine{st: st, blocked: make(chan error, 1), toolRunning: make(chan context.Context, 1)}, clock: &clock{t: start}, logs: &syncBuffer{}, ctx: ctx}
	cfg := httpapi.Config{
		Store: st, Engine: f.eng, MCP: &fakeMCP{st: st, now: f.clock.Now},
		Logger: slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Now:    f.clock.Now, Heartbeat: -1,
	}
	if edit != nil {
		edit(&cfg)
	}
	// The fake engine reads what the server reads (a test's wrapper).
	f.eng.st = cfg.Store
	f.srv = httptest.NewServer(httpapi.New(cfg))
	t.Cleanup(f.srv.Close)

	f.must(st.CreateOrg(ctx, store.Org{ID: "org_a", Name: "Acme", CreatedAt: start}))
	f.must(st.CreateOrg(ctx, store.Org{ID: "org_b", Name: "Bravo", CreatedAt: start}))
	f.alice = f.user("org_a", "alice", store.RoleAdmin, "Asia/Ho_Chi_Minh")
	f.bob = f.user("org_a", "bob", store.RoleMember, "Europe/Paris")
	f.carol = f.user("org_a", "carol", store.RoleMember, "")
	f.dave = f.user("org_b", "dave", store.RoleAdmin, "")
	for _, a := range []struct{ org, name string }{{"org_a", "helper"}, {"org_a", "only-a"}, {"org_b", "helper"}} {
		f.must(st.PutAgent(ctx, store.StoredAgent{OrgID: a.org, Name: a.name, Definition: []byte("name: " + a.name + "\n"), CreatedAt: start, UpdatedAt: start}))
	}
	return f
}

func (f *fixture) must(err error) {
	f.t.Helper()
	if err != nil {
		f.t.Fatal(err)
	}
}

// user creates a user with an API token.
func (f *fixture) user(org, id, role, tz string) *who {
	f.t.Helper()
	f.must(f.st.CreateUser(f.ctx, store.User{ID: id, OrgID: org, DisplayName: strings.ToUpper(id[:1]) + id[1:], Department: "R&D", Timezone: tz, Role: role, CreatedAt: start, UpdatedAt: start}))
	tok, err := (&accounts.Service{Store: f.st}).Issue(f.ctx, store.Credential{Kind: store.CredAPIToken, OrgID: org, UserID: id, Label: "test", CreatedAt: start})
	f.must(err)
	return &who{token: tok}
}

// conversation stores a conversation of user in org.
func (f *fixture) conversation(org, user, id string) {
	f.t.Helper()
	f.must(f.st.PutConversation(f.ctx, store.Conversation{ID: id, OrgID: org, UserID: user, Agent: "helper", CreatedAt: start, UpdatedAt: start}))
}

// pause stores a paused turn as the conversation's last.
func (f *fixture) pause(org, user, conv string) {
	f.t.Helper()
	f.must(f.st.PutTurn(f.ctx, store.Turn{ID: "turn_p", OrgID: org, UserID: user, ConversationID: conv, Agent: "helper", Model: "fake:model", Status: store.TurnPaused, Question: "Which unit?", Suggested: "metres", StartedAt: start}))
	_, err := f.st.AppendMessages(f.ctx, org, []store.Message{
		{ConversationID: conv, TurnID: "turn_p", Role: "user", Content: "convert 3", CreatedAt: start},
		{ConversationID: conv, TurnID: "turn_p", Role: "tool_call", ToolName: "ask_clarifying_question", ToolCallID: "c9", Content: `{"question":"Which unit?"}`, CreatedAt: start},
	})
	f.must(err)
}

// mcpServer stores an MCP server registration directly.
func (f *fixture) mcpServer(org, name string, tools []string, token string) {
	f.t.Helper()
	s := store.MCPServer{
		ID: "mcp_" + org + "_" + name, OrgID: org, Name: name, URL: "https://" + name + ".example/mcp",
		Token: token, Type: store.MCPGeneral, Enabled: true, CreatedAt: start, UpdatedAt: start,
	}
	f.must(f.st.CreateMCPServer(f.ctx, s, 0))
	if tools != nil {
		_, err := f.st.SetMCPServerTools(f.ctx, org, s.ID, tools, start)
		f.must(err)
	}
}

// response is a finished request.
type response struct {
	*http.Response
	body []byte
}

// json decodes the body into v, zeroed first (a reused variable keeps
// nothing of an earlier response).
func (r response) json(t *testing.T, v any) {
	t.Helper()
	reflect.ValueOf(v).Elem().SetZero()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decoding %s: %v", r.body, err)
	}
}

// request builds a request as w (nil: anonymous) with a JSON body (nil:
// none; string or []byte: sent as is) and extra headers "Name: value".
func (f *fixture) request(w *who, method, path string, body any, headers ...string) *http.Request {
	f.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	case []byte:
		r = bytes.NewReader(b)
	case io.Reader:
		r = b
	default:
		data, err := json.Marshal(b)
		f.must(err)
		r = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(f.ctx, method, f.srv.URL+path, r)
	f.must(err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if w != nil {
		if w.token != "" {
			req.Header.Set("Authorization", "Bearer "+w.token)
		}
		if w.session != "" {
			req.AddCookie(&http.Cookie{Name: "quiver_session", Value: w.session})
		}
		if w.csrf != "" {
			req.Header.Set("X-CSRF-Token", w.csrf)
		}
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	return req
}

// noRedirect is a client that returns redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func (f *fixture) send(req *http.Request) response {
	f.t.Helper()
	resp, err := noRedirect.Do(req)
	f.must(err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	f.must(err)
	return response{Response: resp, body: body}
}

// do sends a request and returns the whole response.
func (f *fixture) do(w *who, method, path string, body any, headers ...string) response {
	f.t.Helper()
	return f.send(f.request(w, method, path, body, headers...))
}

// ok asserts the status and decodes the body into v (when non-nil).
func (f *fixture) ok(r response, status int, v any) {
	f.t.Helper()
	if r.StatusCode != status {
		f.t.Fatalf("%s %s: status %d, want %d; body %s", r.Request.Method, r.Request.URL.Path, r.StatusCode, status, r.body)
	}
	if v != nil {
		r.json(f.t, v)
	}
}

// wantError asserts a failed response: the status, the JSON content type
// and exactly {"error": {"code": code, "message": non-empty}}.
func wantError(t *testing.T, r response, status int, code string) {
	t.Helper()
	where := r.Request.Method + " " + r.Request.URL.Path
	if r.StatusCode != status {
		t.Fatalf("%s: status %d, want %d; body %s", where, r.StatusCode, status, r.body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s: Content-Type %q, want application/json", where, ct)
	}
	var got map[string]map[string]any
	if err := json.Unmarshal(r.body, &got); err != nil || len(got) != 1 || len(got["error"]) != 2 {
		t.Fatalf("%s: body %s is not {\"error\": {\"code\", \"message\"}}", where, r.body)
	}
	if got["error"]["code"] != code {
		t.Errorf("%s: code %v, want %s (body %s)", where, got["error"]["code"], code, r.body)
	}
	if msg, _ := got["error"]["message"].(string); msg == "" {
		t.Errorf("%s: empty message", where)
	}
	for _, leak := range []string{"goroutine", ".go:", secretDetail} {
		if bytes.Contains(r.body, []byte(leak)) {
			t.Errorf("%s: body leaks %q: %s", where, leak, r.body)
		}
	}
}
