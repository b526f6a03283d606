package webui_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/accounts"
	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/attachment"
	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/internal/clock"
	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/knowledge"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/settings"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/webui"
)

// TestPagesAgainstHTTPAPI runs the pages against package httpapi itself
// (SQLite store, sessions, CSRF, huma's validation, the real event
// stream), with a scripted Engine instead of a model: it catches any
// difference between the shapes the pages expect and the ones the API
// sends.
func TestPagesAgainstHTTPAPI(t *testing.T) {
	ctx := context.Background()
	st, _, b := realAPI(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}

	// Chat: a new chat stores nothing until its first message, which
	// creates the conversation; a streamed turn, the suggested answer.
	b.Do("new chat", chromedp.WaitVisible(chromedp.CSS(`.new-conv #message`)))
	if cs, err := st.ListConversations(ctx, "org_a", "ana", 0); err != nil || len(cs) != 0 {
		t.Fatalf("before the first message: %d conversations stored (%v), want none", len(cs), err)
	}
	b.send(msgScripted)
	b.WaitText(`.tool-card .badge`, "done")
	b.Do("paused", chromedp.WaitVisible(chromedp.CSS(`button.suggested`)), chromedp.WaitNotVisible(chromedp.CSS(`#cancel`)))
	b.Do("answer", chromedp.Click(chromedp.CSS(`button.suggested`)))
	b.WaitText(`.transcript`, "Using EUR: 4.00.")
	b.Shot("chat")
	cs, err := st.ListConversations(ctx, "org_a", "ana", 0)
	must(err)
	if len(cs) != 1 || !strings.HasSuffix(eval[string](b, `location.hash`), "/"+cs[0].ID) {
		t.Fatalf("after the first message: conversations %+v, page at %s", cs, eval[string](b, `location.hash`))
	}
	b.WaitText(`.convs li[data-id="`+cs[0].ID+`"]`, msgScripted) // listed under its title
	b.Do("reload the conversation", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`.tool-card`)))
	b.WaitText(`.transcript`, "Using EUR: 4.00.") // the stored transcript
	b.WaitText(`.tool-card .tool-result pre`, "4")

	// Inspector, tools, agents.
	b.open("#/inspect/"+eval[string](b, `location.hash.split('/')[2]`)+"?message=hi", `table.excluded`)
	b.WaitText(`table.excluded`, "memory: switch off")
	b.open("#/tools", `table.catalog`)
	b.WaitText(`.gauges`, "2,400 of 3,000 characters")
	b.open("#/agents/assistant", `#definition`)
	b.Do("save an invalid agent", chromedp.SetValue(chromedp.CSS(`#definition`), "name: assistant\ncolour: red\n"),
		chromedp.Click(chromedp.CSS(`.agent-form button[type=submit]`)))
	b.WaitText(`.form-status .alert`, "colour")
	b.Do("save a valid agent", chromedp.SetValue(chromedp.CSS(`#definition`), "name: assistant\nprompt: Hi {user_nam}\n"),
		chromedp.Click(chromedp.CSS(`.agent-form button[type=submit]`)))
	b.WaitText(`.form-status`, "unknown macro {user_nam}")

	// MCP servers: add, disable, delete.
	b.open("#/mcp", `#mcp-add`)
	b.Do("add", chromedp.SetValue(chromedp.CSS(`#mcp-name`), "tracker"),
		chromedp.SetValue(chromedp.CSS(`#mcp-url`), "https://tracker.example/mcp"),
		chromedp.SetValue(chromedp.CSS(`#mcp-token`), "s3cret"),
		chromedp.Click(chromedp.CSS(`#mcp-add button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-server="tracker"]`)))
	b.WaitText(`tr[data-server="tracker"] [data-label="Tools"]`, "lookup")
	b.WaitText(`tr[data-server="tracker"] [data-label="Token"]`, "Set")
	b.Do("disable", chromedp.Click(chromedp.CSS(`tr[data-server="tracker"] td.actions button:first-child`)))
	b.WaitText(`tr[data-server="tracker"] [data-label="Status"]`, "Disabled")
	b.Do("delete", chromedp.Click(chromedp.CSS(`tr[data-server="tracker"] button.danger`)),
		chromedp.Click(chromedp.CSS(`dialog.confirm button[value="yes"]`)),
		chromedp.WaitNotPresent(chromedp.CSS(`tr[data-server="tracker"]`)))

	// Sign out: the one session ends.
	sessions, err := st.ListCredentials(ctx, "org_a", "ana", store.CredSession)
	must(err)
	if len(sessions) != 1 {
		t.Fatalf("%d sessions after signing in, want 1", len(sessions))
	}
	b.Do("sign out", chromedp.Click(chromedp.CSS(`#logout`)))
	b.WaitText(`main h1`, "Sign in to Quiver")

	// Every request succeeded except the invalid agent: the API accepted
	// every body, and the session's CSRF token (the API refuses a wrong one).
	var failed []string
	for _, r := range b.rec.recorded() {
		if r.Status >= 400 {
			failed = append(failed, r.Method+" "+r.Path)
		}
	}
	if d := cmp.Diff([]string{"PUT /api/agents/assistant"}, failed); d != "" {
		t.Errorf("failed requests (-want +got):\n%s", d)
	}
	if left, err := st.ListCredentials(ctx, "org_a", "ana", store.CredSession); err != nil || len(left) != 0 {
		t.Errorf("after signing out: %d sessions, %v", len(left), err)
	}
	b.checkHeaders(sessions[0].CSRF)
}

