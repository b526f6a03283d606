// Package netguard is the one HTTP client for every request whose
// destination a model or a user chose (fetch_url, user-configured search
// engines, MCP servers, OAuth discovery).
//
// The address policy is enforced at dial time on every connection: the
// dialer resolves the host once, refuses the connection if any answer is
// refused, and dials the checked IP itself, so DNS rebinding and redirects
// cannot reach an address the policy never saw. A net.Dialer Control hook
// re-checks the address right before connect(2). Environment proxies are
// ignored, only http and https are spoken, URLs with credentials are
// refused, redirects are capped and re-checked, and responses are bounded
// in time and bytes.
//
// [CheckListenHost] is the matching rule for the other direction: where
// Quiver's own servers may listen (loopback unless made public).
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"time"
)

// Defaults applied to zero Config fields.
const (
	DefaultTimeout      = 30 * time.Second
	DefaultMaxBytes     = 10 << 20
	DefaultMaxRedirects = 5
	DefaultUserAgent    = "Quiver"
)

// Resolver looks up the addresses of a host. *net.Resolver satisfies it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Config configures a Client. The zero value is the Public policy with the
// defaults below.
type Config struct {
	// Mode is Public when empty. Any value other than SelfHosted is Public.
	Mode Mode
	// Timeout bounds a whole request, body read included. Zero means
	// DefaultTimeout (30 s); negative means no overall bound, for long-lived
	// streams (MCP) whose callers bound each exchange with a context.
	Timeout time.Duration
	// MaxBytes caps a response body; reading past it fails with ErrTooLarge.
	// Zero or negative means DefaultMaxBytes (10 MiB).
	MaxBytes int64
	// MaxRedirects is how many redirects are followed, each re-checked. Zero
	// means DefaultMaxRedirects (5), which is also the ceiling: larger values
	// are lowered to 5. Negative means redirects are not followed and the 3xx
	// response is returned as is (MCP transports).
	MaxRedirects int
	// Resolver resolves host names at dial time. Nil means net.DefaultResolver.
	Resolver Resolver
	// UserAgent is sent when a request sets none. Empty means DefaultUserAgent.
	UserAgent string
	// Ports are destination ports allowed in Public mode besides 80 and 443.
	// SelfHosted mode allows any port. Port 0 is always refused.
	Ports []uint16
	// Allow lists extra prefixes to allow (for example an on-premises range
	// in Public mode). It never overrides the metadata or IPv6-transition
	// blocks.
	Allow []netip.Prefix
}

// Client is the guarded HTTP client. It is safe for concurrent use.
type Client struct {
	cfg      Config
	pol      *policy
	resolver Resolver
	dialIP   dialFunc
	httpc    *http.Client
}

// dialFunc connects to an address the policy already allowed.
type dialFunc func(ctx context.Context, network string, ap netip.AddrPort) (net.Conn, error)

// New returns a Client for cfg with zero fields set to their defaults.
func New(cfg Config) *Client {
	return newClient(cfg, nil)
}

// newClient lets tests replace the final dial of a checked address.
func newClient(cfg Config, dial dialFunc) *Client {
	cfg = withDefaults(cfg)
	c := &Client{cfg: cfg, resolver: cfg.Resolver}
	c.pol = newPolicy(cfg.Mode, cfg.Ports, cfg.Allow)
	if c.resolver == nil {
		c.resolver = net.DefaultResolver
	}
	c.dialIP = dial
	if c.dialIP == nil {
		c.dialIP = c.netDial
	}
	c.httpc = &http.Client{
		Transport:     &guardTransport{c: c, base: c.transport()},
		CheckRedirect: c.checkRedirect,
		Timeout:       cfg.Timeout,
	}
	return c
}

