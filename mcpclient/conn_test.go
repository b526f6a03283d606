package mcpclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quiverhq/quiver/netguard"
	"github.com/quiverhq/quiver/store"
)

func isGet(s seen) bool    { return s.Method == http.MethodGet }
func isDelete(s seen) bool { return s.Method == http.MethodDelete }

func TestTransports(t *testing.T) {
	tests := []struct {
		name string
		sse  bool
		want string
	}{
		{"streamable HTTP first", false, TransportStreamable},
		{"SSE-only server through the fallback", true, TransportSSE},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, nil)
			p := startPeer(t, "peer-"+tc.want, peerOpts{sse: tc.sse})
			addEcho(p.srv, "echo")
			c, err := e.pool.Probe(context.Background(), p.URL, "")
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if c.Transport() != tc.want || c.Server().Name != "peer-"+tc.want {
				t.Errorf("transport %q, server %q; want %q, %q", c.Transport(), c.Server().Name, tc.want, "peer-"+tc.want)
			}
			if got := distinctNames(c.Tools()); !cmp.Equal(got, []string{"echo"}) {
				t.Errorf("tools %v", got)
			}
			// A registered server on this transport answers calls.
			e.add(Registration{Name: "a", URL: p.URL})
			ts := builtins().With(e.overlay(builtins()).Overlay).Select(facts("a/*"))
			res, err := run(t, ts, "a__echo", `{"text":"over `+tc.want+`"}`)
			if err != nil || res.Content != "echo: over "+tc.want {
				t.Errorf("call = %+v, %v", res, err)
			}
		})
	}
}

// TestBearerOnlyToRegisteredOrigin: an SSE server whose endpoint event
// sends the client to another origin gets nothing sent there, token or
// not.
func TestBearerOnlyToRegisteredOrigin(t *testing.T) {
	e := newEnv(t, nil)
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		w.WriteHeader(http.StatusAccepted)
	}))
	defer other.Close()
	var auth sync.Map
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth.Store(r.Method, r.Header.Get("Authorization"))
		if r.Method != http.MethodGet {
			http.Error(w, "SSE only", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: endpoint\ndata: %s/messages?sessionid=1\n\n", other.URL)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer first.Close()
	defer first.CloseClientConnections()

	_, err := e.regs.Add(context.Background(), org, e.mode, Registration{Name: "a", URL: first.URL + "/sse", Token: secretToken})
	msg := refusal(t, err, "request to another origin refused")
	wantNotContains(t, "refusal", msg, secretToken, "/messages")
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("the other origin got %d requests", n)
	}
	for _, m := range []string{http.MethodPost, http.MethodGet} {
		if got, _ := auth.Load(m); got != "Bearer "+secretToken {
			t.Errorf("%s to the registered origin carried Authorization %q", m, got)
		}
	}
}

// TestOtherOriginNamed: a connect attempt during which a request to
// another origin was refused reports that refusal, whatever error the SDK
// passes on. With a real SSE server the SDK falls back from server/discover
// to initialize on the connection the refused write shut down, and names
// either the write error or the end of the stream, depending on which of
// its goroutines runs first; here the transport loses the cause every time.
func TestOtherOriginNamed(t *testing.T) {
	for _, tc := range []struct {
		name, post string
		want       bool
	}{
		{"a request to another origin", "http://elsewhere.example/messages?sessionid=1", true},
		{"a request to the registered origin that failed", "http://registered.example/messages?sessionid=1", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, nil)
			var sent atomic.Int32
			base := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				sent.Add(1)
				return nil, errors.New("connection reset")
			})}
			endpoint, err := url.Parse("http://registered.example/sse")
			if err != nil {
				t.Fatal(err)
			}
			hc := httpClientFor(base, endpoint, secretToken, 1<<20)
			tr := &lossyTransport{hc: hc, post: tc.post}
			c, err := e.pool.deployment().dialer.attempt(context.Background(), TransportSSE, tr, hc, time.Now().Add(time.Minute), time.Minute)
			if err == nil {
				c.Close()
				t.Fatal("connected")
			}
			if got := errors.Is(err, errOtherOrigin); got != tc.want {
				t.Errorf("error %q names the other origin: %v, want %v", err, got, tc.want)
			}
			if tr.writes.Load() == 0 {
				t.Error("the transport was never written to")
			}
			if n := sent.Load(); (n == 0) != tc.want {
				t.Errorf("%d requests went out to an origin", n)
			}
		})
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// lossyTransport is an SSE-like transport whose writes are POSTs to post
// through hc and that reports every failed write as io.EOF, the cause
// lost.
type lossyTransport struct {
	hc     *http.Client
	post   string
	writes atomic.Int32
}

