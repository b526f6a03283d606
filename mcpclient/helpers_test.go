package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quiverhq/quiver/ids"
	"github.com/quiverhq/quiver/netguard"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/secret"
	"github.com/quiverhq/quiver/store/sqlite"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// t0 is the injected clock's start.
var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

const org = "org1"

// manualClock is an injected clock tests move by hand.
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *manualClock { return &manualClock{now: t0} }

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func openStore(t testing.TB) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func newKeyring(t testing.TB) *secret.Keyring {
	t.Helper()
	kr, err := secret.New(secret.Key{ID: "k1", Secret: bytes.Repeat([]byte{7}, secret.KeySize)})
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

// testConfig is what a test may change before its env is built.
type testConfig struct {
	Pool          PoolConfig
	Registrations RegistrationsConfig
	// Mode is the network mode the organisations' toolsets and
	// registrations are given (e.add, e.overlay, e.regs.Add with e.mode);
	// "" means the deployment's, Pool.Network.Mode.
	Mode netguard.Mode
}

// env is one test's world: a real SQLite store, a keyring, an injected
// clock, a Pool in self-hosted mode (so loopback servers are reachable)
// and Registrations over both, unless the test's cfg says otherwise.
type env struct {
	t     testing.TB
	st    *sqlite.Store
	clock *manualClock
	pool  *Pool
	regs  *Registrations
	cfg   testConfig
	// mode is the network mode the env's turns and registrations are
	// given.
	mode netguard.Mode
}

func newEnv(t testing.TB, mod func(*testConfig)) *env {
	t.Helper()
	e := &env{t: t, st: openStore(t), clock: newClock()}
	e.cfg = testConfig{
		Pool: PoolConfig{
			Network: netguard.Config{Mode: netguard.SelfHosted},
			Version: "test",
			Now:     e.clock.Now,
		},
		Registrations: RegistrationsConfig{
			Store:   e.st,
			Keyring: newKeyring(t),
			Now:     e.clock.Now,
			IDs:     &ids.Sequence{},
		},
	}
	if mod != nil {
		mod(&e.cfg)
	}
	e.pool = NewPool(e.cfg.Pool)
	e.cfg.Registrations.Pool = e.pool
	e.regs = NewRegistrations(e.cfg.Registrations)
	e.mode = e.cfg.Mode
	if e.mode == "" {
		e.mode = normalMode(e.cfg.Pool.Network.Mode)
	}
	t.Cleanup(e.close)
	return e
}

// close closes the pool and waits for the background snapshot writes.
func (e *env) close() {
	e.pool.Close()
	e.regs.Close()
}

// servers is what the env's toolsets call through.
func (e *env) servers() servers { return servers{regs: e.regs, pool: e.pool} }

// add registers a server under e.mode and fails the test on a refusal.
func (e *env) add(r Registration) {
	e.t.Helper()
	if _, err := e.regs.Add(context.Background(), org, e.mode, r); err != nil {
		e.t.Fatalf("Add %s: %v", r.Name, err)
	}
}

// overlay builds org's toolset under e.mode against base.
func (e *env) overlay(base *registry.Catalog) Toolset {
	e.t.Helper()
	tr, err := NewToolset(context.Background(), e.regs, e.pool, org, e.mode, base)
	if err != nil {
		e.t.Fatalf("NewToolset: %v", err)
	}
	return tr
}

// seen is one HTTP request a peer received.
type seen struct {
	Method string
	// RPC is the JSON-RPC method of a POST ("initialize", "tools/call"),
	// "" for other requests or a response.
	RPC  string
	Auth string
}

// peer is a real go-sdk MCP server on a loopback httptest server, with a
// log of every request it received.
type peer struct {
	srv *mcp.Server
	ts  *httptest.Server
	URL string

	mu   sync.Mutex
	reqs []seen
	// intercept, when set, may answer a request itself (returning true)
	// before the MCP handler sees it.
	intercept func(w http.ResponseWriter, r *http.Request, rpc rpcPeek) bool
}

// rpcPeek is the part of a JSON-RPC request body a test looks at.
type rpcPeek struct {
	Method string `json:"method"`
	Params struct {
		Name string `json:"name"`
	} `json:"params"`
}

type peerOpts struct {
	sse bool // serve the 2024-11-05 SSE transport instead of Streamable HTTP
	// jsonResponse answers Streamable HTTP requests with application/json
	// bodies instead of event streams.
	jsonResponse bool
	// versions restricts the protocol versions the server negotiates.
	versions []string
	// middleware wraps the server's outgoing messages.
	sending mcp.Middleware
	// receiving wraps the server's incoming requests.
	receiving mcp.Middleware
}

// startPeer starts a go-sdk server named name; add tools with addTool or
// mcp.AddTool on p.srv before or after.
func startPeer(t testing.TB, name string, o peerOpts) *peer {
	t.Helper()
	p := &peer{srv: mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, &mcp.ServerOptions{SupportedProtocolVersions: o.versions})}
	if o.sending != nil {
		p.srv.AddSendingMiddleware(o.sending)
	}
	if o.receiving != nil {
		p.srv.AddReceivingMiddleware(o.receiving)
	}
	var h http.Handler
	if o.sse {
		h = mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return p.srv }, nil)
	} else {
		h = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return p.srv }, &mcp.StreamableHTTPOptions{JSONResponse: o.jsonResponse})
	}
	p.ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var rpc rpcPeek
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			json.Unmarshal(body, &rpc)
		}
		p.mu.Lock()
		p.reqs = append(p.reqs, seen{Method: r.Method, RPC: rpc.Method, Auth: r.Header.Get("Authorization")})
		icpt := p.intercept
		p.mu.Unlock()
		if icpt != nil && icpt(w, r, rpc) {
			return
		}
		h.ServeHTTP(w, r)
	}))
	// Streams the client left open (a standalone SSE GET) would keep
	// Close waiting: end them first.
	t.Cleanup(func() { p.ts.CloseClientConnections(); p.ts.Close() })
	p.URL = p.ts.URL + "/mcp"
	return p
}

