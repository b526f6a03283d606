package netguard

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
)

// stubResolver answers from a table. A name with several answers returns
// them in turn (the last one repeats), so a test can flip an answer between
// look-ups. It counts look-ups per name.
type stubResolver struct {
	mu      sync.Mutex
	answers map[string][][]netip.Addr
	calls   map[string]int
}

func newStub(answers map[string][]string) *stubResolver {
	r := &stubResolver{answers: map[string][][]netip.Addr{}, calls: map[string]int{}}
	for name, ips := range answers {
		r.add(name, ips...)
	}
	return r
}

// add appends one answer (a set of addresses) for name.
func (r *stubResolver) add(name string, ips ...string) {
	var set []netip.Addr
	for _, s := range ips {
		set = append(set, netip.MustParseAddr(s))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answers[name] = append(r.answers[name], set)
}

func (r *stubResolver) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	host = strings.TrimSuffix(host, ".")
	r.mu.Lock()
	defer r.mu.Unlock()
	sets, ok := r.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	n := r.calls[host]
	r.calls[host]++
	set := sets[min(n, len(sets)-1)]
	var out []netip.Addr
	for _, ip := range set {
		if network == "ip" || (network == "ip4") == ip.Unmap().Is4() {
			out = append(out, ip)
		}
	}
	return out, nil
}

func (r *stubResolver) lookups(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[name]
}

// publicAnswers are the stub's public names; every other name used by the
// tests is defined where it is used.
var publicAnswers = map[string][]string{
	"example.com":           {"93.184.215.14"},
	"v6.example.com":        {"2606:2800:21f:cb07:6820:80da:af6b:8b2c"},
	"xn--bcher-kva.example": {"93.184.215.15"},
}

// recDialer stands in for the network: it records every checked address
// the client asks to dial and connects to a loopback server instead (or
// fails when there is none), so no test ever sends a packet off the machine.
type recDialer struct {
	mu    sync.Mutex
	calls []netip.AddrPort
	to    string
}

var errNoNetwork = errors.New("test dialer: no network")

func (d *recDialer) dial(ctx context.Context, _ string, ap netip.AddrPort) (net.Conn, error) {
	d.mu.Lock()
	d.calls = append(d.calls, ap)
	to := d.to
	d.mu.Unlock()
	if to == "" {
		return nil, errNoNetwork
	}
	var nd net.Dialer
	return nd.DialContext(ctx, "tcp", to)
}

func (d *recDialer) dialled() []netip.AddrPort {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]netip.AddrPort(nil), d.calls...)
}

// testClient returns a Public client on the stub resolver whose dials of
// allowed addresses land on srv (which may be nil).
func testClient(t testing.TB, cfg Config, res *stubResolver, srv *httptest.Server) (*Client, *recDialer) {
	t.Helper()
	d := &recDialer{}
	if srv != nil {
		d.to = srv.Listener.Addr().String()
	}
	if res == nil {
		res = newStub(publicAnswers)
	}
	cfg.Resolver = res
	return newClient(cfg, d.dial), d
}

func okServer(t testing.TB) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func get(t testing.TB, c *Client, raw string) (*http.Response, error) {
	t.Helper()
	req, err := newGet(t, raw)
	if err != nil {
		return nil, err
	}
	return c.Do(req)
}

func newGet(t testing.TB, raw string) (*http.Request, error) {
	return http.NewRequestWithContext(t.Context(), http.MethodGet, raw, nil)
}
