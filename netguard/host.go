package netguard

import (
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// target is a destination host after normalisation: exactly one of ip and
// name is set. name is lower-case ASCII without a trailing dot.
type target struct {
	ip   netip.Addr
	name string
}

// parseURL checks the parts of raw that need no DNS: http or https only, a
// host, no userinfo. It returns the URL and its port (the scheme default
// when none is written).
func parseURL(raw string) (*url.URL, uint16, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" {
		// url.Parse errors quote the whole URL; never pass them on.
		return nil, 0, blocked("", "malformed")
	}
	host := u.Hostname()
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, 0, blocked(safeHost(host), "scheme")
	}
	if u.User != nil {
		return nil, 0, blocked(safeHost(host), "userinfo")
	}
	if host == "" {
		return nil, 0, blocked("", "no host")
	}
	port, err := urlPort(u)
	if err != nil {
		return nil, 0, blocked(safeHost(host), "port")
	}
	return u, port, nil
}

func urlPort(u *url.URL) (uint16, error) {
	p := u.Port()
	if p == "" {
		if u.Scheme == "https" {
			return 443, nil
		}
		return 80, nil
	}
	return parsePort(p)
}

func parsePort(s string) (uint16, error) {
	n, err := strconv.ParseUint(s, 10, 16)
	return uint16(n), err
}

// parseHost normalises host the way net/http will dial it (IDNA mapping,
// so "①②⑦.⓪.⓪.①" is 127.0.0.1) and then the way a resolver might read it
// (WHATWG IPv4 forms: decimal, octal, hex, short), so that every spelling of
// an address is judged as that address. Anything ambiguous is refused.
func parseHost(host string) (target, error) {
	if strings.Contains(host, ":") {
		ip, err := netip.ParseAddr(host)
		if err != nil {
			return target{}, blocked("", "malformed")
		}
		return target{ip: ip}, nil
	}
	h, err := toASCII(host)
	if err != nil {
		return target{}, blocked("", "malformed")
	}
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if ip, err := netip.ParseAddr(h); err == nil {
		return target{ip: ip}, nil
	}
	if endsInNumber(h) {
		ip, ok := parseLegacyIPv4(h)
		if !ok {
			return target{}, blocked(safeHost(h), "numeric host")
		}
		return target{ip: ip}, nil
	}
	if !validName(h) {
		return target{}, blocked("", "malformed")
	}
	return target{name: h}, nil
}

// toASCII maps a host exactly as net/http does before dialling: IDNA
// (UTS #46 lookup profile) for non-ASCII hosts only.
func toASCII(host string) (string, error) {
	for i := 0; i < len(host); i++ {
		if host[i] >= utf8.RuneSelf {
			return idna.Lookup.ToASCII(host)
		}
	}
	return host, nil
}

// validName accepts LDH host names (underscores allowed, as DNS has them).
func validName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for label := range strings.SplitSeq(h, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return false
			}
		}
	}
	return true
}

// safeHost returns h for an error message when it is a plain host name or
// address, or "" when it could carry anything else.
//
// An IPv6 zone is free text, so it is dropped.
func safeHost(h string) string {
	h, _, _ = strings.Cut(h, "%")
	if len(h) > 253 {
		return ""
	}
	for _, r := range h {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
			strings.ContainsRune("-_.:", r)) {
			return ""
		}
	}
	return h
}

// endsInNumber follows the WHATWG URL standard: a host whose last label is
// a number is an IPv4 address, never a name.
func endsInNumber(h string) bool {
	labels := strings.Split(h, ".")
	last := labels[len(labels)-1]
	if last == "" {
		return false
	}
	if allDigits(last, 10) {
		return true
	}
	return len(last) >= 2 && last[0] == '0' && (last[1] == 'x' || last[1] == 'X') && allDigits(last[2:], 16)
}

// parseLegacyIPv4 parses the IPv4 forms inet_aton and browsers accept:
// one to four parts, each decimal, octal (leading 0) or hex (0x).
func parseLegacyIPv4(h string) (netip.Addr, bool) {
	parts := strings.Split(h, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var v uint64
	for i, part := range parts {
		n, ok := parseIPv4Number(part)
		last := i == len(parts)-1
		if !ok || (!last && n > 255) || (last && n >= 1<<(8*(5-len(parts)))) {
			return netip.Addr{}, false
		}
		if last {
			v += n
		} else {
			v += n << (8 * (3 - i))
		}
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

func parseIPv4Number(s string) (uint64, bool) {
	base := 10
	switch {
	case len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'):
		s, base = s[2:], 16
		if s == "" {
			return 0, true
		}
	case len(s) >= 2 && s[0] == '0':
		s, base = s[1:], 8
	}
	if s == "" || len(s) > 32 || !allDigits(s, base) {
		return 0, false
	}
	n, err := strconv.ParseUint(s, base, 64)
	return n, err == nil
}

func allDigits(s string, base int) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		d := strings.IndexRune("0123456789abcdef", r|0x20)
		if r < '0' || d < 0 || d >= base {
			return false
		}
	}
	return true
}
