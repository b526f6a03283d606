package netguard

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// dialContext is the transport's only way out. It resolves the host once,
// refuses the connection if any answer is refused, and dials only the
// checked addresses, so no second look-up can answer differently.
func (c *Client) dialContext(ctx context.Context, network, address string) (net.Conn, error) {
	aps, err := c.resolveChecked(ctx, network, address)
	if err != nil {
		return nil, err
	}
	var firstErr error
	for _, ap := range aps {
		conn, err := c.dialIP(ctx, network, ap)
		if err == nil {
			return conn, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, firstErr
}

// resolveChecked turns "host:port" into addresses the policy allows, or a
// *BlockedError. Returned addresses are unmapped IPv4 or plain IPv6.
func (c *Client) resolveChecked(ctx context.Context, network, address string) ([]netip.AddrPort, error) {
	host, portStr, err := net.SplitHostPort(address)
	if err != nil {
		return nil, blocked("", "malformed")
	}
	ipNet, ok := ipNetworks[network]
	if !ok {
		return nil, blocked(safeHost(host), "network")
	}
	port, err := parsePort(portStr)
	if err != nil {
		return nil, blocked(safeHost(host), "port")
	}
	if err := c.pol.checkPort(safeHost(host), port); err != nil {
		return nil, err
	}
	ips, err := c.lookup(ctx, ipNet, host)
	if err != nil {
		return nil, err
	}
	aps := make([]netip.AddrPort, len(ips))
	for i, ip := range ips {
		aps[i] = netip.AddrPortFrom(ip.Unmap(), port)
	}
	return aps, nil
}

var ipNetworks = map[string]string{"tcp": "ip", "tcp4": "ip4", "tcp6": "ip6"}

// lookup normalises host, resolves it when it is a name (as a rooted name,
// so no search domain is appended) and checks every address.
func (c *Client) lookup(ctx context.Context, ipNet, host string) ([]netip.Addr, error) {
	t, err := parseHost(host)
	if err != nil {
		return nil, err
	}
	if t.ip.IsValid() {
		return []netip.Addr{t.ip}, c.pol.checkAddr(safeHost(host), t.ip)
	}
	if err := c.pol.checkName(t.name); err != nil {
		return nil, err
	}
	if isLocalhost(t.name) {
		// RFC 6761: localhost names are loopback, never asked of DNS
		// (checkName already refused them outside self-hosted mode).
		return loopbackFor(ipNet), nil
	}
	ips, err := c.resolver.LookupNetIP(ctx, ipNet, t.name+".")
	if err != nil {
		return nil, err
	}
	if len(ips) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: t.name, IsNotFound: true}
	}
	return ips, c.checkAll(t.name, ips)
}

// isLocalhost reports whether name is "localhost" or under it.
func isLocalhost(name string) bool {
	return name == "localhost" || strings.HasSuffix(name, ".localhost")
}

// loopbackFor returns the loopback addresses of an "ip", "ip4" or "ip6"
// look-up.
func loopbackFor(ipNet string) []netip.Addr {
	v4, v6 := netip.AddrFrom4([4]byte{127, 0, 0, 1}), netip.IPv6Loopback()
	switch ipNet {
	case "ip4":
		return []netip.Addr{v4}
	case "ip6":
		return []netip.Addr{v6}
	}
	return []netip.Addr{v4, v6}
}

// netDial is the real dial of a checked address. Its Control hook checks the
// address once more right before connect(2), as defence in depth.
func (c *Client) netDial(ctx context.Context, network string, ap netip.AddrPort) (net.Conn, error) {
	timeout := 10 * time.Second
	if c.cfg.Timeout > 0 {
		timeout = min(timeout, c.cfg.Timeout)
	}
	d := net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second, Control: c.control}
	return d.DialContext(ctx, network, ap.String())
}

// control is a net.Dialer Control hook enforcing the address policy.
func (c *Client) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return blocked("", "malformed")
	}
	if err := c.pol.checkPort(ap.Addr().String(), ap.Port()); err != nil {
		return err
	}
	return c.pol.checkAddr(ap.Addr().String(), ap.Addr())
}