// realAPI serves httpapi over a fresh SQLite store (the organisation
// Acme, its admin Ana, the agent assistant) with a scriptedEngine, and
// signs a browser in as Ana.
func realAPI(t *testing.T) (store.Store, *scriptedEngine, *browser) {
	t.Helper()
	return realAPIWith(t, nil)
}

// realAPIWith is realAPI serving, when wrap is set, the Engine wrap makes
// of the store and the scripted engine instead.
func realAPIWith(t *testing.T, wrap func(store.Store, *scriptedEngine) httpapi.Engine) (store.Store, *scriptedEngine, *browser) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	now := clock.Now().UTC() // the server checks the link on this clock
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(st.CreateOrg(ctx, store.Org{ID: "org_a", Name: "Acme", CreatedAt: now}))
	must(st.CreateUser(ctx, store.User{ID: "ana", OrgID: "org_a", DisplayName: "Ana Lima", Department: "Finance",
		Role: store.RoleAdmin, CreatedAt: now, UpdatedAt: now}))
	must(st.PutAgent(ctx, store.StoredAgent{OrgID: "org_a", Name: "assistant", CreatedAt: now, UpdatedAt: now,
		Definition: []byte("name: assistant\nmodel: openai:gpt-4.1-mini\nprompt: |\n  You help.\ntools: []\n")}))
	link, err := (&accounts.Service{Store: st}).Issue(ctx, store.Credential{Kind: store.CredLoginLink, OrgID: "org_a", UserID: "ana",
		CreatedAt: now, ExpiresAt: now.Add(24 * time.Hour)})
	must(err)
	eng := &scriptedEngine{st: st, keys: map[string]string{}}
	var served httpapi.Engine = eng
	if wrap != nil {
		served = wrap(st, eng)
	}
	emb := embed.Fixed{E: embed.Local{}}
	h := httpapi.New(httpapi.Config{Store: st, Engine: served, MCP: &storeMCP{st: st}, UI: webui.Handler(), Heartbeat: -1,
		Embeddings: emb, Attachments: attachment.New(attachment.Config{Store: st, Embed: emb}),
		Knowledge: storeKnowledge{Index: &knowledge.Index{Store: st, Embedders: emb}, Knowledge: st}, Skills: st, Tasks: st})
	b := newBrowser(t, h)
	b.Do("open the login link", chromedp.Navigate(b.srv.URL+"/login?token="+link), chromedp.WaitVisible(chromedp.CSS(`#sign-in`)))
	b.WaitText(`#account`, "Ana Lima")
	b.WaitText(`#organisation`, "Acme")
	// The page changed nothing: the link is unused and no session exists.
	hash := accounts.HashSecret(link)
	if _, err := st.LookupCredential(ctx, store.CredLoginLink, hash, time.Now()); err != nil {
		t.Fatalf("the sign-in page used the link: %v", err)
	}
	if s, err := st.ListCredentials(ctx, "org_a", "ana", store.CredSession); err != nil || len(s) != 0 {
		t.Fatalf("the sign-in page made %d sessions (%v)", len(s), err)
	}
	// The button arms itself (its script ran under the page's policy).
	b.Do("sign in", chromedp.WaitVisible(chromedp.CSS(`#sign-in[data-armed]`)), chromedp.Click(chromedp.CSS(`#sign-in`)), chromedp.WaitVisible(chromedp.CSS(`#nav`)))
	if _, err := st.LookupCredential(ctx, store.CredLoginLink, hash, time.Now()); err == nil {
		t.Fatal("the link still works after signing in")
	}
	return st, eng, b
}

