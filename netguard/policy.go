package netguard

import (
	"net/netip"

	"code.dny.dev/ssrf"
)

// Mode selects which destinations the guarded client may reach.
type Mode string

const (
	// Public (the default) allows only globally routable unicast addresses:
	// loopback, private, link-local, CGNAT, multicast, reserved, documentation,
	// unspecified and broadcast ranges are refused, as is everything
	// code.dny.dev/ssrf refuses.
	Public Mode = "public"
	// SelfHosted additionally allows private (RFC 1918, IPv6 ULA) and loopback
	// addresses, for deployments whose tools live on the local network.
	SelfHosted Mode = "self-hosted"
)

// ParseMode is the mode a configuration's network mode names (network.mode,
// an organisation's network_mode): SelfHosted for "self-hosted", Public for
// anything else, so that a missing or mistyped name never widens what is
// reachable.
func ParseMode(name string) Mode {
	if Mode(name) == SelfHosted {
		return SelfHosted
	}
	return Public
}

// metadataPrefixes are cloud instance-metadata endpoints, refused in every
// mode: they hand out credentials to whoever asks from inside the instance.
var metadataPrefixes = []netip.Prefix{
	netip.MustParsePrefix("169.254.0.0/16"),     // link-local: AWS, GCP, Azure, OCI IMDS
	netip.MustParsePrefix("100.100.100.200/32"), // Alibaba Cloud
	netip.MustParsePrefix("168.63.129.16/32"),   // Azure WireServer (publicly routable)
	netip.MustParsePrefix("fd00:ec2::254/128"),  // AWS IMDS over IPv6
}

// metadataNames resolve to metadata endpoints; refused in every mode before
// any look-up so that CheckURL catches them without DNS.
var metadataNames = map[string]bool{
	"metadata":                   true,
	"metadata.google.internal":   true,
	"metadata.goog":              true,
	"instance-data":              true,
	"instance-data.ec2.internal": true,
}

// transitionPrefixes embed an IPv4 address in IPv6 (NAT64, 6to4, Teredo).
// They are refused in every mode: a gateway would forward them to the
// embedded address, which the policy would otherwise never see.
var transitionPrefixes = []netip.Prefix{
	netip.MustParsePrefix("64:ff9b::/96"),   // NAT64 well-known prefix
	netip.MustParsePrefix("64:ff9b:1::/48"), // NAT64 local-use prefix
	netip.MustParsePrefix("2002::/16"),      // 6to4
	netip.MustParsePrefix("2001::/32"),      // Teredo
}

var v4Compatible = netip.MustParsePrefix("::/96")

// selfHostedAllow are the prefixes SelfHosted mode adds to the public policy.
var selfHostedAllow = []netip.Prefix{
	netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("172.16.0.0/12"),
	netip.MustParsePrefix("192.168.0.0/16"),
	netip.MustParsePrefix("127.0.0.0/8"),
	netip.MustParsePrefix("::1/128"),
	netip.MustParsePrefix("fc00::/7"),
}

// policy is the address decision shared by CheckURL, the dialer and its
// Control hook. It is immutable after newPolicy and safe for concurrent use.
type policy struct {
	mode  Mode
	guard *ssrf.Guardian
	ports map[uint16]bool // nil: any port
}

func newPolicy(mode Mode, ports []uint16, allow []netip.Prefix) *policy {
	p := &policy{mode: mode}
	if mode == SelfHosted {
		allow = append(append([]netip.Prefix(nil), selfHostedAllow...), allow...)
	} else {
		p.ports = map[uint16]bool{80: true, 443: true}
		for _, port := range ports {
			p.ports[port] = true
		}
	}
	var v4, v6 []netip.Prefix
	for _, pfx := range allow {
		if pfx.Addr().Is4() {
			v4 = append(v4, pfx)
		} else {
			v6 = append(v6, pfx)
		}
	}
	p.guard = ssrf.New(ssrf.WithAnyPort(),
		ssrf.WithAllowedV4Prefixes(v4...), ssrf.WithAllowedV6Prefixes(v6...))
	return p
}

// checkPort refuses port 0 and, in Public mode, ports not configured.
func (p *policy) checkPort(host string, port uint16) error {
	if port == 0 || (p.ports != nil && !p.ports[port]) {
		return blocked(host, "port")
	}
	return nil
}

// checkName refuses host names that are never allowed, before any look-up.
// name is lower case without a trailing dot.
func (p *policy) checkName(name string) error {
	if metadataNames[name] {
		return blocked(name, "metadata")
	}
	if p.mode != SelfHosted && isLocalhost(name) {
		return blocked(name, "loopback")
	}
	return nil
}

// checkAddr decides whether ip may be dialled. host names the destination in
// the error. IPv4-mapped addresses are judged as the IPv4 address they are.
func (p *policy) checkAddr(host string, ip netip.Addr) error {
	if reason := p.refusal(ip); reason != "" {
		return blocked(host, reason)
	}
	return nil
}

func (p *policy) refusal(ip netip.Addr) string {
	switch {
	case !ip.IsValid():
		return "invalid"
	case ip.Zone() != "":
		return "zone"
	}
	ip = ip.Unmap()
	if inAny(metadataPrefixes, ip) {
		return "metadata"
	}
	if inAny(transitionPrefixes, ip) || isV4Compatible(ip) {
		return "transition"
	}
	if p.guard.SafeAddr(ip) != nil {
		return "not public"
	}
	return ""
}

// isV4Compatible reports the deprecated ::a.b.c.d form; :: and ::1 are left
// to the mode policy.
func isV4Compatible(ip netip.Addr) bool {
	return ip.Is6() && v4Compatible.Contains(ip) &&
		ip != netip.IPv6Unspecified() && ip != netip.IPv6Loopback()
}

func inAny(prefixes []netip.Prefix, ip netip.Addr) bool {
	for _, pfx := range prefixes {
		if pfx.Contains(ip) {
			return true
		}
	}
	return false
}
