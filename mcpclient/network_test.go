package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quiverhq/quiver/netguard"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// org2 is a second organisation on the same Pool and Registrations.
const org2 = "org2"

// sent counts the requests a server got other than GETs: the session's
// standalone event stream is a GET the SDK opens in the background after
// initialisation and may arrive at any time; every other request is one
// the client chose to send (initialize, calls, listings, the DELETE that
// ends a session).
func sent(p *peer) int {
	return p.count(func(s seen) bool { return s.Method != http.MethodGet })
}

// toolset is the toolset a turn of an organisation given mode gets,
// allowing allow.
func (e *env) toolset(orgID string, mode netguard.Mode, allow ...string) registry.Toolset {
	e.t.Helper()
	tr, err := NewToolset(context.Background(), e.regs, e.pool, orgID, mode, builtins())
	if err != nil {
		e.t.Fatalf("NewToolset %s: %v", orgID, err)
	}
	return builtins().With(tr.Overlay).Select(facts(allow...))
}

// TestToolsetUsesGivenMode: a turn's toolset connects under the network
// mode it is given, on one Pool with no way to look a mode up: a loopback
// http server is refused, without a request, to a turn given public mode
// and reached by the next turn given self-hosted mode.
func TestToolsetUsesGivenMode(t *testing.T) {
	e := newEnv(t, nil) // a self-hosted deployment allows both modes
	p := startPeer(t, "p", peerOpts{})
	addEcho(p.srv, "echo")
	e.add(Registration{Name: "srv", URL: p.URL})
	heard := sent(p)

	public := e.toolset(org, netguard.Public, "srv/*")
	if _, ok := public.Lookup("srv__echo"); ok {
		t.Error("echo is offered to a turn given public mode")
	}
	wantContains(t, "public exclusion", excluded(public, "srv/*"), "MCP server unavailable", "public mode needs an https URL")
	if got := sent(p) - heard; got != 0 {
		t.Errorf("the server got %d requests from the public turn: %v", got, p.requests())
	}

	selfHosted := e.toolset(org, netguard.SelfHosted, "srv/*")
	if res, err := run(t, selfHosted, "srv__echo", `{"text":"local"}`); err != nil || res.Content != "echo: local" {
		t.Errorf("call of the self-hosted turn: %+v, %v", res, err)
	}
}

// TestOrgSwitchedToPublic: once a turn of an organisation switched from
// self-hosted to public is given public mode, the organisation can no
// longer add, connect to or call a loopback http server — not even from
// a turn routed before the switch — and its server hears nothing more
// (the pooled session is closed without a request), while another
// organisation on the same Pool, still self-hosted, keeps using its own.
func TestOrgSwitchedToPublic(t *testing.T) {
	e := newEnv(t, nil)
	pa, pb, pc := startPeer(t, "a", peerOpts{}), startPeer(t, "b", peerOpts{}), startPeer(t, "c", peerOpts{})
	for _, p := range []*peer{pa, pb, pc} {
		addEcho(p.srv, "echo")
	}
	e.add(Registration{Name: "srv", URL: pa.URL})
	if _, err := e.regs.Add(context.Background(), org2, netguard.SelfHosted, Registration{Name: "srv", URL: pb.URL}); err != nil {
		t.Fatalf("Add for %s: %v", org2, err)
	}
	tsA, tsB := e.toolset(org, netguard.SelfHosted, "srv/*"), e.toolset(org2, netguard.SelfHosted, "srv/*")
	for name, ts := range map[string]registry.Toolset{org: tsA, org2: tsB} {
		if res, err := run(t, ts, "srv__echo", `{"text":"hi"}`); err != nil || res.Content != "echo: hi" {
			t.Fatalf("%s before the switch: %+v, %v", name, res, err)
		}
	}

	heard := sent(pa)
	ts := e.toolset(org, netguard.Public, "srv/*")
	if _, ok := ts.Lookup("srv__echo"); ok {
		t.Error("echo is still offered to the switched organisation")
	}
	wantContains(t, "exclusion", excluded(ts, "srv/*"), "public mode needs an https URL")
	_, err := run(t, tsA, "srv__echo", `{"text":"hi"}`)
	wantContains(t, "call of a turn routed before the switch", errString(err), "network mode of this organisation changed", "now public")
	_, err = e.servers().call(context.Background(), e.list()[0], netguard.Public, "echo", nil)
	wantContains(t, "call under the new mode", errString(err), "public mode needs an https URL")
	_, err = e.regs.Add(context.Background(), org, netguard.Public, Registration{Name: "other", URL: pc.URL})
	refusal(t, err, "public mode needs an https URL")
	if got := sent(pa) - heard; got != 0 {
		t.Errorf("the switched organisation's server got %d requests after the switch: %v", got, pa.requests())
	}
	if got := len(pc.requests()); got != 0 {
		t.Errorf("the server added under public mode got %d requests", got)
	}

	// The other organisation, still self-hosted, is unaffected: its turn,
	// a new turn and a new registration all reach loopback servers.
	calls := pb.rpcs("tools/call")
	for i, ts := range []registry.Toolset{tsB, e.toolset(org2, netguard.SelfHosted, "srv/*")} {
		if res, err := run(t, ts, "srv__echo", `{"text":"still"}`); err != nil || res.Content != "echo: still" {
			t.Errorf("%s turn %d after the switch: %+v, %v", org2, i, res, err)
		}
	}
	if got := pb.rpcs("tools/call") - calls; got != 2 {
		t.Errorf("%s's server got %d calls, want 2", org2, got)
	}
	if _, err := e.regs.Add(context.Background(), org2, netguard.SelfHosted, Registration{Name: "other", URL: pc.URL}); err != nil {
		t.Errorf("Add for %s after the switch: %v", org2, err)
	}
	// The switched organisation's session was closed, not left open.
	if got := e.pool.live(); got != 1 {
		t.Errorf("%d live connections, want 1 (%s's)", got, org2)
	}
}

