package netguard

import (
	"errors"
	"fmt"
	"net/netip"
)

// ErrNotLoopback is wrapped by CheckListenHost's error for a host beyond
// this machine.
var ErrNotLoopback = errors.New("not a loopback address")

// CheckListenHost is the one rule for where Quiver's servers (quiver
// serve, quiver mcp serve --http) may listen: unless public, only on a
// host nothing beyond this machine reaches, "localhost" or a loopback IP
// literal, so that no one else reaches the tools by default. Any other
// host, or "" (every interface), gives an error wrapping ErrNotLoopback
// that names it (`"0.0.0.0" is not a loopback address`, "every interface
// is not a loopback address"). With public every host passes. host is the
// host part of a listen address, as net.SplitHostPort returns it.
func CheckListenHost(host string, public bool) error {
	if public || host == "localhost" {
		return nil
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.IsLoopback() {
		return nil
	}
	if host == "" {
		return fmt.Errorf("every interface is %w", ErrNotLoopback)
	}
	return fmt.Errorf("%q is %w", host, ErrNotLoopback)
}
