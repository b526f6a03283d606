package app

import (
	"context"
	"fmt"

	"github.com/quiverhq/quiver/mcpclient"
	"github.com/quiverhq/quiver/netguard"
	"github.com/quiverhq/quiver/registry"
)

// turnCatalog is the catalog one turn selects from: the built-ins plus the
// organisation's MCP servers' tools, connected under mode (the turn's
// network mode), minus the built-ins they replace. When the registrations
// cannot be read, the built-ins a replacement may stand in for are left
// out too (fail closed: the replacement cannot be ruled out, and a silent
// fallback would bypass it). A nil m gives base.
func turnCatalog(ctx context.Context, base *registry.Catalog, m *mcpRuntime, orgID string, mode netguard.Mode, env Env) *registry.Catalog {
	if m == nil {
		return base
	}
	t, err := mcpclient.NewToolset(ctx, m.regs, m.pool, orgID, mode, base)
	if err != nil {
		env.Logger.Error("mcp servers could not be read; web_search and fetch_url are left out", "org", orgID, "err", err)
		reason := "MCP servers could not be read, so a replacement cannot be ruled out"
		return base.With(registry.Overlay{Hide: map[string]string{"web_search": reason, "fetch_url": reason, "research_web": reason}})
	}
	for _, n := range t.Notices {
		if env.Stderr == nil {
			env.Logger.Warn("mcp: "+n, "org", orgID)
			continue
		}
		fmt.Fprintf(env.Stderr, "quiver: mcp: %s\n", n)
	}
	return base.With(t.Overlay)
}
