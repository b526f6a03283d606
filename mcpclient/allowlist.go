package mcpclient

import (
	"context"
	"fmt"

	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/store"
)

// CheckAgent checks an agent's allowlist against cat (the organisation's
// built-in catalog under its settings) and the organisation's registered
// MCP servers, enabled or not, then its switches against cat: the
// allowlist's warnings in allowlist order, then the switches'. It is the
// one check behind agent saves and "quiver agent check"; it reads the
// registrations once and writes nothing.
func CheckAgent(ctx context.Context, cat *registry.Catalog, st store.MCPServers, orgID string, allow []string, switches map[string]bool) ([]registry.Warning, error) {
	servers, err := RegisteredServers(ctx, st, orgID)
	if err != nil {
		return nil, err
	}
	return cat.CheckAgent(allow, servers, switches), nil
}

// RegisteredServers lists the organisation's MCP registrations, enabled or
// not, as registry.Catalog.CheckAllowlist reads them (server name to the
// tools of its last discovery): never nil, so that none registered is
// told apart from unknown.
func RegisteredServers(ctx context.Context, st store.MCPServers, orgID string) (registry.RegisteredServers, error) {
	list, err := st.ListMCPServers(ctx, orgID)
	if err != nil {
		return nil, fmt.Errorf("list MCP servers: %w", err)
	}
	out := make(registry.RegisteredServers, len(list))
	for _, s := range list {
		out[s.Name] = s.Tools
	}
	return out, nil
}