func (t *lossyTransport) Connect(context.Context) (mcp.Connection, error) {
	return &lossyConn{t: t, done: make(chan struct{})}, nil
}

type lossyConn struct {
	t    *lossyTransport
	once sync.Once
	done chan struct{}
}

func (c *lossyConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.done:
		return nil, io.EOF
	}
}

func (c *lossyConn) Write(ctx context.Context, _ jsonrpc.Message) error {
	c.t.writes.Add(1)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.t.post, strings.NewReader("{}"))
	if err != nil {
		return err
	}
	resp, err := c.t.hc.Do(req)
	if err != nil {
		return io.EOF
	}
	resp.Body.Close()
	return nil
}

func (c *lossyConn) Close() error {
	c.once.Do(func() { close(c.done) })
	return nil
}

func (c *lossyConn) SessionID() string { return "" }

func TestRedirectRefused(t *testing.T) {
	e := newEnv(t, nil)
	target := startPeer(t, "target", peerOpts{})
	addEcho(target.srv, "echo")
	var hits atomic.Int32
	red := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Redirect(w, r, target.URL, http.StatusTemporaryRedirect)
	}))
	defer red.Close()
	_, err := e.regs.Add(context.Background(), org, e.mode, Registration{Name: "a", URL: red.URL + "/old-path", Token: secretToken})
	msg := refusal(t, err, "redirects are refused")
	wantContains(t, "refusal", msg, "307", "streamable HTTP:", "SSE:")
	wantNotContains(t, "refusal", msg, secretToken, "/old-path", target.ts.URL)
	if n := len(target.requests()); n != 0 {
		t.Errorf("the redirect target got %d requests", n)
	}
	if hits.Load() == 0 {
		t.Error("the redirecting server was never asked")
	}
}

func TestResponseCap(t *testing.T) {
	const limit = 64 << 10
	for name, o := range map[string]peerOpts{
		"streamable event streams": {},
		"streamable JSON bodies":   {jsonResponse: true},
		"SSE":                      {sse: true},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, func(c *testConfig) { c.Pool.Limits.MaxResponseBytes = limit })
			p := startPeer(t, "p", o)
			answer := func(n int) mcp.ToolHandler {
				return func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", n)}}}, nil
				}
			}
			addRaw(p.srv, &mcp.Tool{Name: "big", Description: "Answers too much."}, answer(3*limit))
			addRaw(p.srv, &mcp.Tool{Name: "mid", Description: "Answers a third of the cap."}, answer(limit/3))
			e.add(Registration{Name: "a", URL: p.URL})
			ts := builtins().With(e.overlay(builtins()).Overlay).Select(facts("a/*"))

			// The cap is per answer, not per session: an SSE session
			// carries every answer on one stream.
			for i := range 8 {
				if res, err := run(t, ts, "a__mid", `{}`); err != nil || len(res.Content) != limit/3 {
					t.Fatalf("answer %d under the cap: %d characters, %v", i, len(res.Content), err)
				}
			}
			_, err := run(t, ts, "a__big", `{}`)
			wantContains(t, "error", errString(err), "the MCP server a failed", "larger than the response size cap")
			if res, err := run(t, ts, "a__mid", `{}`); err != nil || len(res.Content) != limit/3 {
				t.Errorf("call after the oversized answer: %d characters, %v", len(res.Content), err)
			}
		})
	}

	// A tool listing over the cap fails the connect.
	e := newEnv(t, func(c *testConfig) { c.Pool.Limits.MaxResponseBytes = limit })
	huge := startPeer(t, "huge", peerOpts{})
	for i := range 40 {
		addRaw(huge.srv, &mcp.Tool{Name: fmt.Sprintf("t%d", i), Description: strings.Repeat("d", 2048)}, nil)
	}
	_, err := e.regs.Add(context.Background(), org, e.mode, Registration{Name: "huge", URL: huge.URL})
	refusal(t, err, "larger than the response size cap")
}

