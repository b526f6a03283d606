package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quiverhq/quiver/netguard"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/tool"
)

// Toolset is what an organisation's enabled servers give one turn.
type Toolset struct {
	// Overlay holds the servers' tools under their wire names, the
	// built-ins typed servers replace, and the tools and servers left out
	// with their reasons; the caller applies it to the built-in catalog.
	Overlay registry.Overlay
	// Notices are configuration problems for an admin, one line each.
	Notices []string
}

// NewToolset connects (or reuses the pool's connections to) orgID's
// enabled servers under mode, the network mode of the turn, and returns
// the tools the turn may be offered, routed against the built-in catalog
// base. mode decides everything about the turn's servers: the scheme
// check before a connect, the guarded client a connection goes through
// and the vetting of URL arguments; a mode the deployment does not allow
// leaves every server out as unavailable, never reached under another
// mode. The organisation counts as being in mode from then on: calls of
// an earlier toolset made under another mode are refused, and a pooled
// session of another mode is closed without a further request before its
// registration connects under mode.
//
// A server that cannot be reached costs at most the connect timeout once,
// then its cooldown skips it at once. A changed tool list is written to
// the stored snapshot in the background. The error is the store's, when
// the registrations cannot be read.
func NewToolset(ctx context.Context, regs *Registrations, pool *Pool, orgID string, mode netguard.Mode, base *registry.Catalog) (Toolset, error) {
	pool.observe(orgID, mode)
	recs, err := regs.enabled(ctx, orgID)
	if err != nil {
		return Toolset{}, fmt.Errorf("list enabled servers: %w", err)
	}
	states := make([]serverState, len(recs))
	for i, reg := range recs {
		states[i].reg = reg
	}
	s := servers{regs: regs, pool: pool}
	n := s.connectAll(ctx, mode, states)
	r := route(states, base, s.importer(n))
	return Toolset{Overlay: r.overlay, Notices: r.notices}, nil
}

// TurnCatalog is the catalog one turn selects from: base (the built-in
// catalog) with the toolset of orgID's enabled servers applied (see
// NewToolset: connected under mode, the turn's network mode), and that
// toolset's notices for an admin. When the registrations cannot be read,
// the failure is logged on the pool's logger and the built-ins a typed
// server may replace (web_search, fetch_url) and research_web, which uses
// them, are hidden with a reason: fail closed, since a replacement cannot
// be ruled out and a silent fallback to the built-in would bypass it.
func TurnCatalog(ctx context.Context, regs *Registrations, pool *Pool, orgID string, mode netguard.Mode, base *registry.Catalog) (*registry.Catalog, []string) {
	t, err := NewToolset(ctx, regs, pool, orgID, mode, base)
	if err != nil {
		pool.logger.Error("mcp servers could not be read; web_search and fetch_url are left out", "org", orgID, "err", err)
		return base.With(registry.Overlay{Hide: unreadHide()}), nil
	}
	return base.With(t.Overlay), t.Notices
}

// unreadHide hides every built-in a typed server may replace, and
// research_web, while the registrations cannot be read.
func unreadHide() map[string]string {
	const reason = "MCP servers could not be read, so a replacement cannot be ruled out"
	hide := map[string]string{researchTool: reason}
	for _, r := range replacements {
		hide[r.builtin] = reason
	}
	return hide
}

// servers is what a toolset's tools reach their servers through: the
// registrations (re-checked before each call, tokens unsealed) and the
// pool.
type servers struct {
	regs *Registrations
	pool *Pool
}

// connectAll connects every state's registration at once under mode, and
// writes the changed tool lists of those connected. It returns the mode's
// network; nil, with every state left unavailable, when the deployment
// does not allow mode or there is no state.
func (s servers) connectAll(ctx context.Context, mode netguard.Mode, states []serverState) *network {
	if len(states) == 0 {
		return nil
	}
	n, err := s.pool.network(mode)
	if err != nil {
		s.pool.logger.Warn("mcp servers left out", "org", states[0].reg.OrgID, "err", err)
		for i := range states {
			states[i].cause = err.Error()
		}
		return nil
	}
	var wg sync.WaitGroup
	for i := range states {
		wg.Go(func() {
			states[i].conn, states[i].cause = s.connect(ctx, n, states[i].reg)
			if states[i].conn != nil {
				states[i].tools = states[i].conn.Tools()
			}
		})
	}
	wg.Wait()
	for _, st := range states {
		if st.conn != nil {
			s.regs.refreshSnapshot(st.reg, distinctNames(st.tools))
		}
	}
	return n
}