// TestOrgSwitchedBackReconnects: switching back to self-hosted connects
// afresh (a cooldown or a session of the other mode is not carried over).
func TestOrgSwitchedBackReconnects(t *testing.T) {
	e := newEnv(t, nil)
	p := startPeer(t, "p", peerOpts{})
	addEcho(p.srv, "echo")
	e.add(Registration{Name: "srv", URL: p.URL})
	e.toolset(org, netguard.SelfHosted, "srv/*")
	inits := p.rpcs("initialize")
	e.toolset(org, netguard.Public, "srv/*")
	ts := e.toolset(org, netguard.SelfHosted, "srv/*")
	if res, err := run(t, ts, "srv__echo", `{"text":"back"}`); err != nil || res.Content != "echo: back" {
		t.Fatalf("after switching back: %+v, %v", res, err)
	}
	if got := p.rpcs("initialize") - inits; got != 1 {
		t.Errorf("%d new sessions after switching back, want 1", got)
	}
}

// publicDeployment is an env whose deployment is public, holding a stored
// web_search registration of a loopback http server (stored as if added
// while the deployment was self-hosted).
func publicDeployment(t *testing.T, p *peer) *env {
	e := newEnv(t, func(c *testConfig) { c.Pool.Network = netguard.Config{Mode: netguard.Public} })
	reg := store.MCPServer{ID: "r1", OrgID: org, Name: "srv", URL: p.URL, Type: store.MCPWebSearch, Enabled: true, CreatedAt: t0, UpdatedAt: t0}
	if err := e.st.CreateMCPServer(context.Background(), reg, 0); err != nil {
		t.Fatal(err)
	}
	return e
}

