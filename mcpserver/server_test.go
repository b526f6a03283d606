package mcpserver_test

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
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/quiverhq/quiver/builtin/ask"
	"github.com/quiverhq/quiver/builtin/calc"
	"github.com/quiverhq/quiver/builtin/results"
	"github.com/quiverhq/quiver/dispatch"
	"github.com/quiverhq/quiver/ids"
	"github.com/quiverhq/quiver/mcpserver"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// memResults is an in-memory result store keyed as the real ones are.
type memResults struct {
	mu sync.Mutex
	m  map[string]store.Result
}

func (r *memResults) PutResult(_ context.Context, res store.Result, _ store.ResultQuota) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.m[res.Ref]; dup {
		return fmt.Errorf("duplicate ref %s", res.Ref)
	}
	r.m[res.Ref] = res
	return nil
}

func (r *memResults) GetResult(_ context.Context, org, conv, ref string) (store.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	res, ok := r.m[ref]
	if !ok || res.OrgID != org || res.ConversationID != conv {
		return store.Result{}, store.ErrNotFound
	}
	return res, nil
}

type bigIn struct {
	N int `json:"n" jsonschema:"how many characters"`
}

type empty struct{}

// fixture is a server over a small catalog, with what the tests inspect.
type fixture struct {
	srv     *mcpserver.Server
	ts      registry.Toolset
	d       *dispatch.Dispatcher
	turns   chan tool.Scope
	logs    *syncBuffer
	entered chan struct{}
	release chan struct{}
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

func newFixture(t testing.TB) *fixture { return newFixtureWith(t, nil) }

// facts are a served turn's facts: its organisation and caller.
func facts(orgID, userID string) turn.Facts {
	return turn.Facts{Place: turn.Place{OrgID: orgID}, Caller: turn.Caller{UserID: userID}}
}

// newFixtureWith is newFixture with change (when non-nil) applied to the
// server's Config before the server is made.
func newFixtureWith(t testing.TB, change func(*mcpserver.Config)) *fixture {
	f := &fixture{turns: make(chan tool.Scope, 1024), logs: &syncBuffer{}, entered: make(chan struct{}, 1), release: make(chan struct{})}
	rs := &memResults{m: map[string]store.Result{}}
	cat := registry.New()
	cat.Register(
		calc.Tool(), results.Tool(rs), ask.Tool(),
		tool.New(tool.Spec{Name: "big_text", Description: "Returns n characters."},
			func(_ context.Context, _ tool.Scope, in bigIn) (string, error) { return strings.Repeat("x", in.N), nil }),
		tool.New(tool.Spec{Name: "whoami", Description: "Returns the call's scope."},
			func(_ context.Context, s tool.Scope, _ empty) (string, error) {
				b, _ := json.Marshal(s)
				return string(b), nil
			}),
		tool.New(tool.Spec{Name: "broken", Description: "Fails on the server's side."},
			func(context.Context, tool.Scope, empty) (string, error) {
				return "", tool.Infra(errors.New("store at /var/lib/quiver: password=hunter2 rejected"))
			}),
		tool.New(tool.Spec{Name: "block", Description: "Waits to be released."},
			func(ctx context.Context, _ tool.Scope, _ empty) (string, error) {
				f.entered <- struct{}{}
				select {
				case <-f.release:
					return "released", nil
				case <-ctx.Done():
					return "", ctx.Err()
				}
			}),
		tool.New(tool.Spec{Name: "hidden", Description: "Not in the allowlist."},
			func(context.Context, tool.Scope, empty) (string, error) { return "leaked", nil }),
	)
	f.ts = cat.Select(turn.Facts{
		Model: turn.Model{Caps: turn.Capabilities{Tools: true}},
		Agent: turn.Agent{Allow: []string{"big_text", "whoami", "broken", "block"}},
	})
	f.d = dispatch.New(dispatch.Config{Results: rs, Logger: slog.New(slog.DiscardHandler), IDs: &ids.Sequence{}})
	cfg := mcpserver.Config{
		Toolset: f.ts, Dispatcher: f.d, Facts: facts("acme", "ana"), Version: "1.2.3",
		Logger: slog.New(slog.NewTextHandler(f.logs, nil)),
		IDs:    &ids.Sequence{},
		StartTurn: func(_ context.Context, s tool.Scope) error {
			f.turns <- s
			return nil
		},
	}
	if change != nil {
		change(&cfg)
	}
	f.srv = mcpserver.New(cfg)
	return f
}

var testClient = &mcp.Implementation{Name: "test-client", Version: "0"}

// stdioClient connects a client to f.srv.ServeStdio over in-memory pipes.
func (f *fixture) stdioClient(t *testing.T) *mcp.ClientSession {
	t.Helper()
	clientIn, serverOut := io.Pipe()
	serverIn, clientOut := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := f.srv.ServeStdio(context.Background(), serverIn, serverOut)
		serverOut.Close() // as a process's exit would
		done <- err
	}()
	cs, err := mcp.NewClient(testClient, nil).Connect(context.Background(),
		&mcp.IOTransport{Reader: clientIn, Writer: clientOut}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		if err := <-done; err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
	})
	return cs
}

