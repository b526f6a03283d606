package mcpserver_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/quiverhq/quiver/mcpserver"
)

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// post sends an initialize request to h as if it arrived at local (the
// listener's address) with the given headers; it returns the status and the
// WWW-Authenticate challenge.
func post(h http.Handler, local, host string, header http.Header) (int, string) {
	r := httptest.NewRequest(http.MethodPost, "http://"+local+"/mcp", strings.NewReader(initialize))
	r.Host = host
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	for k, vs := range header {
		for _, v := range vs {
			r.Header.Add(k, v)
		}
	}
	addr, _ := net.ResolveTCPAddr("tcp", local)
	r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, addr))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code, w.Header().Get("WWW-Authenticate")
}

func origin(o ...string) http.Header { return http.Header{"Origin": o} }

// TestHostAndOrigin: a request names this server in Host (loopback, the
// address it arrived at, or a configured host) and, when it has an Origin,
// comes from the server's own origin or a configured one; anything else is
// refused with 403 before the MCP handler sees it.
func TestHostAndOrigin(t *testing.T) {
	h := newFixture(t).srv.Handler(mcpserver.HTTPConfig{
		AllowedHosts:   []string{"mcp.example.com", "Proxy.Example.com:8443"},
		AllowedOrigins: []string{"https://app.example.com:443"},
	})
	cases := []struct {
		name, local, host string
		header            http.Header
		want              int
	}{
		{"loopback address", "127.0.0.1:8080", "127.0.0.1:8080", nil, 200},
		{"localhost", "127.0.0.1:8080", "localhost:8080", nil, 200},
		{"IPv6 loopback", "[::1]:8080", "[::1]:8080", nil, 200},
		{"other loopback address", "127.0.0.1:8080", "127.0.0.2:8080", nil, 200},
		{"hostile name on loopback", "127.0.0.1:8080", "evil.example.com:8080", nil, 403},
		{"hostile name and origin (conformance)", "127.0.0.1:8080", "evil.example.com", origin("http://evil.example.com"), 403},
		{"localhost suffix", "127.0.0.1:8080", "localhost.evil.example.com", nil, 403},
		{"empty host", "127.0.0.1:8080", "", nil, 403},
		{"userinfo smuggled after the port", "127.0.0.1:8080", "127.0.0.1:8080@evil.example.com", nil, 403},
		{"address it arrived at", "10.1.2.3:8080", "10.1.2.3:8080", nil, 200},
		{"another address", "10.1.2.3:8080", "10.1.2.4:8080", nil, 403},
		{"name of the address", "10.1.2.3:8080", "host.lan:8080", nil, 403},
		{"configured host, any port", "127.0.0.1:8080", "MCP.example.com:9000", nil, 200},
		{"configured host with trailing dot", "127.0.0.1:8080", "mcp.example.com.", nil, 200},
		{"configured host:port", "127.0.0.1:8080", "proxy.example.com:8443", nil, 200},
		{"configured host, other port", "127.0.0.1:8080", "proxy.example.com:9000", nil, 403},
		{"same origin", "127.0.0.1:8080", "127.0.0.1:8080", origin("http://127.0.0.1:8080"), 200},
		{"same origin over https", "127.0.0.1:8080", "localhost:8080", origin("https://localhost:8080"), 200},
		{"same origin, default port", "10.1.2.3:80", "10.1.2.3", origin("http://10.1.2.3"), 200},
		{"local page on another port", "127.0.0.1:8080", "127.0.0.1:8080", origin("http://127.0.0.1:3000"), 403},
		{"hostile origin", "127.0.0.1:8080", "127.0.0.1:8080", origin("https://evil.example.com"), 403},
		{"null origin", "127.0.0.1:8080", "127.0.0.1:8080", origin("null"), 403},
		{"two origins", "127.0.0.1:8080", "127.0.0.1:8080", origin("http://127.0.0.1:8080", "https://evil.example.com"), 403},
		{"configured origin", "127.0.0.1:8080", "127.0.0.1:8080", origin("https://APP.example.com"), 200},
		{"configured origin, other scheme", "127.0.0.1:8080", "127.0.0.1:8080", origin("http://app.example.com"), 403},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got, _ := post(h, c.local, c.host, c.header); got != c.want {
				t.Errorf("status = %d, want %d", got, c.want)
			}
		})
	}
}

