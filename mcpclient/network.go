package mcpclient

import (
	"context"
	"fmt"
	"math"
	"net/url"

	"github.com/quiverhq/quiver/netguard"
)

// network is the guarded client of one network mode and the dialer that
// connects through it.
type network struct {
	mode   netguard.Mode
	guard  *netguard.Client
	dialer *dialer
}

// newNetworks returns a network per mode the deployment allows: public
// always, self-hosted only when cfg.Network.Mode is self-hosted. Each is
// cfg.Network with its mode set and the pool's own redirect, time and
// size limits on top.
func newNetworks(cfg PoolConfig, limits Limits) map[netguard.Mode]*network {
	modes := []netguard.Mode{netguard.Public}
	if normalMode(cfg.Network.Mode) == netguard.SelfHosted {
		modes = append(modes, netguard.SelfHosted)
	}
	nets := make(map[netguard.Mode]*network, len(modes))
	for _, m := range modes {
		nc := cfg.Network
		nc.Mode = m
		nc.MaxRedirects = -1
		nc.Timeout = -1
		// The cap is applied per response or per event by the origin
		// transport; the guarded client's cap is per body, which for a
		// stream would be its whole life.
		nc.MaxBytes = math.MaxInt64 / 2
		g := netguard.New(nc)
		nets[m] = &network{mode: m, guard: g, dialer: &dialer{
			guarded: g.HTTP(), logger: cfg.Logger, now: cfg.Now, version: cfg.Version, maxBytes: limits.MaxResponseBytes,
		}}
	}
	return nets
}

// normalMode is netguard's reading of a mode: anything but SelfHosted is
// Public (netguard.ParseMode).
func normalMode(m netguard.Mode) netguard.Mode { return netguard.ParseMode(string(m)) }

// deployment returns the network of the deployment's own mode, used where
// there is no organisation (Probe, CallFixed).
func (p *Pool) deployment() *network {
	return p.nets[p.deploymentMode]
}

// network returns the network of mode, the mode a turn or a registration
// request was given. It fails, and never falls back to another mode, when
// the deployment does not allow mode (self-hosted in a public deployment).
func (p *Pool) network(mode netguard.Mode) (*network, error) {
	n, ok := p.nets[normalMode(mode)]
	if !ok {
		return nil, fmt.Errorf("network mode %s is not allowed by the deployment (network.mode %s)", normalMode(mode), p.deploymentMode)
	}
	return n, nil
}

// checkURL applies the network policy to a server URL: in public mode only
// HTTPS, and only public addresses.
func (n *network) checkURL(ctx context.Context, raw string) error {
	if err := n.checkScheme(raw); err != nil {
		return err
	}
	if err := n.guard.CheckURL(ctx, raw); err != nil {
		return refusef("url: %s", sanitise(err, raw, ""))
	}
	return nil
}

// checkScheme refuses a URL other than https in public mode. The guarded
// client speaks plain http too (for fetches), so the rule is applied here,
// on registration and again before every connect: a row stored while its
// organisation was self-hosted must not send its token in clear text.
func (n *network) checkScheme(raw string) error {
	if n.mode != netguard.SelfHosted {
		if u, err := url.Parse(raw); err == nil && u.Scheme != "https" {
			return refusef("url: public mode needs an https URL (local servers work only with network mode self-hosted)")
		}
	}
	return nil
}