// httpServer serves f.srv's handler at /mcp on a loopback test server.
func (f *fixture) httpServer(t testing.TB, cfg mcpserver.HTTPConfig) *httptest.Server {
	mux := http.NewServeMux()
	mux.Handle("/mcp", f.srv.Handler(cfg))
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts
}

// httpClient connects a new session to ts; token, when set, is sent as a
// bearer token.
func httpClient(t testing.TB, ts *httptest.Server, token string) *mcp.ClientSession {
	t.Helper()
	return connect(t, httpTransport(ts, token))
}

func httpTransport(ts *httptest.Server, token string) *mcp.StreamableClientTransport {
	hc := ts.Client()
	if token != "" {
		hc = &http.Client{Transport: bearer{token, ts.Client().Transport}}
	}
	return &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: hc, MaxRetries: -1}
}

func connect(t testing.TB, tr mcp.Transport) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(testClient, nil).Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

func callText(t *testing.T, cs *mcp.ClientSession, name string, args any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("call %s: %d content blocks, want 1", name, len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("call %s: content is %T, want text", name, res.Content[0])
	}
	return tc.Text, res.IsError
}

// TestToolsList: tools/list shows exactly the toolset's declarations, in
// order, over both transports.
func TestToolsList(t *testing.T) {
	f := newFixture(t)
	var want []*mcp.Tool
	for _, tl := range f.ts.Tools() {
		var schema map[string]any
		if err := json.Unmarshal(tl.Schema(), &schema); err != nil {
			t.Fatal(err)
		}
		want = append(want, &mcp.Tool{Name: tl.Name(), Description: tl.Spec().Description, InputSchema: schema})
	}
	sessions := map[string]*mcp.ClientSession{
		"stdio": f.stdioClient(t),
		"http":  httpClient(t, f.httpServer(t, mcpserver.HTTPConfig{}), ""),
	}
	for name, cs := range sessions {
		t.Run(name, func(t *testing.T) {
			res, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, res.Tools); diff != "" {
				t.Errorf("tools/list (-toolset +listed):\n%s", diff)
			}
			init := cs.InitializeResult()
			if init.ServerInfo.Name != "quiver" || init.ServerInfo.Version != "1.2.3" {
				t.Errorf("server info = %+v, want quiver 1.2.3", init.ServerInfo)
			}
			if init.Capabilities.Logging != nil {
				t.Error("logging capability advertised, but no tool logs")
			}
		})
	}
}

// TestCallsMatchDispatch: every kind of answer a model reads (a result, a
// refusal of a name outside the set, an argument error, a handler error)
// reaches an MCP client as the very text and error flag dispatch gives.
func TestCallsMatchDispatch(t *testing.T) {
	f := newFixture(t)
	cs := f.stdioClient(t)
	cases := []struct {
		name, tool, args string
		wantErr          bool
		want             string // a fragment of the text, to show the case tests what it says
	}{
		{"ok", "calculate", `{"expression":"6*7"}`, false, "42"},
		{"unknown tool", "rm_rf", `{}`, true, `Tool "rm_rf" is not available.`},
		{"catalog tool outside the set", "hidden", `{}`, true, `Tool "hidden" is not available.`},
		{"unknown field", "calculate", `{"expr":"1"}`, true, `invalid arguments for calculate`},
		{"wrong type", "calculate", `{"expression":7}`, true, `invalid arguments for calculate`},
		{"handler error", "calculate", `{"expression":"1/0"}`, true, ""},
		{"no arguments", "calculate", ``, true, `invalid arguments for calculate`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var args any
			if c.args != "" {
				args = json.RawMessage(c.args)
			}
			text, isErr := callText(t, cs, c.tool, args)
			direct, err := f.d.Call(context.Background(), dispatch.Turn{Toolset: f.ts}, dispatch.Call{Name: c.tool, Args: json.RawMessage(c.args)})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(direct.Content, text); diff != "" {
				t.Errorf("text (-dispatch +mcp):\n%s", diff)
			}
			if isErr != direct.IsError || isErr != c.wantErr {
				t.Errorf("isError = %v, dispatch %v, want %v", isErr, direct.IsError, c.wantErr)
			}
			if !strings.Contains(text, c.want) {
				t.Errorf("text %q does not contain %q", text, c.want)
			}
		})
	}
}