func withDefaults(cfg Config) Config {
	if cfg.Mode != SelfHosted {
		cfg.Mode = Public
	}
	switch {
	case cfg.Timeout == 0:
		cfg.Timeout = DefaultTimeout
	case cfg.Timeout < 0:
		cfg.Timeout = 0 // http.Client: no timeout
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.MaxRedirects == 0 || cfg.MaxRedirects > DefaultMaxRedirects {
		cfg.MaxRedirects = DefaultMaxRedirects
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = DefaultUserAgent
	}
	return cfg
}

// transport never uses an environment proxy: with a proxy the dialer would
// only ever see the proxy's address.
func (c *Client) transport() *http.Transport {
	handshake := 10 * time.Second
	if c.cfg.Timeout > 0 {
		handshake = min(handshake, c.cfg.Timeout)
	}
	return &http.Transport{
		Proxy:                  nil,
		DialContext:            c.dialContext,
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    handshake,
		ResponseHeaderTimeout:  c.cfg.Timeout,
		MaxIdleConns:           64,
		IdleConnTimeout:        90 * time.Second,
		MaxResponseHeaderBytes: 1 << 20,
	}
}

// HTTP returns the guarded *http.Client for libraries that need one. Errors
// from it match ErrBlocked with errors.Is but arrive wrapped in *url.Error,
// whose message includes the URL; prefer Do where the error reaches a model.
func (c *Client) HTTP() *http.Client { return c.httpc }

// Do sends req through the guarded client. A refusal is returned as the
// *BlockedError itself; other errors name the method and host only, never
// the path, query or credentials. The caller closes the body, whose reads
// fail with ErrTooLarge past Config.MaxBytes.
func (c *Client) Do(req *http.Request) (*http.Response, error) {
	resp, err := c.httpc.Do(req)
	if err == nil {
		return resp, nil
	}
	if be, ok := errors.AsType[*BlockedError](err); ok {
		return nil, be
	}
	if ue, ok := errors.AsType[*url.Error](err); ok {
		err = ue.Err
	}
	return nil, fmt.Errorf("netguard: %s %s: %w", req.Method, safeHost(req.URL.Hostname()), err)
}

// CheckURL reports whether raw may be requested, for validating a URL before
// storing it. Scheme, credentials, port and literal addresses (in any
// spelling) are judged without DNS; a host name is then resolved with ctx
// and refused if any answer is. A failed look-up is not a refusal: the dial
// check decides later. Every refusal matches ErrBlocked.
func (c *Client) CheckURL(ctx context.Context, raw string) error {
	u, port, err := parseURL(raw)
	if err != nil {
		return err
	}
	host := u.Hostname()
	if err := c.pol.checkPort(safeHost(host), port); err != nil {
		return err
	}
	t, err := parseHost(host)
	if err != nil {
		return err
	}
	if t.ip.IsValid() {
		return c.pol.checkAddr(safeHost(host), t.ip)
	}
	if err := c.pol.checkName(t.name); err != nil {
		return err
	}
	ips, err := c.resolver.LookupNetIP(ctx, "ip", t.name+".")
	if err != nil {
		return nil
	}
	return c.checkAll(t.name, ips)
}

func (c *Client) checkAll(host string, ips []netip.Addr) error {
	for _, ip := range ips {
		if err := c.pol.checkAddr(host, ip); err != nil {
			return err
		}
	}
	return nil
}

// checkRedirect caps redirects and refuses targets the policy refuses
// without DNS; the dialer checks the address of each one again.
func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	if c.cfg.MaxRedirects < 0 {
		return http.ErrUseLastResponse
	}
	if len(via) > c.cfg.MaxRedirects {
		return ErrTooManyRedirects
	}
	return c.checkRequestURL(req.URL)
}

// checkRequestURL applies the syntax part of the policy to a request URL.
func (c *Client) checkRequestURL(u *url.URL) error {
	if u == nil {
		return blocked("", "malformed")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return blocked(safeHost(u.Hostname()), "scheme")
	}
	if u.User != nil {
		return blocked(safeHost(u.Hostname()), "userinfo")
	}
	if u.Hostname() == "" {
		return blocked("", "no host")
	}
	return nil
}
