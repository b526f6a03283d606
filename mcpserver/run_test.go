package mcpserver_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quiverhq/quiver/mcpserver"
	"github.com/quiverhq/quiver/netguard"
)

func TestCheckListen(t *testing.T) {
	tests := []struct {
		addr     string
		public   bool
		want     string // "" accepts
		loopback bool   // the error wraps netguard.ErrNotLoopback
	}{
		{"127.0.0.1:0", false, "", false},
		{"127.0.0.2:8080", false, "", false},
		{"[::1]:8080", false, "", false},
		{"localhost:65535", false, "", false},
		{":8080", false, "every interface is not a loopback address", true},
		{"0.0.0.0:8080", false, `"0.0.0.0" is not a loopback address`, true},
		{"192.168.1.2:8080", false, `"192.168.1.2" is not a loopback address`, true},
		{"example.com:8080", false, `"example.com" is not a loopback address`, true},
		{":8080", true, "", false},
		{"example.com:8080", true, "", false},
		{"8080", false, `"8080" is not host:port`, false},
		{"8080", true, `"8080" is not host:port`, false},
		{"127.0.0.1:http", false, `port "http" is not a number from 0 to 65535`, false},
		{"127.0.0.1:65536", true, `port "65536" is not a number from 0 to 65535`, false},
		{"127.0.0.1:-1", false, `port "-1" is not a number from 0 to 65535`, false},
	}
	for _, tc := range tests {
		err := mcpserver.CheckListen(tc.addr, tc.public)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want || errors.Is(err, netguard.ErrNotLoopback) != tc.loopback {
			t.Errorf("CheckListen(%q, %t) = %v (not loopback: %t), want %q (%t)",
				tc.addr, tc.public, err, errors.Is(err, netguard.ErrNotLoopback), tc.want, tc.loopback)
		}
	}
}

// runStdio starts f.srv.RunStdio on pipes under ctx with grace and
// connects a client; the channel gets RunStdio's error.
func (f *fixture) runStdio(t *testing.T, ctx context.Context, grace time.Duration) (*mcp.ClientSession, io.Closer, <-chan error) {
	t.Helper()
	clientIn, serverOut := io.Pipe()
	serverIn, clientOut := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := f.srv.RunStdio(ctx, serverIn, serverOut, grace)
		serverOut.Close()
		done <- err
	}()
	cs, err := mcp.NewClient(testClient, nil).Connect(context.Background(),
		&mcp.IOTransport{Reader: clientIn, Writer: clientOut}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, clientOut, done
}

// callBlock calls the block tool in the background and returns its
// answer's text, or its error.
func callBlock(cs *mcp.ClientSession) <-chan error {
	got := make(chan error, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "block"})
		if err == nil && res.Content[0].(*mcp.TextContent).Text != "released" {
			err = errors.New("answered " + res.Content[0].(*mcp.TextContent).Text)
		}
		got <- err
	}()
	return got
}

// TestRunStdioEndsWithInput: RunStdio returns nil once the client closes
// its input, having served calls until then.
func TestRunStdioEndsWithInput(t *testing.T) {
	f := newFixture(t)
	cs, in, done := f.runStdio(t, context.Background(), time.Minute)
	if text, isErr := callText(t, cs, "whoami", nil); isErr || !strings.Contains(text, `"OrgID":"acme"`) {
		t.Errorf("whoami = %q (isError %t)", text, isErr)
	}
	in.Close()
	if err := <-done; err != nil {
		t.Errorf("RunStdio = %v", err)
	}
}

// TestRunStdioGraceful: when ctx ends, a call already running is answered
// before RunStdio returns nil, while a new call is refused.
func TestRunStdioGraceful(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	cs, _, done := f.runStdio(t, ctx, time.Minute)
	got := callBlock(cs)
	<-f.entered
	cancel()
	// Shutdown has begun once a new call is refused.
	for {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "whoami"})
		if err != nil && strings.Contains(err.Error(), "shutting down") {
			break
		}
	}
	close(f.release)
	if err := <-got; err != nil {
		t.Errorf("running call: %v, want it answered", err)
	}
	if err := <-done; err != nil {
		t.Errorf("RunStdio = %v", err)
	}
}

// TestRunStdioGraceOver: a call still running when the grace is over is
// cancelled, and that is logged.
func TestRunStdioGraceOver(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	cs, _, done := f.runStdio(t, ctx, 0)
	got := callBlock(cs)
	<-f.entered
	cancel()
	if err := <-done; err != nil {
		t.Errorf("RunStdio = %v", err)
	}
	if err := <-got; err == nil {
		t.Error("the running call was answered, want it cancelled")
	}
	if !strings.Contains(f.logs.String(), "calls cancelled at shutdown") {
		t.Errorf("logs = %q, want the cancellation", f.logs.String())
	}
}

// TestRunHTTP: RunHTTP serves the handler at EndpointPath on the
// listener; when ctx ends it answers the call already running, stops
// listening and returns nil.
func TestRunHTTP(t *testing.T) {
	f := newFixture(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.srv.RunHTTP(ctx, ln, mcpserver.HTTPConfig{Token: "tok"}, time.Minute) }()
	url := "http://" + ln.Addr().String() + mcpserver.EndpointPath
	hc := &http.Client{Transport: bearer{"tok", http.DefaultTransport}}
	cs := connect(t, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1, DisableStandaloneSSE: true})
	if text, isErr := callText(t, cs, "whoami", nil); isErr || !strings.Contains(text, `"UserID":"ana"`) {
		t.Errorf("whoami = %q (isError %t)", text, isErr)
	}
	if resp, err := http.Post(url, "application/json", strings.NewReader("{}")); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a request without the token: %v %v, want 401", resp, err)
	}
	// The connection limits are netguard.NewServer's (its own tests):
	// headers past 64 KiB are refused before the handler.
	big, _ := http.NewRequest("POST", url, strings.NewReader("{}"))
	big.Header.Set("X-Big", strings.Repeat("a", 100<<10))
	if resp, err := http.DefaultClient.Do(big); err != nil || resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("a request with 100 KiB of headers: %v %v, want 431", resp, err)
	}
	got := callBlock(cs)
	<-f.entered
	cancel()
	// The listener is closed once a new connection is refused.
	for {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			break
		}
		c.Close()
	}
	close(f.release)
	if err := <-got; err != nil {
		t.Errorf("running call: %v, want it answered", err)
	}
	if err := <-done; err != nil {
		t.Errorf("RunHTTP = %v", err)
	}
}

// TestRunHTTPServeError: a listener that fails is RunHTTP's error.
func TestRunHTTPServeError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	if err := newFixture(t).srv.RunHTTP(context.Background(), ln, mcpserver.HTTPConfig{}, time.Minute); !errors.Is(err, net.ErrClosed) {
		t.Errorf("RunHTTP on a closed listener = %v, want net.ErrClosed", err)
	}
}