// TestBigResultStored: a result over the threshold is stored under the
// session's scope; the client reads the preview, the ref in _meta, and the
// rest through read_tool_result in the same session.
func TestBigResultStored(t *testing.T) {
	f := newFixture(t)
	cs := httpClient(t, f.httpServer(t, mcpserver.HTTPConfig{}), "")
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "big_text", Arguments: bigIn{N: 9000}})
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := res.Meta[mcpserver.MetaRef].(string)
	if ref == "" || res.IsError {
		t.Fatalf("meta = %v, isError = %v; want a ref", res.Meta, res.IsError)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if !strings.Contains(text, "stored as "+ref) || len(text) > 3000 {
		t.Errorf("preview (%d chars) does not name %s", len(text), ref)
	}
	page, isErr := callText(t, cs, "read_tool_result", map[string]any{"refs": []string{ref}, "offset": 8000})
	if isErr || !strings.Contains(page, "characters 8000–9000 of 9000") {
		t.Errorf("read_tool_result = %q (isError %v)", page, isErr)
	}
}

// TestSessionScope: each session is its own conversation under the
// configured organisation and user; one session cannot read another's
// stored results, and each session's turn is started once.
func TestSessionScope(t *testing.T) {
	f := newFixture(t)
	ts := f.httpServer(t, mcpserver.HTTPConfig{})
	a, b := httpClient(t, ts, ""), httpClient(t, ts, "")

	res, err := a.CallTool(context.Background(), &mcp.CallToolParams{Name: "big_text", Arguments: bigIn{N: 9000}})
	if err != nil {
		t.Fatal(err)
	}
	ref := res.Meta[mcpserver.MetaRef].(string)
	text, isErr := callText(t, b, "read_tool_result", map[string]any{"refs": []string{ref}})
	if want := "Error: " + ref + ": no such result in this conversation."; !isErr || text != want {
		t.Errorf("other session read = %q (isError %v), want %q", text, isErr, want)
	}

	whoA, _ := callText(t, a, "whoami", nil)
	whoB, _ := callText(t, b, "whoami", nil)
	want := []string{
		`{"OrgID":"acme","UserID":"ana","ConversationID":"mcp_1","TurnID":"turn_1"}`,
		`{"OrgID":"acme","UserID":"ana","ConversationID":"mcp_2","TurnID":"turn_2"}`,
	}
	if diff := cmp.Diff(want, []string{whoA, whoB}); diff != "" {
		t.Errorf("scopes (-want +got):\n%s", diff)
	}
	close(f.turns)
	var started []string
	for s := range f.turns {
		started = append(started, s.ConversationID)
	}
	if diff := cmp.Diff([]string{"mcp_1", "mcp_2"}, started); diff != "" {
		t.Errorf("turns started (-want +got):\n%s", diff)
	}
}

// TestSessionIDs: by default a session's conversation and turn are random
// "mcp_" and "turn_" ids; NewConversation replaces only the conversation.
func TestSessionIDs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*mcpserver.Config)
		conv   string // pattern
		turn   string
	}{
		{"default", func(c *mcpserver.Config) { c.IDs = nil }, `^mcp_[0-9a-f]{20}$`, `^turn_[0-9a-f]{20}$`},
		{"given conversation", func(c *mcpserver.Config) { c.NewConversation = func() string { return "c-given" } }, `^c-given$`, `^turn_1$`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixtureWith(t, tc.change)
			text, _ := callText(t, f.stdioClient(t), "whoami", nil)
			var s tool.Scope
			if err := json.Unmarshal([]byte(text), &s); err != nil {
				t.Fatal(err)
			}
			if !regexp.MustCompile(tc.conv).MatchString(s.ConversationID) || !regexp.MustCompile(tc.turn).MatchString(s.TurnID) {
				t.Errorf("scope %+v, want conversation %s and turn %s", s, tc.conv, tc.turn)
			}
		})
	}
}

