package mcpserver

import (
	"net"
	"net/netip"
	"strings"
	"testing"
)

// FuzzGuard: whatever Host and Origin a client sends, an accepted Host names
// a loopback address, the address the request arrived at or a configured
// host, and an accepted Origin is the server's own or a configured one.
func FuzzGuard(f *testing.F) {
	for _, s := range [][2]string{
		{"127.0.0.1:8080", "http://127.0.0.1:8080"},
		{"localhost", ""},
		{"[::1]:80", "http://[::1]"},
		{"::1", "null"},
		{"evil.example.com", "http://evil.example.com"},
		{"localhost.evil.example.com:80", "http://localhost.evil.example.com"},
		{"mcp.example.com.", "https://app.example.com"},
		{"proxy.example.com:8443", "https://proxy.example.com:8443"},
		{"10.1.2.3", "http://10.1.2.3:80"},
		{"[::ffff:127.0.0.1]:1", "http://user@127.0.0.1"},
		{"127.0.0.1:8080@evil.example.com", "http://127.0.0.1:8080/path"},
	} {
		f.Add(s[0], s[1])
	}
	g, err := newGuard(HTTPConfig{
		AllowedHosts:   []string{"mcp.example.com", "proxy.example.com:8443"},
		AllowedOrigins: []string{"https://app.example.com"},
	}, newInflight())
	if err != nil {
		f.Fatal(err)
	}
	local := &net.TCPAddr{IP: net.ParseIP("10.1.2.3"), Port: 8080}
	f.Fuzz(func(t *testing.T, host, origin string) {
		if g.hostAllowed(host, local) && !namesServer(host) {
			t.Errorf("Host %q accepted", host)
		}
		if g.originAllowed([]string{origin}, host) && !ownOrConfigured(origin, host) {
			t.Errorf("Origin %q accepted for Host %q", origin, host)
		}
	})
}

// namesServer is the fuzz oracle for Host, written independently of
// hostAllowed.
func namesServer(host string) bool {
	if strings.ContainsAny(host, "/@?# ") {
		return false
	}
	name := strings.ToLower(host)
	switch {
	case strings.HasPrefix(name, "["):
		name, _, _ = strings.Cut(name[1:], "]")
	case strings.Count(name, ":") == 1:
		name = name[:strings.IndexByte(name, ':')]
	}
	name = strings.TrimSuffix(name, ".")
	switch name {
	case "localhost", "mcp.example.com", "proxy.example.com", "10.1.2.3":
		return true
	}
	ip, err := netip.ParseAddr(name)
	return err == nil && (ip.Unmap().IsLoopback() || ip.Unmap() == netip.MustParseAddr("10.1.2.3"))
}

// ownOrConfigured is the fuzz oracle for Origin.
func ownOrConfigured(origin, host string) bool {
	o := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(origin)), "/")
	if o == "https://app.example.com" || o == "https://app.example.com:443" {
		return true
	}
	h := strings.ToLower(host)
	for _, scheme := range []string{"http://", "https://"} {
		for _, form := range []string{h, strings.TrimSuffix(h, ":80"), strings.TrimSuffix(h, ":443"), h + ":80", h + ":443"} {
			if o == scheme+form {
				return true
			}
		}
	}
	return false
}