// scriptedEngine answers msgScripted with the stub's turn (a tool call, a
// pause stored as a paused turn) and the answer with one line.
type scriptedEngine struct {
	st store.Store
	mu sync.Mutex

	// The organisation's settings: what was saved, the version, and the
	// key values (write-only).
	saved   settings.Update
	version int64
	keys    map[string]string
	// noModel makes ModelStatus answer not connected.
	noModel bool
}

// scriptedTurn is a turn the scripted engine began.
type scriptedTurn struct {
	c       httpapi.Caller
	conv    store.Conversation
	message string
	answers bool
	fresh   bool
}

func (t scriptedTurn) Conversation() store.Conversation { return t.conv }
func (t scriptedTurn) New() bool                        { return t.fresh }
func (t scriptedTurn) Answers() bool                    { return t.answers }
func (t scriptedTurn) TurnID() string                   { return "turn_1" }
func (t scriptedTurn) LastSeq() int64                   { return 0 }

// Begin reads the conversation as the engine does: another user's is
// engine.ErrNoConversation, a missing one too unless start says how to
// start it; the turn answers a paused last turn.
func (e *scriptedEngine) Begin(ctx context.Context, c httpapi.Caller, id, message, _, _ string, start *httpapi.NewConversation) (httpapi.PendingTurn, error) {
	conv, err := e.st.GetConversation(ctx, c.OrgID, id)
	if errors.Is(err, store.ErrNotFound) && start != nil {
		fresh := store.Conversation{ID: id, OrgID: c.OrgID, UserID: c.UserID, Agent: start.Agent, Model: start.Model}
		return scriptedTurn{c: c, conv: fresh, message: message, fresh: true}, nil
	}
	if errors.Is(err, store.ErrNotFound) || err == nil && conv.UserID != c.UserID {
		return nil, engine.ErrNoConversation
	}
	if err != nil {
		return nil, err
	}
	ms, err := e.st.ListMessages(ctx, c.OrgID, id, 0)
	if err != nil {
		return nil, err
	}
	paused, err := store.PausedTurn(ctx, e.st, c.OrgID, ms)
	if err != nil {
		return nil, err
	}
	return scriptedTurn{c: c, conv: conv, message: message, answers: paused != nil}, nil
}

func (e *scriptedEngine) Run(ctx context.Context, pt httpapi.PendingTurn, emit func(agent.Event)) error {
	t := pt.(scriptedTurn)
	c, conv, message := t.c, t.conv.ID, t.message
	e.mu.Lock()
	defer e.mu.Unlock()
	at := clock.Now()
	ev := func(k agent.EventKind) agent.Event {
		return agent.Event{Kind: k, ConversationID: conv, TurnID: "turn_1"}
	}
	turn := store.Turn{ID: "turn_1", OrgID: c.OrgID, UserID: c.UserID, ConversationID: conv, Agent: "assistant",
		Model: "fake:model", Timezone: c.Timezone, Status: store.TurnDone, StartedAt: at, EndedAt: at}
	msgs := []store.Message{{ConversationID: conv, TurnID: "turn_1", Role: "user", Content: message, CreatedAt: at}}
	if message != msgScripted {
		text := "Using " + message + ": 4.00."
		emit(agent.Event{Kind: agent.EventText, ConversationID: conv, TurnID: "turn_1", Text: text})
		msgs = append(msgs, store.Message{ConversationID: conv, TurnID: "turn_1", Role: "assistant", Content: text, CreatedAt: at})
		if err := e.record(ctx, c.OrgID, turn, msgs); err != nil {
			return err
		}
		d := ev(agent.EventDone)
		d.Stop = agent.StopAnswer
		emit(d)
		return nil
	}
	for _, x := range []agent.Event{
		{Kind: agent.EventText, Text: "Let me work that out."},
		{Kind: agent.EventToolCall, Call: &llm.ToolCall{ID: "call_1", Name: "calculate", Args: json.RawMessage(`{"expression":"2+2"}`)}},
		{Kind: agent.EventToolResult, Result: &agent.Result{CallID: "call_1", Name: "calculate", Content: "4"}},
		{Kind: agent.EventUsage, Usage: &llm.Usage{InputTokens: 100, OutputTokens: 7}, CostMicros: 12},
		{Kind: agent.EventNextActions, Actions: []string{"Show the steps"}},
		{Kind: agent.EventPause, Pause: &tool.Pause{Question: "Which currency should I use?", Suggested: "EUR"}},
		{Kind: agent.EventDone, Stop: agent.StopPause},
	} {
		x.ConversationID, x.TurnID = conv, "turn_1"
		emit(x)
	}
	turn.Status, turn.Question, turn.Suggested, turn.EndedAt = store.TurnPaused, "Which currency should I use?", "EUR", time.Time{}
	msgs = append(msgs,
		store.Message{ConversationID: conv, TurnID: "turn_1", Role: "assistant", Content: "Let me work that out.", CreatedAt: at},
		store.Message{ConversationID: conv, TurnID: "turn_1", Role: "tool_call", ToolName: "calculate", ToolCallID: "call_1", Content: `{"expression":"2+2"}`, CreatedAt: at},
		store.Message{ConversationID: conv, TurnID: "turn_1", Role: "tool", ToolName: "calculate", ToolCallID: "call_1", Content: "4", CreatedAt: at})
	return e.record(ctx, c.OrgID, turn, msgs)
}