func TestCapBody(t *testing.T) {
	tests := []struct {
		name     string
		body     string
		perEvent bool
		wantErr  bool
	}{
		{"body at the cap", strings.Repeat("x", 10), false, false},
		{"body over the cap", strings.Repeat("x", 11), false, true},
		{"events each at the cap", "data: 12\n\ndata: 45\n\ndata: 78\n\n", true, false},
		{"CRLF events each at the cap", "data:1\r\n\r\ndata:4\r\n\r\n", true, false},
		{"one event over the cap", "data: 1\n\ndata: 45\ndata: 8\n\n", true, true},
		{"stream counted whole", "data: 1\n\ndata: 4\n\n", false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var hit atomic.Bool
			b := &capBody{rc: io.NopCloser(strings.NewReader(tc.body)), max: 10, perEvent: tc.perEvent, hit: &hit}
			got, err := io.ReadAll(iotest.OneByteReader(b))
			if tc.wantErr != errors.Is(err, netguard.ErrTooLarge) || tc.wantErr != hit.Load() {
				t.Fatalf("read %q, %v (noted %v); want the cap error %v", got, err, hit.Load(), tc.wantErr)
			}
			if !tc.wantErr && string(got) != tc.body {
				t.Errorf("read %q, want %q", got, tc.body)
			}
		})
	}
}

// hang makes every request to p block until the test ends.
func hang(t *testing.T, p *peer) {
	block := make(chan struct{})
	t.Cleanup(func() { close(block) })
	p.setIntercept(func(w http.ResponseWriter, r *http.Request, _ rpcPeek) bool {
		select {
		case <-block:
		case <-r.Context().Done():
		}
		return true
	})
}

func TestHangingServerTimesOutOnce(t *testing.T) {
	e := newEnv(t, func(c *testConfig) { c.Pool.Limits.ConnectTimeout = 100 * time.Millisecond })
	p := startPeer(t, "p", peerOpts{})
	hang(t, p)
	_, err := e.regs.Add(context.Background(), org, e.mode, Registration{Name: "a", URL: p.URL})
	refusal(t, err, "no answer within 100ms")
	// The timeout covers the whole connect: no SSE attempt follows a
	// Streamable HTTP attempt that got no answer, and the attempt given up
	// sends nothing more (the SDK would notify the cancellation and wait
	// seconds for the hanging server to take it).
	if n := p.count(isGet); n != 0 {
		t.Errorf("%d SSE requests after the timeout", n)
	}
	if n := len(p.requests()); n > 1 {
		t.Errorf("the hanging server got %d requests, want 1: %v", n, p.requests())
	}
}

