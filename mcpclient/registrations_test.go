package mcpclient

import (
	"context"
	"errors"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quiverhq/quiver/netguard"
	"github.com/quiverhq/quiver/store"
)

// refusal asserts that err is an *Error containing want.
func refusal(t *testing.T, err error, want string) string {
	t.Helper()
	var re *Error
	if !errors.As(err, &re) {
		t.Fatalf("error = %v (%T), want an *Error containing %q", err, err, want)
	}
	wantContains(t, "refusal", re.Msg, want)
	return re.Msg
}

func (e *env) list() []store.MCPServer {
	e.t.Helper()
	recs, err := e.regs.List(context.Background(), org)
	if err != nil {
		e.t.Fatal(err)
	}
	return recs
}

func (e *env) names() []string {
	var out []string
	for _, r := range e.list() {
		out = append(out, r.Name)
	}
	return out
}

func TestAddInvalidFieldStoresNothingContactsNothing(t *testing.T) {
	e := newEnv(t, nil)
	p := startPeer(t, "p", peerOpts{})
	addEcho(p.srv, "echo")
	tests := []struct {
		name string
		reg  Registration
		want string
	}{
		{"bad name", Registration{Name: "bad_name", URL: p.URL, Token: secretToken}, "name:"},
		{"long URL", Registration{Name: "a", URL: p.URL + "?" + strings.Repeat("q", 500), Token: secretToken}, "url: at most 500"},
		{"scheme", Registration{Name: "a", URL: strings.Replace(p.URL, "http:", "ws:", 1), Token: secretToken}, "url: give an http or https URL"},
		{"long token", Registration{Name: "a", URL: p.URL, Token: strings.Repeat("t", 501)}, "token: at most 500"},
		{"two-line token", Registration{Name: "a", URL: p.URL, Token: secretToken + "\nX"}, "token: must be one line"},
		{"type", Registration{Name: "a", URL: p.URL, Token: secretToken, Type: "crawler"}, `type "crawler"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.regs.Add(context.Background(), org, e.mode, tc.reg)
			msg := refusal(t, err, tc.want)
			wantNotContains(t, "refusal", msg, secretToken)
		})
	}
	if got := e.list(); len(got) != 0 {
		t.Errorf("stored %v after refusals", got)
	}
	if got := p.requests(); len(got) != 0 {
		t.Errorf("the server was contacted: %v", got)
	}
}

func TestAddDuplicateName(t *testing.T) {
	e := newEnv(t, nil)
	a, b := startPeer(t, "a", peerOpts{}), startPeer(t, "b", peerOpts{})
	addEcho(a.srv, "echo")
	e.add(Registration{Name: "srv", URL: a.URL})
	_, err := e.regs.Add(context.Background(), org, e.mode, Registration{Name: " srv ", URL: b.URL})
	refusal(t, err, `name: "srv" is already registered`)
	if n := len(b.requests()); n != 0 {
		t.Errorf("the second server got %d requests", n)
	}
	// Another organisation may use the name.
	if _, err := e.regs.Add(context.Background(), "org2", e.mode, Registration{Name: "srv", URL: a.URL}); err != nil {
		t.Errorf("same name in another organisation: %v", err)
	}
}

func TestAddSecondTypedFamilyRefusedBeforeConnecting(t *testing.T) {
	e := newEnv(t, nil)
	first, second := startPeer(t, "first", peerOpts{}), startPeer(t, "second", peerOpts{})
	addEcho(first.srv, "search")
	addEcho(second.srv, "search")
	e.add(Registration{Name: "ws1", URL: first.URL, Type: "web_search"})

	_, err := e.regs.Add(context.Background(), org, e.mode, Registration{Name: "ws2", URL: second.URL, Type: "web_search"})
	refusal(t, err, `type: web_search is already served by the enabled server "ws1"`)
	if n := len(second.requests()); n != 0 {
		t.Errorf("the second server got %d requests before the refusal", n)
	}
	// Another family and the general type are not affected.
	e.add(Registration{Name: "fetcher", URL: second.URL, Type: "url_fetcher"})
	e.add(Registration{Name: "plain", URL: second.URL})

	// A disabled server of the family no longer blocks a new one.
	if err := e.regs.SetEnabled(context.Background(), org, "ws1", false); err != nil {
		t.Fatal(err)
	}
	e.add(Registration{Name: "ws2", URL: second.URL, Type: "web_search"})
	// ...but it cannot be enabled beside it.
	err = e.regs.SetEnabled(context.Background(), org, "ws1", true)
	refusal(t, err, "type: another enabled server already serves web_search")
	if diff := cmp.Diff([]string{"fetcher", "plain", "ws1", "ws2"}, e.names()); diff != "" {
		t.Errorf("stored (-want +got):\n%s", diff)
	}
}

func TestAddSlotLimitCountsDisabled(t *testing.T) {
	e := newEnv(t, func(c *testConfig) { c.Registrations.Slots = 2 })
	p, third := startPeer(t, "p", peerOpts{}), startPeer(t, "third", peerOpts{})
	addEcho(p.srv, "echo")
	addEcho(third.srv, "echo")
	e.add(Registration{Name: "a", URL: p.URL})
	e.add(Registration{Name: "b", URL: p.URL})
	if err := e.regs.SetEnabled(context.Background(), org, "b", false); err != nil {
		t.Fatal(err)
	}
	_, err := e.regs.Add(context.Background(), org, e.mode, Registration{Name: "c", URL: third.URL})
	refusal(t, err, "limit: this organisation already has 2 servers")
	if n := len(third.requests()); n != 0 {
		t.Errorf("the server over the limit got %d requests", n)
	}
	if err := e.regs.Remove(context.Background(), org, "b", true); err != nil {
		t.Fatal(err)
	}
	e.add(Registration{Name: "c", URL: third.URL})
	if diff := cmp.Diff([]string{"a", "c"}, e.names()); diff != "" {
		t.Errorf("stored (-want +got):\n%s", diff)
	}
}

func TestAddPublicModeRefusesLocalWithoutContact(t *testing.T) {
	e := newEnv(t, func(c *testConfig) { c.Pool.Network = netguard.Config{Mode: netguard.Public} })
	p := startPeer(t, "local", peerOpts{})
	addEcho(p.srv, "echo")
	port := p.ts.Listener.Addr().(*net.TCPAddr).Port
	tests := []struct {
		url, want string
	}{
		{p.URL, "url: public mode needs an https URL"},
		{strings.Replace(p.URL, "http:", "https:", 1), "blocked"},
		{"https://localhost:" + strconv.Itoa(port) + "/mcp", "blocked"},
		{"https://10.1.2.3/mcp", "blocked"},
		{"https://169.254.169.254/latest", "blocked"},
		{"https://[::1]/mcp", "blocked"},
	}
	for _, tc := range tests {
		_, err := e.regs.Add(context.Background(), org, e.mode, Registration{Name: "a", URL: tc.url})
		msg := refusal(t, err, tc.want)
		wantNotContains(t, "refusal", msg, "/mcp", "/latest")
	}
	if n := len(p.requests()); n != 0 {
		t.Errorf("the loopback server got %d requests in public mode", n)
	}
	if got := e.list(); len(got) != 0 {
		t.Errorf("stored %v", got)
	}
}

func TestAddConnectFailureSanitised(t *testing.T) {
	e := newEnv(t, nil)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()

	echoing := startPeer(t, "echoing", peerOpts{})
	// A broken server that answers with garbage quoting the request's
	// Authorization header, as a debugging proxy might.
	echoing.setIntercept(func(w http.ResponseWriter, r *http.Request, _ rpcPeek) bool {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte("unauthorised: " + r.Header.Get("Authorization")))
		return true
	})
	tests := []struct {
		name, url, origin string
		wants             []string
	}{
		{"nothing listening", "http://" + closed + "/mcp/private-path?key=q1", "http://" + closed, []string{"connection refused"}},
		{"garbage quoting the token", echoing.URL + "/private-path?key=q1", echoing.ts.URL, []string{"[redacted]", "SSE:"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.regs.Add(context.Background(), org, e.mode, Registration{Name: "a", URL: tc.url, Token: secretToken})
			msg := refusal(t, err, "could not connect to "+tc.origin+": ")
			wantContains(t, "refusal", msg, tc.wants...)
			wantNotContains(t, "refusal", msg, secretToken, "private-path", "key=q1")
			if len([]rune(msg)) > maxErrorChars+len("could not connect to "+tc.origin+": ") {
				t.Errorf("refusal of %d characters", len([]rune(msg)))
			}
		})
	}
	if got := e.list(); len(got) != 0 {
		t.Errorf("stored %v", got)
	}
}

// TestRegistrationIDDefault: without RegistrationsConfig.IDs a
// registration ID is ids.Random's with no prefix, 20 lower-case hex digits,
// and a fresh one per registration.
func TestRegistrationIDDefault(t *testing.T) {
	e := newEnv(t, func(c *testConfig) { c.Registrations.IDs = nil })
	p := startPeer(t, "p", peerOpts{})
	addEcho(p.srv, "alpha")
	format := regexp.MustCompile(`^[0-9a-f]{20}$`)
	seen := map[string]bool{}
	for _, name := range []string{"one", "two"} {
		rec, err := e.regs.Add(context.Background(), org, e.mode, Registration{Name: name, URL: p.URL})
		if err != nil {
			t.Fatal(err)
		}
		if !format.MatchString(rec.ID) || seen[rec.ID] {
			t.Errorf("registration ID %q: want 20 fresh lower-case hex digits", rec.ID)
		}
		seen[rec.ID] = true
	}
}

func TestAddStoresSnapshotAndSealedToken(t *testing.T) {
	e := newEnv(t, nil)
	p := startPeer(t, "p", peerOpts{})
	addEcho(p.srv, "zeta")
	addEcho(p.srv, "alpha")
	rec, err := e.regs.Add(context.Background(), org, e.mode, Registration{Name: "my server", URL: p.URL, Token: " " + secretToken + " "})
	if err != nil {
		t.Fatal(err)
	}
	want := store.MCPServer{ID: "1", OrgID: org, Name: "my-server", URL: p.URL, Type: "general", Enabled: true,
		Tools: []string{"alpha", "zeta"}, CreatedAt: t0, UpdatedAt: t0, DiscoveredAt: t0}
	if diff := cmp.Diff(want, rec, cmpIgnoreToken); diff != "" {
		t.Errorf("Add returned (-want +got):\n%s", diff)
	}
	stored := e.list()
	if len(stored) != 1 {
		t.Fatalf("stored %d rows", len(stored))
	}
	if diff := cmp.Diff(rec, stored[0]); diff != "" {
		t.Errorf("stored row differs from the returned one (-returned +stored):\n%s", diff)
	}
	sealed := stored[0].Token
	if sealed == "" || strings.Contains(sealed, secretToken) {
		t.Fatalf("stored token %q is not sealed", sealed)
	}
	pt, err := e.cfg.Registrations.Keyring.Open(sealed, TokenAAD(org, "1"))
	if err != nil || string(pt) != secretToken {
		t.Errorf("the sealed token opens to %q, %v; want the trimmed plaintext", pt, err)
	}
	if _, err := e.cfg.Registrations.Keyring.Open(sealed, TokenAAD(org, "2")); err == nil {
		t.Error("the sealed token opens with another row's binding")
	}
	if _, err := e.cfg.Registrations.Keyring.Open(sealed, TokenAAD("org2", "1")); err == nil {
		t.Error("the sealed token opens with another organisation's binding")
	}
	// Every request carried the token, and Add closed its session.
	for _, r := range p.requests() {
		if r.Auth != "Bearer "+secretToken {
			t.Errorf("%s %s sent Authorization %q", r.Method, r.RPC, r.Auth)
		}
	}
	if n := p.count(func(s seen) bool { return s.Method == http.MethodDelete }); n != 1 {
		t.Errorf("Add ended %d sessions, want 1 (it keeps no connection)", n)
	}
}

var cmpIgnoreToken = cmp.FilterPath(func(p cmp.Path) bool { return p.String() == "Token" }, cmp.Ignore())

func TestAddZeroToolsIsNoneDiscovered(t *testing.T) {
	e := newEnv(t, nil)
	p := startPeer(t, "empty", peerOpts{})
	rec, err := e.regs.Add(context.Background(), org, e.mode, Registration{Name: "empty", URL: p.URL})
	if err != nil {
		t.Fatal(err)
	}
	if got := Snapshot(e.list()[0].Tools); got != "None discovered" || Snapshot(rec.Tools) != got {
		t.Errorf("snapshot %q (returned %q), want None discovered", got, Snapshot(rec.Tools))
	}
}

func TestAddTokenNeedsKeyring(t *testing.T) {
	e := newEnv(t, func(c *testConfig) { c.Registrations.Keyring = nil })
	p := startPeer(t, "p", peerOpts{})
	addEcho(p.srv, "echo")
	_, err := e.regs.Add(context.Background(), org, e.mode, Registration{Name: "a", URL: p.URL, Token: secretToken})
	msg := refusal(t, err, "token: no encryption key is configured")
	wantNotContains(t, "refusal", msg, secretToken)
	if n := len(p.requests()); n != 0 {
		t.Errorf("the server got %d requests", n)
	}
	e.add(Registration{Name: "a", URL: p.URL})
}

// TestStoredTokenWithoutKeyring: a service started without the key that
// sealed a stored token reports the server unavailable and sends nothing.
func TestStoredTokenWithoutKeyring(t *testing.T) {
	e := newEnv(t, nil)
	p := startPeer(t, "p", peerOpts{})
	addEcho(p.srv, "echo")
	e.add(Registration{Name: "a", URL: p.URL, Token: secretToken})
	before := len(p.requests())
	pool := NewPool(PoolConfig{Network: e.cfg.Pool.Network, Now: e.clock.Now})
	defer pool.Close()
	keyless := NewRegistrations(RegistrationsConfig{Store: e.st, Pool: pool, Now: e.clock.Now})
	defer keyless.Close()
	tr, err := NewToolset(context.Background(), keyless, pool, org, e.mode, builtins())
	if err != nil {
		t.Fatal(err)
	}
	ts := builtins().With(tr.Overlay).Select(facts("a/*"))
	wantContains(t, "exclusion", excluded(ts, "a/*"), "MCP server unavailable", "no encryption key")
	if n := len(p.requests()); n != before {
		t.Errorf("%d requests without the key", n-before)
	}
}

func TestRemove(t *testing.T) {
	e := newEnv(t, func(c *testConfig) { c.Registrations.Slots = 1 })
	p := startPeer(t, "p", peerOpts{})
	addEcho(p.srv, "echo")
	e.add(Registration{Name: "a", URL: p.URL})

	refusal(t, e.regs.Remove(context.Background(), org, "a", false), `removing "a" needs explicit confirmation`)
	if diff := cmp.Diff([]string{"a"}, e.names()); diff != "" {
		t.Fatalf("unconfirmed remove changed the store (-want +got):\n%s", diff)
	}
	refusal(t, e.regs.Remove(context.Background(), org, "nope", true), `no server named "nope"`)

	e.overlay(builtins()) // opens the pooled connection
	if e.pool.live() != 1 {
		t.Fatalf("%d live connections after NewToolset, want 1", e.pool.live())
	}
	deletes := func() int { return p.count(func(s seen) bool { return s.Method == http.MethodDelete }) }
	before := deletes()
	if err := e.regs.Remove(context.Background(), org, "a", true); err != nil {
		t.Fatal(err)
	}
	if got := deletes(); got != before+1 {
		t.Errorf("the server saw %d session ends on Remove, want 1", got-before)
	}
	if e.pool.live() != 0 {
		t.Errorf("%d live connections after Remove", e.pool.live())
	}
	if got := e.list(); len(got) != 0 {
		t.Errorf("stored %v after Remove", got)
	}
	e.add(Registration{Name: "b", URL: p.URL}) // the slot is free
}

func TestDisableClosesAndHides(t *testing.T) {
	e := newEnv(t, nil)
	p := startPeer(t, "p", peerOpts{})
	addEcho(p.srv, "echo")
	e.add(Registration{Name: "a", URL: p.URL})
	ts := builtins().With(e.overlay(builtins()).Overlay).Select(facts("a/*"))
	if _, ok := ts.Lookup("a__echo"); !ok {
		t.Fatalf("echo not offered: %v", ts.Excluded())
	}
	before := p.count(func(s seen) bool { return s.Method == http.MethodDelete })
	if err := e.regs.SetEnabled(context.Background(), org, "a", false); err != nil {
		t.Fatal(err)
	}
	if got := p.count(func(s seen) bool { return s.Method == http.MethodDelete }); got != before+1 {
		t.Errorf("disabling ended %d sessions, want 1", got-before)
	}
	ts = builtins().With(e.overlay(builtins()).Overlay).Select(facts("a/*"))
	if _, ok := ts.Lookup("a__echo"); ok {
		t.Error("a disabled server's tool is offered")
	}
	if err := e.regs.SetEnabled(context.Background(), org, "a", true); err != nil {
		t.Fatal(err)
	}
	ts = builtins().With(e.overlay(builtins()).Overlay).Select(facts("a/*"))
	if _, ok := ts.Lookup("a__echo"); !ok {
		t.Errorf("re-enabled server's tool not offered: %v", ts.Excluded())
	}
	refusal(t, e.regs.SetEnabled(context.Background(), org, "nope", true), `no server named "nope"`)
}

func TestListNeverContactsServers(t *testing.T) {
	e := newEnv(t, nil)
	p := startPeer(t, "p", peerOpts{})
	addEcho(p.srv, "echo")
	e.add(Registration{Name: "a", URL: p.URL})
	before := len(p.requests())
	p.ts.Close() // listing must work with the server gone
	recs := e.list()
	if len(recs) != 1 || Snapshot(recs[0].Tools) != "echo" {
		t.Errorf("List = %+v", recs)
	}
	if n := len(p.requests()); n != before {
		t.Errorf("List sent %d requests", n-before)
	}
}

// TestSnapshotRefreshOnReconnect: the stored snapshot is rewritten in the
// background when a connection lists other tools than the stored ones.
func TestSnapshotRefreshOnReconnect(t *testing.T) {
	e := newEnv(t, nil)
	p := startPeer(t, "p", peerOpts{})
	addEcho(p.srv, "a")
	e.add(Registration{Name: "s", URL: p.URL})
	addEcho(p.srv, "b") // changed while no connection is open
	e.clock.Advance(time.Hour)
	e.overlay(builtins())
	e.close() // waits for the background write
	rec := e.list()[0]
	if diff := cmp.Diff([]string{"a", "b"}, rec.Tools); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
	if !rec.DiscoveredAt.Equal(t0.Add(time.Hour)) {
		t.Errorf("DiscoveredAt = %v, want the refresh time", rec.DiscoveredAt)
	}
}

// TestSnapshotRefreshOnListChanged: a live connection whose server
// announces a changed tool list lists again at the next NewToolset and stores
// the new snapshot.
func TestSnapshotRefreshOnListChanged(t *testing.T) {
	e := newEnv(t, nil)
	notified := make(chan struct{}, 1)
	// Told when the client has taken a list_changed (no answer the server
	// gets proves that its handler ran).
	taken := make(chan struct{}, 8)
	hook := func() { taken <- struct{}{} }
	listChanged.Store(&hook)
	t.Cleanup(func() { listChanged.Store(nil) })
	p := startPeer(t, "p", peerOpts{
		versions: []string{"2025-11-25"},
		sending: func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				res, err := next(ctx, method, req)
				if method == "notifications/tools/list_changed" {
					notified <- struct{}{}
				}
				return res, err
			}
		},
	})
	addEcho(p.srv, "a")
	e.add(Registration{Name: "s", URL: p.URL})
	e.overlay(builtins())
	lists := p.rpcs("tools/list")

	p.srv.RemoveTools("a")
	addEcho(p.srv, "c")
	<-notified
	<-taken // by the pooled connection, the one open
	tr := e.overlay(builtins())
	if got := p.rpcs("tools/list"); got != lists+1 {
		t.Errorf("%d tool listings after the change, want 1", got-lists)
	}
	if got := p.rpcs("initialize"); got != 2 {
		t.Errorf("%d initializations, want 2 (Add's and the pooled one reused)", got)
	}
	ts := builtins().With(tr.Overlay).Select(facts("s/*"))
	if diff := cmp.Diff([]string{"calculate", "s__c"}, ts.Names()); diff != "" {
		t.Errorf("toolset after the change (-want +got):\n%s", diff)
	}
	e.close()
	if diff := cmp.Diff([]string{"c"}, e.list()[0].Tools); diff != "" {
		t.Errorf("stored snapshot (-want +got):\n%s", diff)
	}
}

// TestListChangedDuringListing: a change announced while the tools are
// being listed is not lost when the (older) listing arrives.
func TestListChangedDuringListing(t *testing.T) {
	e := newEnv(t, nil)
	notified := make(chan struct{}, 1)
	// Told when the client has taken a list_changed (no answer the server
	// gets proves that its handler ran).
	taken := make(chan struct{}, 8)
	hook := func() { taken <- struct{}{} }
	listChanged.Store(&hook)
	t.Cleanup(func() { listChanged.Store(nil) })
	var p *peer
	var lists atomic.Int32
	p = startPeer(t, "p", peerOpts{
		versions: []string{"2025-11-25"},
		sending: func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				res, err := next(ctx, method, req)
				if method == "notifications/tools/list_changed" {
					notified <- struct{}{}
				}
				return res, err
			}
		},
		receiving: func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				res, err := next(ctx, method, req)
				// The pooled connection's first listing (Add's is the
				// first of all): the tools change after the list was made
				// and before it is sent, and the client has taken the
				// notification when the listing arrives.
				if method == "tools/list" && lists.Add(1) == 2 {
					addEcho(p.srv, "late")
					<-notified
					// The client has taken it: Add closed its connection
					// before returning, so the one open is the listing one.
					<-taken
				}
				return res, err
			}
		},
	})
	addEcho(p.srv, "early")
	e.add(Registration{Name: "s", URL: p.URL})
	// The connection comes back marked stale, so the same NewToolset lists
	// again.
	for i := range 2 {
		ts := builtins().With(e.overlay(builtins()).Overlay).Select(facts("s/*"))
		if diff := cmp.Diff([]string{"calculate", "s__early", "s__late"}, ts.Names()); diff != "" {
			t.Errorf("toolset %d after the announced change (-want +got):\n%s", i, diff)
		}
	}
	if got := p.rpcs("tools/list"); got != 3 {
		t.Errorf("%d listings, want 3 (Add's, the connect's, the one after the change)", got)
	}
}

func TestCallReverifiesRegistration(t *testing.T) {
	e := newEnv(t, nil)
	p := startPeer(t, "p", peerOpts{})
	addEcho(p.srv, "echo")
	e.add(Registration{Name: "a", URL: p.URL})
	ts := builtins().With(e.overlay(builtins()).Overlay).Select(facts("a/echo"))
	res, err := run(t, ts, "a__echo", `{"text":"hi"}`)
	if err != nil || res.Content != "echo: hi" {
		t.Fatalf("call = %+v, %v", res, err)
	}
	calls := p.rpcs("tools/call")

	if err := e.regs.SetEnabled(context.Background(), org, "a", false); err != nil {
		t.Fatal(err)
	}
	_, err = run(t, ts, "a__echo", `{"text":"hi"}`)
	wantContains(t, "error", errString(err), "the MCP server a is disabled")

	if err := e.regs.Remove(context.Background(), org, "a", true); err != nil {
		t.Fatal(err)
	}
	_, err = run(t, ts, "a__echo", `{"text":"hi"}`)
	wantContains(t, "error", errString(err), "the MCP server a was removed")

	e.add(Registration{Name: "a", URL: p.URL}) // same name, new row
	_, err = run(t, ts, "a__echo", `{"text":"hi"}`)
	wantContains(t, "error", errString(err), "changed since this turn started")

	if got := p.rpcs("tools/call"); got != calls {
		t.Errorf("the server got %d calls after the registration changed", got-calls)
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// modeSource is a ModeSource that answers mode (or err) and counts reads.
type modeSource struct {
	mode  netguard.Mode
	err   error
	reads int
}

func (m *modeSource) Mode(context.Context, string) (netguard.Mode, error) {
	m.reads++
	return m.mode, m.err
}

// TestAddUnder: bad fields are refused before the organisation's mode is
// read; a mode that cannot be read stops the Add before any contact; the
// mode read is the one the server is added under.
func TestAddUnder(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	p := startPeer(t, "p", peerOpts{})
	addEcho(p.srv, "echo")

	modes := &modeSource{mode: netguard.SelfHosted}
	_, err := e.regs.AddUnder(ctx, org, modes, Registration{Name: "bad_name", URL: p.URL})
	refusal(t, err, "name:")
	if modes.reads != 0 {
		t.Errorf("the mode was read %d times for bad fields", modes.reads)
	}

	broken := &modeSource{err: errors.New("settings unreadable")}
	if _, err := e.regs.AddUnder(ctx, org, broken, Registration{Name: "a", URL: p.URL}); err == nil || !strings.Contains(err.Error(), "settings unreadable") {
		t.Errorf("unreadable mode: %v", err)
	}

	public := &modeSource{mode: netguard.Public}
	_, err = e.regs.AddUnder(ctx, org, public, Registration{Name: "a", URL: p.URL})
	refusal(t, err, "url: public mode needs an https URL")
	if n := len(p.requests()); n != 0 {
		t.Errorf("the server got %d requests before a successful Add", n)
	}

	rec, err := e.regs.AddUnder(ctx, org, modes, Registration{Name: " a ", URL: p.URL})
	if err != nil || rec.Name != "a" || modes.reads != 1 {
		t.Fatalf("AddUnder self-hosted = %+v, %v (mode read %d times)", rec, err, modes.reads)
	}
	if diff := cmp.Diff([]string{"a"}, e.names()); diff != "" {
		t.Errorf("stored (-want +got):\n%s", diff)
	}
}