func (e *scriptedEngine) record(ctx context.Context, org string, t store.Turn, msgs []store.Message) error {
	if err := e.st.PutTurn(ctx, t); err != nil {
		return err
	}
	_, err := e.st.AppendMessages(ctx, org, msgs)
	return err
}

func (e *scriptedEngine) Inspect(_ context.Context, c httpapi.Caller, conv, turnID, message string) (httpapi.Inspection, error) {
	return httpapi.Inspection{
		TurnID: turnID, Agent: "assistant", Model: "fake:model", System: "You help.",
		Context:  "Caller: " + c.DisplayName + "; message: " + message,
		Tools:    []tool.Declaration{{Name: "calculate", Description: "Evaluate arithmetic.", Parameters: json.RawMessage(`{"type":"object"}`)}},
		Excluded: []registry.Exclusion{{Name: "memory_save", Reason: "memory: switch off"}},
		Intent:   []httpapi.IntentMatch{}, Warnings: []string{},
	}, nil
}

// InspectDraft answers as Inspect does, for the agent and without a turn.
func (e *scriptedEngine) InspectDraft(ctx context.Context, c httpapi.Caller, agentName, message string) (httpapi.Inspection, error) {
	ins, err := e.Inspect(ctx, c, "", "", message)
	ins.Agent = agentName
	return ins, err
}

func (e *scriptedEngine) ValidateAgent(_ context.Context, _ httpapi.Caller, def []byte) (httpapi.AgentValidation, error) {
	a, err := config.ParseAgent(def)
	if err != nil {
		return httpapi.AgentValidation{}, &httpapi.BadRequest{Msg: err.Error()}
	}
	v := httpapi.AgentValidation{Name: a.Name}
	if strings.Contains(a.Prompt, "{user_nam}") {
		v.Warnings = []string{"prompt: unknown macro {user_nam}"}
	}
	return v, nil
}

func (e *scriptedEngine) Catalog(context.Context, httpapi.Caller) (httpapi.Catalog, error) {
	return httpapi.Catalog{
		Tools:           []httpapi.ToolView{{Name: "calculate", Family: "calc", Description: "Evaluate arithmetic.", Access: "read", AlwaysOn: true, Chars: 2400}},
		AlwaysPaidChars: 2400, AlwaysPaidCeiling: 3000, WidestChars: 2400, WidestCeiling: 12000,
	}, nil
}

// settingsKeys are the keys the scripted settings know.
var settingsKeys = []settings.KeyState{{Name: "openai_api_key", Label: "OpenAI API key"}, {Name: "brave_api_key", Label: "Brave Search API key"}}

func (e *scriptedEngine) Settings(context.Context, httpapi.Caller) (settings.View, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.settingsView(), nil
}

// settingsView shows the settings; e.mu is held.
func (e *scriptedEngine) settingsView() settings.View {
	mode := e.saved.NetworkMode
	if mode == "" {
		mode = "public"
	}
	v := settings.View{Version: e.version, Switches: e.saved.Switches, SwitchNames: []string{"tool_use", "web_search"},
		NetworkMode: mode, NetworkModes: []string{"public"}, Web: e.saved.Web}
	for _, k := range settingsKeys {
		if e.keys[k.Name] != "" {
			k.Set, k.Source = true, "settings"
		}
		v.Keys = append(v.Keys, k)
	}
	return v
}