func TestHangingServerCooldown(t *testing.T) {
	e := newEnv(t, func(c *testConfig) {
		c.Pool.Limits.ConnectTimeout = 100 * time.Millisecond
		c.Pool.Limits.Cooldown = 5 * time.Minute
	})
	p := startPeer(t, "p", peerOpts{})
	hang(t, p)
	// Stored without Add: a connect under the tiny timeout could fail on
	// a loaded machine.
	reg := store.MCPServer{ID: "r1", OrgID: org, Name: "a", URL: p.URL, Type: store.MCPGeneral, Enabled: true, CreatedAt: t0, UpdatedAt: t0}
	if err := e.st.CreateMCPServer(context.Background(), reg, 0); err != nil {
		t.Fatal(err)
	}

	ts := builtins().With(e.overlay(builtins()).Overlay).Select(facts("a/*"))
	wantContains(t, "exclusion", excluded(ts, "a/*"), "MCP server unavailable: ", "no answer within 100ms")
	tried := len(p.requests())
	if tried > 1 {
		t.Errorf("the connect sent %d requests to the hanging server, want 1: %v", tried, p.requests())
	}

	// Within the cooldown the server is skipped without a request.
	e.clock.Advance(5*time.Minute - time.Second)
	ts = builtins().With(e.overlay(builtins()).Overlay).Select(facts("a/*"))
	wantContains(t, "exclusion", excluded(ts, "a/*"), "not retried before 09:05:00 after a failed connect (", "no answer within 100ms")
	if n := len(p.requests()); n != tried {
		t.Errorf("%d requests during the cooldown", n-tried)
	}
	// A call of a tool routed earlier is refused the same way.
	e.clock.Advance(time.Second - time.Nanosecond)
	if _, err := e.servers().call(context.Background(), e.list()[0], netguard.SelfHosted, "echo", nil); err == nil || !strings.Contains(err.Error(), "is unavailable: not retried before") {
		t.Errorf("call during the cooldown: %v", err)
	}
	if n := len(p.requests()); n != tried {
		t.Errorf("%d requests during the cooldown", n-tried)
	}

	// After it, one more try: a connect that times out again, not the
	// cooldown's skip.
	e.clock.Advance(time.Nanosecond)
	ts = builtins().With(e.overlay(builtins()).Overlay).Select(facts("a/*"))
	got := excluded(ts, "a/*")
	wantContains(t, "exclusion", got, "MCP server unavailable: no answer within 100ms")
	wantNotContains(t, "exclusion", got, "not retried")
}

func TestCooldownClearedByDisable(t *testing.T) {
	e := newEnv(t, nil)
	p := startPeer(t, "p", peerOpts{})
	addEcho(p.srv, "echo")
	e.add(Registration{Name: "a", URL: p.URL})
	p.setIntercept(func(w http.ResponseWriter, r *http.Request, _ rpcPeek) bool {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return true
	})
	ts := builtins().With(e.overlay(builtins()).Overlay).Select(facts("a/*"))
	wantContains(t, "exclusion", excluded(ts, "a/*"), "Service Unavailable")
	p.setIntercept(nil)
	// An admin who fixed the server disables and enables it to retry at once.
	for _, on := range []bool{false, true} {
		if err := e.regs.SetEnabled(context.Background(), org, "a", on); err != nil {
			t.Fatal(err)
		}
	}
	ts = builtins().With(e.overlay(builtins()).Overlay).Select(facts("a/*"))
	if _, ok := ts.Lookup("a__echo"); !ok {
		t.Errorf("echo not offered after re-enabling: %v", ts.Excluded())
	}
}

func TestCallTimeout(t *testing.T) {
	e := newEnv(t, func(c *testConfig) { c.Pool.Limits.CallTimeout = 100 * time.Millisecond })
	p := startPeer(t, "p", peerOpts{})
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	addRaw(p.srv, &mcp.Tool{Name: "slow"}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return &mcp.CallToolResult{}, nil
	})
	e.add(Registration{Name: "a", URL: p.URL})
	ts := builtins().With(e.overlay(builtins()).Overlay).Select(facts("a/*"))
	_, err := run(t, ts, "a__slow", `{}`)
	wantContains(t, "error", errString(err), "the MCP server a did not answer within 100ms")
	if got := ts.Tools()[1].Spec().Timeout; got <= 100*time.Millisecond {
		t.Errorf("tool timeout %v leaves dispatch no room above the call timeout", got)
	}
}