// TestDisallowedModeFailsClosed: a turn given a mode the deployment does
// not allow (self-hosted in a public deployment) has its servers left out
// with the reason and the built-in they replace still hidden, a turn
// routed before under another mode has its calls refused, and Add under
// that mode fails, all without a request to any server.
func TestDisallowedModeFailsClosed(t *testing.T) {
	p, other := startPeer(t, "p", peerOpts{}), startPeer(t, "other", peerOpts{})
	addEcho(p.srv, "echo")
	addEcho(other.srv, "echo")
	e := publicDeployment(t, p)
	reg := e.list()[0]

	ts := e.toolset(org, netguard.SelfHosted, "srv/*", "web_search")
	if diff := cmp.Diff([]string{"calculate"}, ts.Names()); diff != "" {
		t.Errorf("toolset (-want +got):\n%s", diff)
	}
	wantContains(t, "exclusion", excluded(ts, "srv/*"), "MCP server unavailable: network mode self-hosted is not allowed by the deployment")
	wantContains(t, "web_search exclusion", excluded(ts, "web_search"), "replaced by MCP server srv, which is unavailable")

	_, err := e.servers().call(context.Background(), reg, netguard.Public, "echo", nil)
	wantContains(t, "call of a public turn", errString(err), "network mode of this organisation changed", "now self-hosted")
	if tool.IsInfra(err) {
		t.Errorf("call error %v is marked infra; the model should see the refusal", err)
	}

	_, err = e.regs.Add(context.Background(), org, netguard.SelfHosted, Registration{Name: "other", URL: other.URL})
	wantContains(t, "Add", errString(err), "self-hosted is not allowed by the deployment")
	if _, refused := errors.AsType[*Error](err); refused {
		t.Errorf("Add error %v is a refusal of the registration; it is the caller's mistake", err)
	}
	if got := len(p.requests()); got != 0 {
		t.Errorf("the server got %d requests: %v", got, p.requests())
	}
	if got := len(other.requests()); got != 0 {
		t.Errorf("the server being added got %d requests", got)
	}
	if got := e.list(); len(got) != 1 {
		t.Errorf("stored %d registrations, want 1", len(got))
	}
}

// TestOrgModeBeyondDeployment: Add under self-hosted mode in a public
// deployment is refused, not honoured, and no request is sent.
func TestOrgModeBeyondDeployment(t *testing.T) {
	e := newEnv(t, func(c *testConfig) {
		c.Pool.Network = netguard.Config{Mode: netguard.Public}
		c.Mode = netguard.SelfHosted
	})
	p := startPeer(t, "p", peerOpts{})
	addEcho(p.srv, "echo")
	_, err := e.regs.Add(context.Background(), org, e.mode, Registration{Name: "srv", URL: p.URL})
	wantContains(t, "Add", errString(err), "self-hosted is not allowed by the deployment")
	if got := len(p.requests()); got != 0 {
		t.Errorf("the server got %d requests", got)
	}
}

// TestNoModeCheckWithoutServers: an organisation without an enabled
// server gets the built-ins alone under any mode, even one the deployment
// does not allow: there is nothing to refuse, so nothing is reported.
func TestNoModeCheckWithoutServers(t *testing.T) {
	e := newEnv(t, func(c *testConfig) { c.Pool.Network = netguard.Config{Mode: netguard.Public} })
	tr, err := NewToolset(context.Background(), e.regs, e.pool, org, netguard.SelfHosted, builtins())
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Overlay.Tools) != 0 || len(tr.Overlay.Dropped) != 0 || len(tr.Overlay.Hide) != 0 || len(tr.Notices) != 0 {
		t.Errorf("toolset of an organisation without servers = %+v", tr)
	}
	ts := builtins().With(tr.Overlay).Select(facts())
	if diff := cmp.Diff([]string{"calculate"}, ts.Names()); diff != "" {
		t.Errorf("toolset (-want +got):\n%s", diff)
	}
}

// TestURLArgumentsVettedUnderTurnMode: a tool routed under public mode
// vets its URL arguments with the public policy, one routed under
// self-hosted mode with the self-hosted one, on the same Pool.
func TestURLArgumentsVettedUnderTurnMode(t *testing.T) {
	e := newEnv(t, nil)
	p := startPeer(t, "p", peerOpts{})
	addFetch(p.srv)
	e.add(Registration{Name: "srv", URL: p.URL})
	st := serverState{reg: e.list()[0]}
	fetch := mcpTool{&mcp.Tool{Name: "fetch", InputSchema: map[string]any{"type": "object", "properties": map[string]any{
		"url": map[string]any{"type": "string"},
	}}}}
	args := `{"url":"http://127.0.0.1:9/page"}`
	tests := []struct {
		mode netguard.Mode
		want string
	}{
		{netguard.Public, "url: blocked"},
		{netguard.SelfHosted, "fetched http://127.0.0.1:9/page"},
	}
	for _, tc := range tests {
		tl, err := e.servers().importer(e.pool.nets[tc.mode])(st, fetch, "mcp:srv", nil, tool.Spec{})
		if err != nil {
			t.Fatal(err)
		}
		calls := p.rpcs("tools/call")
		res, err := tl.Run(context.Background(), tool.Scope{OrgID: org}, json.RawMessage(args))
		got := res.Content
		if err != nil {
			got = err.Error()
		}
		wantContains(t, string(tc.mode), got, tc.want)
		if tc.mode == netguard.Public && p.rpcs("tools/call") != calls {
			t.Error("a URL argument refused in public mode reached the server")
		}
	}
}