// connect returns a registration's live connection under n, or why there
// is none. A connection the registration has under another mode is closed
// first: its organisation's mode changed.
func (s servers) connect(ctx context.Context, n *network, reg store.MCPServer) (*Conn, string) {
	key := regKey(reg, n.mode)
	s.pool.retire(key)
	if err := n.checkScheme(reg.URL); err != nil {
		return nil, err.Error()
	}
	token, err := s.regs.openToken(reg)
	if err != nil {
		return nil, err.Error()
	}
	redact := func(err error) string { return sanitise(err, reg.URL, token.Reveal()) }
	conn, err := s.pool.get(ctx, key, Target{URL: reg.URL, Token: token}, redact)
	if err != nil {
		var cd *cooldownError
		if errors.As(err, &cd) {
			return nil, cd.Error()
		}
		return nil, redact(err)
	}
	if conn.stale.Load() {
		rctx, cancel := context.WithTimeout(ctx, s.pool.limits.ConnectTimeout)
		defer cancel()
		if err := conn.refresh(rctx); err != nil {
			s.pool.logger.Warn("mcp tool list refresh failed", "server", reg.Name, "err", redact(err))
		}
	}
	return conn, ""
}

// regKey is a registration's key in the pool under a network mode.
func regKey(reg store.MCPServer, mode netguard.Mode) poolKey {
	return poolKey{id: reg.ID, url: reg.URL, sealedToken: reg.Token, mode: mode}
}

// importer builds the tool for one listed tool of a server routed under
// n: its URL arguments are vetted under n's mode, and its calls made
// under that mode. n is nil only when no server connected, and then the
// importer is never called.
func (s servers) importer(n *network) importer {
	return func(st serverState, t mcpTool, family string, macros []string, inherit tool.Spec) (*tool.Tool, error) {
		reg, name := st.reg, t.Name
		return importTool(t.Tool, importSpec{
			server: reg.Name, family: family, macros: macros,
			requires: inherit.Requires, fragments: inherit.Fragments,
			timeout:   s.pool.limits.CallTimeout + 5*time.Second,
			checkArgs: urlArgChecker(t.InputSchema, n.guard),
			call: func(ctx context.Context, args json.RawMessage) (*mcp.CallToolResult, error) {
				return s.call(ctx, reg, n.mode, name, args)
			},
		})
	}
}

// call runs one tool call on a registration's server under mode, the
// turn's, after checking that the registration is still the enabled one
// the turn routed (a server disabled or replaced meanwhile is refused,
// not silently used) and that no newer toolset or registration of its
// organisation was given another mode.
func (s servers) call(ctx context.Context, reg store.MCPServer, mode netguard.Mode, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	if err := s.regs.recheck(ctx, reg); err != nil {
		return nil, err
	}
	if now, same := s.pool.current(reg.OrgID, mode); !same {
		return nil, fmt.Errorf("the network mode of this organisation changed since this turn started (now %s); ask again", now)
	}
	n, err := s.pool.network(mode)
	if err != nil {
		return nil, fmt.Errorf("the MCP server %s is unavailable: %v", reg.Name, err)
	}
	conn, cause := s.connect(ctx, n, reg)
	if conn == nil {
		return nil, fmt.Errorf("the MCP server %s is unavailable: %s", reg.Name, cause)
	}
	limit := s.pool.limits.CallTimeout
	cctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var argv any = args
	if len(args) == 0 {
		argv = map[string]any{}
	}
	res, err := conn.Call(cctx, name, argv)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if cctx.Err() != nil {
			return nil, fmt.Errorf("the MCP server %s did not answer within %s", reg.Name, limit)
		}
		s.pool.forgetBroken(regKey(reg, n.mode), conn, err)
		token, _ := s.regs.openToken(reg)
		return nil, fmt.Errorf("the MCP server %s failed: %s", reg.Name, sanitise(err, reg.URL, token.Reveal()))
	}
	conn.touch(s.pool.now())
	return res, nil
}