// TestDropMidStream: the connection is cut while the answer streams; the
// call fails and the next turn connects afresh.
func TestDropMidStream(t *testing.T) {
	e := newEnv(t, nil)
	p := startPeer(t, "p", peerOpts{})
	addEcho(p.srv, "echo")
	addEcho(p.srv, "drop")
	e.add(Registration{Name: "a", URL: p.URL})
	p.setIntercept(func(w http.ResponseWriter, r *http.Request, rpc rpcPeek) bool {
		if rpc.Params.Name != "drop" {
			return false
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fmt.Fprint(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"result\":{\"cont")
		w.(http.Flusher).Flush()
		c, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			c.Close()
		}
		return true
	})
	ts := builtins().With(e.overlay(builtins()).Overlay).Select(facts("a/*"))
	inits := p.rpcs("initialize")
	_, err := run(t, ts, "a__drop", `{"text":"x"}`)
	wantContains(t, "error", errString(err), "the MCP server a failed: ")

	ts = builtins().With(e.overlay(builtins()).Overlay).Select(facts("a/*"))
	if got := p.rpcs("initialize"); got != inits+1 {
		t.Errorf("%d new sessions after the drop, want 1", got-inits)
	}
	res, err := run(t, ts, "a__echo", `{"text":"again"}`)
	if err != nil || res.Content != "echo: again" {
		t.Errorf("call after the drop = %+v, %v", res, err)
	}
}

// TestDropBeforeAnswer: the connection is cut before any answer; the call
// fails and the next one works.
func TestDropBeforeAnswer(t *testing.T) {
	e := newEnv(t, nil)
	p := startPeer(t, "p", peerOpts{})
	addEcho(p.srv, "echo")
	e.add(Registration{Name: "a", URL: p.URL})
	var once sync.Once
	p.setIntercept(func(w http.ResponseWriter, r *http.Request, rpc rpcPeek) bool {
		dropped := false
		if rpc.Method == "tools/call" {
			once.Do(func() {
				if c, _, err := http.NewResponseController(w).Hijack(); err == nil {
					c.Close()
					dropped = true
				}
			})
		}
		return dropped
	})
	ts := builtins().With(e.overlay(builtins()).Overlay).Select(facts("a/*"))
	_, err := run(t, ts, "a__echo", `{"text":"lost"}`)
	wantContains(t, "error", errString(err), "the MCP server a failed: ", "EOF")
	ts = builtins().With(e.overlay(builtins()).Overlay).Select(facts("a/*"))
	res, err := run(t, ts, "a__echo", `{"text":"again"}`)
	if err != nil || res.Content != "echo: again" {
		t.Errorf("call after the drop = %+v, %v", res, err)
	}
}