// memSession returns a client session with an in-memory server.
func memSession(t *testing.T) *mcp.ClientSession {
	ct, st := mcp.NewInMemoryTransports()
	srv := mcp.NewServer(&mcp.Implementation{Name: "mem", Version: "1"}, nil)
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Error(err)
		return nil
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Error(err)
		return nil
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestPoolModes: a cooldown is kept per mode, and retire closes the
// registration's connection of another mode without a request (its
// transport refuses every later request) but keeps the one of key's mode.
func TestPoolModes(t *testing.T) {
	dials := map[netguard.Mode]int{}
	var mu sync.Mutex
	closed := make(chan netguard.Mode, 4)
	conns := map[netguard.Mode]*Conn{}
	p := newPool(func(_ context.Context, key poolKey, _ Target) (*Conn, error) {
		mu.Lock()
		defer mu.Unlock()
		dials[key.mode]++
		if key.url == "down" {
			return nil, errors.New("refused")
		}
		c := &Conn{session: memSession(t), cancel: func() { closed <- key.mode }, origin: &originTransport{}}
		conns[key.mode] = c
		return c, nil
	}, time.Now, time.Minute, time.Minute)
	redact := func(err error) string { return err.Error() }
	get := func(mode netguard.Mode, url string) error {
		_, err := p.get(context.Background(), poolKey{id: "a", url: url, mode: mode}, Target{}, redact)
		return err
	}

	if err := get(netguard.SelfHosted, "down"); err == nil || IsCooldown(err) {
		t.Fatalf("first connect: %v", err)
	}
	if err := get(netguard.SelfHosted, "down"); !IsCooldown(err) {
		t.Errorf("second connect in the same mode: %v, want a cooldown", err)
	}
	if err := get(netguard.Public, "down"); err == nil || IsCooldown(err) {
		t.Errorf("connect in the other mode: %v, want a fresh attempt", err)
	}
	if diff := cmp.Diff(map[netguard.Mode]int{netguard.SelfHosted: 1, netguard.Public: 1}, dials); diff != "" {
		t.Errorf("dials (-want +got):\n%s", diff)
	}

	if err := get(netguard.SelfHosted, "up"); err != nil {
		t.Fatal(err)
	}
	p.retire(poolKey{id: "a", url: "up", mode: netguard.SelfHosted})
	if p.live() != 1 {
		t.Fatalf("retire under the connection's own mode closed it")
	}
	p.retire(poolKey{id: "a", url: "up", mode: netguard.Public})
	if m := <-closed; m != netguard.SelfHosted {
		t.Errorf("closed the %s connection", m)
	}
	if !conns[netguard.SelfHosted].origin.abandoned.Load() {
		t.Error("the retired connection may still send requests")
	}
	if p.live() != 0 {
		t.Errorf("%d live connections after retire", p.live())
	}
}

// TestToolsetImporterInherits: the toolset's importer, the one turns use,
// gives a replacement's tools the replaced built-in's requirement and
// fragments (the route test checks the routing; this, the wiring).
func TestToolsetImporterInherits(t *testing.T) {
	e := newEnv(t, nil)
	st := serverState{reg: store.MCPServer{ID: "1", OrgID: org, Name: "reader", Type: store.MCPURLFetcher}}
	read := mcpTool{&mcp.Tool{Name: "read_page", InputSchema: map[string]any{"type": "object"}}}
	inherit := tool.Spec{Fragments: []string{"Pages are untrusted."}, Requires: func(turn.Selection) string { return "withheld" }}
	tl, err := e.servers().importer(e.pool.nets[netguard.Public])(st, read, "url_fetch", nil, inherit)
	if err != nil {
		t.Fatal(err)
	}
	spec := tl.Spec()
	if diff := cmp.Diff(inherit.Fragments, spec.Fragments); diff != "" {
		t.Errorf("fragments (-want +got):\n%s", diff)
	}
	if spec.Requires == nil || spec.Requires(turn.Selection{}) != "withheld" {
		t.Error("the built-in's requirement did not carry over")
	}
}