func (e *scriptedEngine) UpdateSettings(_ context.Context, _ httpapi.Caller, u settings.Update) (settings.View, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if u.Version != e.version {
		return settings.View{}, settings.ErrConflict
	}
	for _, n := range u.ClearKeys {
		delete(e.keys, n)
	}
	for n, v := range u.SetKeys {
		e.keys[n] = v
	}
	u.SetKeys, u.ClearKeys = nil, nil
	e.saved, e.version = u, e.version+1
	return e.settingsView(), nil
}

// otherSave stands for another admin saving the settings.
func (e *scriptedEngine) otherSave() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.version++
}

// TestConnection answers as a server with no models would.
func (e *scriptedEngine) TestConnection(_ context.Context, _ httpapi.Caller, t settings.ConnectionTest) (settings.ConnectionReport, error) {
	return settings.ConnectionReport{URL: t.BaseURL + "/models", Models: []string{}, KeyUsed: settings.KeyNone}, nil
}

func (e *scriptedEngine) ConsoleTools(context.Context, httpapi.Caller, string) ([]httpapi.ConsoleTool, error) {
	return []httpapi.ConsoleTool{{Name: "calculate", Family: "calc", Access: "read", Description: "Evaluate arithmetic.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"expression":{"type":"string"}},"required":["expression"]}`)}}, nil
}

// RunTool answers calculate's "2+2" with 4 and any other expression with
// an error result.
func (e *scriptedEngine) RunTool(_ context.Context, _ httpapi.Caller, _, tool string, args json.RawMessage) (httpapi.ToolRun, error) {
	if tool != "calculate" {
		return httpapi.ToolRun{}, &httpapi.BadRequest{Msg: "no tool " + tool}
	}
	var in struct{ Expression string }
	_ = json.Unmarshal(args, &in)
	if in.Expression != "2+2" {
		return httpapi.ToolRun{Tool: tool, Result: "calculate: cannot parse " + in.Expression, IsError: true, DurationMS: 1}, nil
	}
	return httpapi.ToolRun{Tool: tool, Result: "4", DurationMS: 2}, nil
}

// ModelChoices offers the agent's own model alone.
func (e *scriptedEngine) ModelChoices(context.Context, httpapi.Caller, string) ([]engine.ModelChoice, error) {
	return []engine.ModelChoice{{Ref: "openai:gpt-4.1-mini", Default: true, Connected: true}}, nil
}

// CheckModel takes the agent's own model alone.
func (e *scriptedEngine) CheckModel(_ context.Context, _ httpapi.Caller, _, ref string) error {
	if ref != "openai:gpt-4.1-mini" {
		return &engine.InputError{Msg: "not offered"}
	}
	return nil
}

func (e *scriptedEngine) ModelStatus(context.Context, httpapi.Caller, string) (httpapi.ModelStatus, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.noModel {
		return httpapi.ModelStatus{Model: "openai:gpt-4.1-mini", Help: "Set the OpenAI API key in Settings."}, nil
	}
	return httpapi.ModelStatus{Model: "openai:gpt-4.1-mini", Connected: true}, nil
}

// storeKnowledge is httpapi.Knowledge over the store, as internal/app
// serves it: the index adds, the store lists and deletes.
type storeKnowledge struct {
	*knowledge.Index
	store.Knowledge
}

// storeMCP registers servers straight into the store, discovering one
// tool, as internal/app would after a connection test.
type storeMCP struct{ st store.Store }

func (m *storeMCP) Add(ctx context.Context, orgID, name, url, token, typ string) (store.MCPServer, error) {
	now := clock.Now()
	s := store.MCPServer{ID: "mcp_" + name, OrgID: orgID, Name: name, URL: url, Type: typ, Enabled: true,
		Tools: []string{"lookup"}, CreatedAt: now, UpdatedAt: now, DiscoveredAt: now}
	if token != "" {
		s.Token = "sealed"
	}
	if err := m.st.CreateMCPServer(ctx, s, 0); err != nil {
		return store.MCPServer{}, err
	}
	return m.st.GetMCPServer(ctx, orgID, name)
}

func (m *storeMCP) SetEnabled(ctx context.Context, orgID, name string, on bool) error {
	return m.st.SetMCPServerEnabled(ctx, orgID, name, on, clock.Now())
}

func (m *storeMCP) Remove(ctx context.Context, orgID, name string) error {
	return m.st.DeleteMCPServer(ctx, orgID, name)
}