func (p *peer) setIntercept(f func(w http.ResponseWriter, r *http.Request, rpc rpcPeek) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.intercept = f
}

// requests returns a copy of the request log.
func (p *peer) requests() []seen {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]seen(nil), p.reqs...)
}

// count returns how many requests match f.
func (p *peer) count(f func(seen) bool) int {
	n := 0
	for _, s := range p.requests() {
		if f(s) {
			n++
		}
	}
	return n
}

func (p *peer) rpcs(method string) int {
	return p.count(func(s seen) bool { return s.RPC == method })
}

type echoIn struct {
	Text string `json:"text"`
}

// addEcho adds a tool that answers its text argument prefixed by the
// server's tool name.
func addEcho(s *mcp.Server, name string) {
	mcp.AddTool(s, &mcp.Tool{Name: name, Description: "Echoes " + name + "."}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + ": " + in.Text}}}, nil, nil
	})
}

// addRaw adds a tool with a hand-written schema and handler.
func addRaw(s *mcp.Server, t *mcp.Tool, h mcp.ToolHandler) {
	if t.InputSchema == nil {
		t.InputSchema = map[string]any{"type": "object"}
	}
	if h == nil {
		h = func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		}
	}
	s.AddTool(t, h)
}

// builtins is a built-in catalog the way the real one is shaped for these
// tests: an always-on tool, the web_search and fetch_url families an MCP
// server may replace, and a plain optional tool.
func builtins() *registry.Catalog {
	mk := func(spec tool.Spec) *tool.Tool {
		spec.Description = "Built-in " + spec.Name + "."
		return tool.NewRaw(spec, schemaObject(), func(context.Context, tool.Scope, json.RawMessage) (tool.Result, error) {
			return tool.Result{Content: "built-in " + spec.Name}, nil
		})
	}
	c := registry.New()
	c.Register(
		mk(tool.Spec{Name: "calculate", AlwaysOn: true}),
		mk(tool.Spec{Name: "web_search", Family: "web_search", Macros: []string{"web_search_tool", "image_search_tool", "video_search_tool", "news_search_tool"}}),
		mk(tool.Spec{Name: "fetch_url", Family: "url_fetch", Macros: []string{"url_fetch_tool", "url_metadata_tool"}}),
		mk(tool.Spec{Name: "lookup"}),
	)
	return c
}

func facts(allow ...string) turn.Facts {
	return turn.Facts{
		Model: turn.Model{Provider: "fake", Name: "m", Caps: turn.Capabilities{Tools: true}},
		Agent: turn.Agent{Allow: allow},
	}
}

// excluded returns the reason Select gave for name, "" when none.
func excluded(ts registry.Toolset, name string) string {
	for _, x := range ts.Excluded() {
		if x.Name == name {
			return x.Reason
		}
	}
	return ""
}

// run calls a selected tool's handler the way dispatch does (validated
// arguments), failing the test when the tool is not in the set.
func run(t testing.TB, ts registry.Toolset, name, args string) (tool.Result, error) {
	t.Helper()
	tl, ok := ts.Lookup(name)
	if !ok {
		t.Fatalf("%s is not in the toolset %v (excluded %v)", name, ts.Names(), ts.Excluded())
	}
	return tl.Run(context.Background(), tool.Scope{OrgID: org}, json.RawMessage(args))
}

func wantContains(t testing.TB, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s = %q, want it to contain %q", what, got, w)
		}
	}
}

func wantNotContains(t testing.TB, what, got string, nots ...string) {
	t.Helper()
	for _, n := range nots {
		if n != "" && strings.Contains(got, n) {
			t.Errorf("%s = %q, must not contain %q", what, got, n)
		}
	}
}

func schemaObject() *jsonschema.Schema { return &jsonschema.Schema{Type: "object"} }