// TestInfraErrorHidden: a failure on the server's side is a JSON-RPC
// internal error that says nothing more; the detail is logged.
func TestInfraErrorHidden(t *testing.T) {
	f := newFixture(t)
	cs := f.stdioClient(t)
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "broken"})
	if err == nil || !strings.Contains(err.Error(), "internal error") || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error = %v, want a bare internal error", err)
	}
	if !strings.Contains(f.logs.String(), "hunter2") {
		t.Errorf("log lacks the detail: %s", f.logs.String())
	}
}

// TestEffectInMeta: a result's effect (here a clarifying question) reaches
// the client in _meta beside the text the model reads.
func TestEffectInMeta(t *testing.T) {
	f := newFixture(t)
	cs := f.stdioClient(t)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask_clarifying_question",
		Arguments: map[string]any{"question": "Which year?"}})
	if err != nil {
		t.Fatal(err)
	}
	var got tool.Effect
	b, _ := json.Marshal(res.Meta[mcpserver.MetaEffect])
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(tool.Effect{Pause: &tool.Pause{Question: "Which year?"}}, got); diff != "" {
		t.Errorf("effect (-want +got):\n%s", diff)
	}
}

// TestNewRequiresFactsCaller: a server without its facts' organisation or
// user is a start-up mistake, and New panics naming the field.
func TestNewRequiresFactsCaller(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		name  string
		facts turn.Facts
	}{
		{"no organisation", facts("", "ana")},
		{"no user", facts("acme", "")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "Facts.Place.OrgID and Facts.Caller.UserID are required") {
					t.Errorf("recovered %v, want the required-fields panic", r)
				}
			}()
			mcpserver.New(mcpserver.Config{Toolset: f.ts, Dispatcher: f.d, Facts: tc.facts})
		})
	}
}

// TestStartTurnFails: when the turn cannot be recorded the call fails as an
// internal error, and the next call tries again.
func TestStartTurnFails(t *testing.T) {
	f := newFixture(t)
	var fail atomic.Bool
	fail.Store(true)
	srv := mcpserver.New(mcpserver.Config{Toolset: f.ts, Dispatcher: f.d, Facts: facts("o", "u"),
		StartTurn: func(context.Context, tool.Scope) error {
			if fail.Load() {
				return errors.New("disk full")
			}
			return nil
		}})
	f.srv = srv
	cs := f.stdioClient(t)
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "whoami"}); err == nil || strings.Contains(err.Error(), "disk") {
		t.Errorf("first call error = %v, want a bare internal error", err)
	}
	fail.Store(false)
	if text, isErr := callText(t, cs, "whoami", nil); isErr || !strings.Contains(text, `"OrgID":"o"`) {
		t.Errorf("second call = %q (isError %v)", text, isErr)
	}
}

// TestShutdownWaitsForCalls: Shutdown lets a running call finish and answer,
// then ends the session. (Over HTTP the client opens no standalone stream:
// the SDK client fails its pending calls when that stream ends, which races
// with reading the answer on the call's own stream.)
func TestShutdownWaitsForCalls(t *testing.T) {
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			f := newFixture(t)
			var cs *mcp.ClientSession
			if transport == "stdio" {
				cs = f.stdioClient(t)
			} else {
				tr := httpTransport(f.httpServer(t, mcpserver.HTTPConfig{}), "")
				tr.DisableStandaloneSSE = true
				cs = connect(t, tr)
			}
			type answer struct {
				text string
				err  error
			}
			got := make(chan answer, 1)
			go func() {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "block"})
				if err != nil {
					got <- answer{err: err}
					return
				}
				got <- answer{text: res.Content[0].(*mcp.TextContent).Text}
			}()
			<-f.entered
			shut := make(chan error, 1)
			go func() { shut <- f.srv.Shutdown(context.Background()) }()
			close(f.release)
			if a := <-got; a.err != nil || a.text != "released" {
				t.Errorf("running call = %q, %v; want released", a.text, a.err)
			}
			if err := <-shut; err != nil {
				t.Errorf("Shutdown = %v", err)
			}
			if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "whoami"}); err == nil {
				t.Error("a call after Shutdown succeeded")
			}
		})
	}
}

// TestShutdownCancelsCalls: when Shutdown's grace is over, running calls
// are cancelled and answered with an internal error.
func TestShutdownCancelsCalls(t *testing.T) {
	f := newFixture(t)
	cs := f.stdioClient(t)
	got := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "block"})
		got <- err
	}()
	<-f.entered
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := f.srv.Shutdown(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Shutdown = %v, want context.Canceled", err)
	}
	if err := <-got; err == nil {
		t.Error("cancelled call answered without error")
	}
}