// TestBearer: with a token configured, a request without it, or with
// another, gets 401 and a Bearer challenge; Host and Origin are checked
// first.
func TestBearer(t *testing.T) {
	h := newFixture(t).srv.Handler(mcpserver.HTTPConfig{Token: "s3cret-token"})
	type result struct {
		Status    int
		Challenge string
	}
	cases := []struct {
		name, host, auth string
		want             result
	}{
		{"no header", "127.0.0.1", "", result{401, "Bearer"}},
		{"other scheme", "127.0.0.1", "Basic czNjcmV0LXRva2Vu", result{401, "Bearer"}},
		{"wrong token", "127.0.0.1", "Bearer s3cret-tokem", result{401, `Bearer error="invalid_token"`}},
		{"prefix of the token", "127.0.0.1", "Bearer s3cret", result{401, `Bearer error="invalid_token"`}},
		{"token", "127.0.0.1", "Bearer s3cret-token", result{200, ""}},
		{"scheme in lower case", "127.0.0.1", "bearer s3cret-token", result{200, ""}},
		{"token, hostile host", "evil.example.com", "Bearer s3cret-token", result{403, ""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hdr := http.Header{}
			if c.auth != "" {
				hdr.Set("Authorization", c.auth)
			}
			status, challenge := post(h, "127.0.0.1:8080", c.host, hdr)
			if diff := cmp.Diff(c.want, result{status, challenge}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestBearerClient: the SDK client connects and calls with the token, and
// cannot connect without it.
func TestBearerClient(t *testing.T) {
	f := newFixture(t)
	ts := f.httpServer(t, mcpserver.HTTPConfig{Token: "s3cret-token"})
	if text, isErr := callText(t, httpClient(t, ts, "s3cret-token"), "calculate", map[string]any{"expression": "2+2"}); isErr || text != "4" {
		t.Errorf("call = %q (isError %v), want 4", text, isErr)
	}
	_, err := mcp.NewClient(testClient, nil).Connect(context.Background(), httpTransport(ts, ""), nil)
	if err == nil || !strings.Contains(err.Error(), "Unauthorized") {
		t.Errorf("connect without token: %v, want Unauthorized", err)
	}
}

// TestRefusedAfterShutdown: once Shutdown has begun, a new request gets 503.
func TestRefusedAfterShutdown(t *testing.T) {
	f := newFixture(t)
	h := f.srv.Handler(mcpserver.HTTPConfig{})
	if err := f.srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, _ := post(h, "127.0.0.1:8080", "127.0.0.1:8080", nil); got != http.StatusServiceUnavailable {
		t.Errorf("status = %d, want 503", got)
	}
}

func TestHTTPConfigValidate(t *testing.T) {
	cases := []struct {
		name string
		cfg  mcpserver.HTTPConfig
		want string // "" for valid
	}{
		{"empty", mcpserver.HTTPConfig{}, ""},
		{"hosts and origins", mcpserver.HTTPConfig{AllowedHosts: []string{"a.example", "b.example:8443", "[::1]:80", "10.0.0.1"},
			AllowedOrigins: []string{"https://a.example", "http://b.example:8080/"}}, ""},
		{"host with scheme", mcpserver.HTTPConfig{AllowedHosts: []string{"https://a.example"}}, `allowed host "https://a.example"`},
		{"empty host", mcpserver.HTTPConfig{AllowedHosts: []string{" "}}, `allowed host " "`},
		{"host with empty port", mcpserver.HTTPConfig{AllowedHosts: []string{"a.example:"}}, `allowed host "a.example:"`},
		{"origin without scheme", mcpserver.HTTPConfig{AllowedOrigins: []string{"a.example"}}, `origin "a.example"`},
		{"origin with path", mcpserver.HTTPConfig{AllowedOrigins: []string{"https://a.example/app"}}, `origin "https://a.example/app"`},
		{"null origin", mcpserver.HTTPConfig{AllowedOrigins: []string{"null"}}, `origin "null"`},
		{"ftp origin", mcpserver.HTTPConfig{AllowedOrigins: []string{"ftp://a.example"}}, `origin "ftp://a.example"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.cfg.Validate()
			switch {
			case c.want == "" && err != nil:
				t.Errorf("Validate = %v, want nil", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("Validate = %v, want an error naming %s", err, c.want)
			}
		})
	}
}
