package mcpserver

import (
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/quiverhq/quiver/netguard"
	"github.com/quiverhq/quiver/secret"
)

// DefaultSessionTimeout closes an HTTP session idle this long.
const DefaultSessionTimeout = 30 * time.Minute

// HTTPConfig configures the Streamable HTTP handler. The zero value serves
// loopback clients without a token.
type HTTPConfig struct {
	// Token, when set, is the bearer token every request must carry
	// ("Authorization: Bearer …"). Not set means no token is asked for.
	Token secret.Redacted
	// AllowedHosts are Host header values accepted besides the loopback
	// names (localhost, 127.0.0.1, [::1]) and the address the request
	// arrived at: host names or IP addresses, with a port to accept only
	// that port. Nil accepts no other host, which is what defeats DNS
	// rebinding: a hostile name resolving to this server is refused.
	AllowedHosts []string
	// AllowedOrigins are Origin header values (scheme://host[:port])
	// accepted besides the server's own origin. A request without Origin
	// (every non-browser client) is not checked. Nil accepts no other
	// origin. No CORS headers are sent.
	AllowedOrigins []string
	// SessionTimeout closes a session that made no request for this long;
	// zero means DefaultSessionTimeout.
	SessionTimeout time.Duration
	// Limits bound the connections RunHTTP serves (header and body read
	// time, idle keep-alive, header bytes; netguard.NewServer). Handler
	// ignores them. Zero fields take their defaults.
	Limits netguard.ServerLimits
}

// Validate reports the first malformed AllowedHosts or AllowedOrigins
// entry, or limit out of range.
func (c HTTPConfig) Validate() error {
	if err := c.Limits.Check("http"); err != nil {
		return err
	}
	for _, h := range c.AllowedHosts {
		if _, err := normalHost(h); err != nil {
			return err
		}
	}
	for _, o := range c.AllowedOrigins {
		if _, err := normalOrigin(o); err != nil {
			return err
		}
	}
	return nil
}

// Handler returns the Streamable HTTP handler of s, to be mounted at the
// endpoint path (conventionally /mcp). Every request passes, in order, the
// Host check and the Origin check (403 on failure) and, when a token is
// configured, the bearer check (401) before any MCP processing. Each session
// (Mcp-Session-Id) is its own conversation. Handler panics when cfg does not
// validate: check user input with Validate first.
func (s *Server) Handler(cfg HTTPConfig) http.Handler {
	g, err := newGuard(cfg, s.work)
	if err != nil {
		panic("mcpserver: " + err.Error())
	}
	if cfg.SessionTimeout <= 0 {
		cfg.SessionTimeout = DefaultSessionTimeout
	}
	g.next = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		Logger:         s.cfg.Logger,
		SessionTimeout: cfg.SessionTimeout,
		// The SDK's own check refuses a non-loopback Host on a loopback
		// listener; the guard's is a superset that also admits the
		// configured hosts (a reverse proxy on the same machine).
		DisableLocalhostProtection: true,
	})
	return g
}

// guard checks Host, Origin and the bearer token before next sees a request.
type guard struct {
	hosts   map[string]bool // normalised AllowedHosts
	origins map[string]bool // normalised AllowedOrigins
	token   secret.Redacted
	work    *inflight
	next    http.Handler
}