func TestMalformedResult(t *testing.T) {
	e := newEnv(t, nil)
	p := startPeer(t, "p", peerOpts{})
	addEcho(p.srv, "echo")
	addEcho(p.srv, "bad")
	e.add(Registration{Name: "a", URL: p.URL})
	p.setIntercept(func(w http.ResponseWriter, r *http.Request, rpc rpcPeek) bool {
		if rpc.Params.Name != "bad" {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"jsonrpc": "2.0", "result": garbage`))
		return true
	})
	ts := builtins().With(e.overlay(builtins()).Overlay).Select(facts("a/*"))
	inits := p.rpcs("initialize")
	_, err := run(t, ts, "a__bad", `{"text":"x"}`)
	wantContains(t, "error", errString(err), "the MCP server a failed: ", "failed to decode response")

	ts = builtins().With(e.overlay(builtins()).Overlay).Select(facts("a/*"))
	if got := p.rpcs("initialize"); got != inits+1 {
		t.Errorf("%d new sessions after the malformed answer, want 1", got-inits)
	}
	res, err := run(t, ts, "a__echo", `{"text":"again"}`)
	if err != nil || res.Content != "echo: again" {
		t.Errorf("call after the malformed answer = %+v, %v", res, err)
	}
}

func TestMalformedServer(t *testing.T) {
	e := newEnv(t, nil)
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte("<html>not MCP</html>"))
	}))
	defer garbage.Close()
	_, err := e.regs.Add(context.Background(), org, e.mode, Registration{Name: "a", URL: garbage.URL})
	msg := refusal(t, err, "could not connect to "+garbage.URL)
	wantContains(t, "refusal", msg, "streamable HTTP: ", "failed to decode response", "SSE: ", "malformed")
}

// TestJSONRPCErrorKeepsConnection: a call the server answers with a
// JSON-RPC error is the server's answer; the session stays.
func TestJSONRPCErrorKeepsConnection(t *testing.T) {
	e := newEnv(t, nil)
	p := startPeer(t, "p", peerOpts{})
	addEcho(p.srv, "echo")
	e.add(Registration{Name: "a", URL: p.URL})
	ts := builtins().With(e.overlay(builtins()).Overlay).Select(facts("a/*"))
	inits := p.rpcs("initialize")
	if _, err := e.servers().call(context.Background(), e.list()[0], netguard.SelfHosted, "no_such_tool", nil); err == nil {
		t.Fatal("a call of an unknown tool succeeded")
	}
	res, err := run(t, ts, "a__echo", `{"text":"same session"}`)
	if err != nil || res.Content != "echo: same session" {
		t.Errorf("call = %+v, %v", res, err)
	}
	if got := p.rpcs("initialize"); got != inits {
		t.Errorf("%d new sessions after a JSON-RPC error, want 0", got-inits)
	}
}

func TestIdleSweep(t *testing.T) {
	e := newEnv(t, func(c *testConfig) { c.Pool.Limits.IdleClose = 10 * time.Minute })
	p := startPeer(t, "p", peerOpts{})
	addEcho(p.srv, "echo")
	e.add(Registration{Name: "a", URL: p.URL})
	ts := builtins().With(e.overlay(builtins()).Overlay).Select(facts("a/*"))
	deletes := p.count(isDelete)

	e.clock.Advance(9 * time.Minute)
	if _, err := run(t, ts, "a__echo", `{"text":"keeps it warm"}`); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(9 * time.Minute) // 18 minutes after connecting, 9 after the call
	if n := e.pool.sweep(); n != 0 {
		t.Errorf("sweep closed %d connections used 9 minutes ago", n)
	}
	e.clock.Advance(time.Minute + time.Nanosecond)
	if n := e.pool.sweep(); n != 1 {
		t.Errorf("sweep closed %d connections idle past the limit, want 1", n)
	}
	if got := p.count(isDelete); got != deletes+1 {
		t.Errorf("the server saw %d session ends, want 1", got-deletes)
	}
	if e.pool.live() != 0 {
		t.Errorf("%d live connections after the sweep", e.pool.live())
	}
	inits := p.rpcs("initialize")
	e.overlay(builtins())
	if got := p.rpcs("initialize"); got != inits+1 {
		t.Errorf("%d new sessions after the sweep, want 1", got-inits)
	}
}

// TestConcurrentOverlaysShareOneConnect: turns starting together for one
// organisation open one session per server.
func TestConcurrentOverlaysShareOneConnect(t *testing.T) {
	e := newEnv(t, nil)
	p := startPeer(t, "p", peerOpts{})
	addEcho(p.srv, "echo")
	e.add(Registration{Name: "a", URL: p.URL})
	inits := p.rpcs("initialize")
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			tr, err := NewToolset(context.Background(), e.regs, e.pool, org, e.mode, builtins())
			if err != nil || len(tr.Overlay.Tools) != 1 {
				t.Errorf("NewToolset = %+v, %v", tr, err)
			}
		})
	}
	wg.Wait()
	if got := p.rpcs("initialize"); got != inits+1 {
		t.Errorf("8 concurrent turns opened %d sessions, want 1", got-inits)
	}
}

// TestRotatedTokenReplacesConnection: re-sealing a token (key rotation)
// changes the pool key; the connection made with the old one is closed,
// not left open beside the new one.
func TestRotatedTokenReplacesConnection(t *testing.T) {
	e := newEnv(t, nil)
	p := startPeer(t, "p", peerOpts{})
	addEcho(p.srv, "echo")
	e.add(Registration{Name: "a", URL: p.URL, Token: secretToken})
	e.overlay(builtins())
	deletes := p.count(isDelete)
	n, err := e.st.RewrapMCPTokens(context.Background(), func(s store.MCPServer) (string, error) {
		return e.cfg.Registrations.Keyring.Seal([]byte(secretToken), TokenAAD(s.OrgID, s.ID))
	})
	if err != nil || n != 1 {
		t.Fatalf("rewrap: %d, %v", n, err)
	}
	e.overlay(builtins())
	if got := p.count(isDelete); got != deletes+1 {
		t.Errorf("the old session was ended %d times, want 1", got-deletes)
	}
	if e.pool.live() != 1 {
		t.Errorf("%d live connections, want 1", e.pool.live())
	}
}

// callCapture is a transport that keeps the context of every tools/call
// request it sends.
type callCapture struct {
	base http.RoundTripper
	mu   sync.Mutex
	ctxs []context.Context
}

func (c *callCapture) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && req.Body != nil {
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"tools/call"`)) {
			c.mu.Lock()
			c.ctxs = append(c.ctxs, req.Context())
			c.mu.Unlock()
		}
	}
	return c.base.RoundTrip(req)
}