func newGuard(cfg HTTPConfig, work *inflight) (*guard, error) {
	g := &guard{hosts: map[string]bool{}, origins: map[string]bool{}, token: cfg.Token, work: work}
	for _, h := range cfg.AllowedHosts {
		n, err := normalHost(h)
		if err != nil {
			return nil, err
		}
		g.hosts[n] = true
	}
	for _, o := range cfg.AllowedOrigins {
		n, err := normalOrigin(o)
		if err != nil {
			return nil, err
		}
		g.origins[n] = true
	}
	return g, nil
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !g.hostAllowed(r.Host, local) {
		http.Error(w, "Forbidden: Host not allowed", http.StatusForbidden)
		return
	}
	if o := r.Header.Values("Origin"); len(o) > 0 && !g.originAllowed(o, r.Host) {
		http.Error(w, "Forbidden: Origin not allowed", http.StatusForbidden)
		return
	}
	if g.token.IsSet() {
		if code := g.authorize(r.Header.Get("Authorization")); code != "" {
			w.Header().Set("WWW-Authenticate", code)
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
	}
	// A POST carries requests and returns once they are answered: Shutdown
	// waits for it. A GET is a stream that only closing the session ends.
	if r.Method == http.MethodPost {
		if !g.work.add() {
			http.Error(w, "Service Unavailable: shutting down", http.StatusServiceUnavailable)
			return
		}
		defer g.work.done()
	}
	g.next.ServeHTTP(w, r)
}

// hostAllowed reports whether a Host header names this server: a loopback
// name or address, the address the request arrived at, or a configured host.
func (g *guard) hostAllowed(host string, local net.Addr) bool {
	host = strings.ToLower(host)
	name, port, err := net.SplitHostPort(host)
	if err != nil {
		name, port = strings.Trim(host, "[]"), ""
	}
	name = strings.TrimSuffix(name, ".")
	if name == "" || strings.ContainsAny(name, "/@?# ") || strings.Trim(port, "0123456789") != "" {
		return false
	}
	if name == "localhost" || g.hosts[name] || g.hosts[host] {
		return true
	}
	ip, err := netip.ParseAddr(name)
	if err != nil {
		return false
	}
	ip = ip.Unmap()
	if ip.IsLoopback() {
		return true
	}
	if local == nil {
		return false
	}
	la, err := netip.ParseAddrPort(local.String())
	return err == nil && la.Addr().Unmap() == ip
}

// originAllowed reports whether the request's one Origin is the server's own
// (its host and port are the Host the request was sent to, which has passed
// the Host check) or a configured one. "null" and malformed origins fail.
func (g *guard) originAllowed(values []string, host string) bool {
	if len(values) != 1 {
		return false
	}
	o, err := normalOrigin(values[0])
	if err != nil {
		return false
	}
	if g.origins[o] {
		return true
	}
	u, _ := url.Parse(o) // normalOrigin parsed it already
	return u.Host == stripDefaultPort(u.Scheme, strings.ToLower(host))
}

// authorize returns "" when header carries the token, else the
// WWW-Authenticate challenge to answer with.
func (g *guard) authorize(header string) string {
	scheme, tok, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "Bearer"
	}
	if subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(g.token.Reveal())) != 1 {
		return `Bearer error="invalid_token"`
	}
	return ""
}

// normalHost checks an AllowedHosts entry and returns it lower-cased, with a
// bracketed IPv6 address unbracketed when no port is given.
func normalHost(h string) (string, error) {
	n := strings.ToLower(strings.TrimSpace(h))
	if n == "" || strings.ContainsAny(n, "/@?# ") {
		return "", fmt.Errorf("allowed host %q: give a host name or address, optionally with :port", h)
	}
	if name, port, err := net.SplitHostPort(n); err == nil {
		if name == "" || port == "" {
			return "", fmt.Errorf("allowed host %q: empty host or port", h)
		}
		return n, nil
	}
	return strings.TrimSuffix(strings.Trim(n, "[]"), "."), nil
}

// normalOrigin checks an origin and returns it as scheme://host[:port],
// lower-cased and without the scheme's default port, as browsers send it.
func normalOrigin(o string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(o))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("origin %q: give scheme://host[:port] with scheme http or https", o)
	}
	scheme := strings.ToLower(u.Scheme)
	return scheme + "://" + stripDefaultPort(scheme, strings.ToLower(u.Host)), nil
}

func stripDefaultPort(scheme, host string) string {
	if (scheme == "http" && strings.HasSuffix(host, ":80")) || (scheme == "https" && strings.HasSuffix(host, ":443")) {
		return host[:strings.LastIndexByte(host, ':')]
	}
	return host
}