// TestAnsweredCallOutlivesItsContext: the caller's context may end as soon
// as a call is answered (the call timeout's and dispatch's deferred
// cancels do) without cancelling the call's HTTP request, whose stream the
// SDK is still reading to its end: cancelling it would drop the TCP
// connection, and the next call would dial a new one. The request's
// context ends once that stream was read and closed.
func TestAnsweredCallOutlivesItsContext(t *testing.T) {
	p := startPeer(t, "p", peerOpts{})
	addEcho(p.srv, "echo")
	capture := &callCapture{base: http.DefaultTransport}
	d := &dialer{guarded: &http.Client{Transport: capture}, logger: slog.New(slog.DiscardHandler), now: time.Now, version: "test", maxBytes: 1 << 20}
	conn, err := d.dial(context.Background(), Target{URL: p.URL}, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithCancel(context.Background())
	res, err := conn.Call(ctx, "echo", map[string]any{"text": "x"})
	cancel()
	if err != nil || res.IsError {
		t.Fatalf("call = %+v, %v", res, err)
	}
	capture.mu.Lock()
	ctxs := capture.ctxs
	capture.mu.Unlock()
	if len(ctxs) != 1 {
		t.Fatalf("%d tools/call requests, want 1", len(ctxs))
	}
	<-ctxs[0].Done()
	if cause := context.Cause(ctxs[0]); !errors.Is(cause, errCallDone) {
		t.Errorf("the answered call's request ended with %v, want once its stream was read (%v)", cause, errCallDone)
	}
}

// TestDetach: a call's context ends with its parent while the call
// waits; once the call returned, not with its parent but when its last
// open response body closes (at once when none is open).
func TestDetach(t *testing.T) {
	parent, cancel := context.WithCancelCause(context.Background())
	waiting, release := detach(parent)
	defer release()
	none, releaseNone := detach(parent)
	releaseNone()
	reading, releaseReading := detach(parent)
	tailOf(reading).opened()
	releaseReading()
	stop := errors.New("turn ended")
	cancel(stop)
	<-waiting.Done()
	if got := context.Cause(waiting); got != stop {
		t.Errorf("waiting call: cause %v, want the parent's %v", got, stop)
	}
	if got := context.Cause(none); got != errCallDone {
		t.Errorf("returned call with no body open: cause %v, want %v", got, errCallDone)
	}
	if got := context.Cause(reading); got != nil {
		t.Fatalf("returned call with a body open ended (%v) before the body closed", got)
	}
	tailOf(reading).closed()
	if got := context.Cause(reading); got != errCallDone {
		t.Errorf("returned call whose body closed: cause %v, want %v", got, errCallDone)
	}
}
