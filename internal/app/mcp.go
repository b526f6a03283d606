package app

import (
	"context"
	"fmt"

	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/mcpclient"
	"github.com/quiverhq/quiver/netguard"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/secret"
	"github.com/quiverhq/quiver/store"
)

// mcpRuntime is the MCP client side of a runtime: the organisations'
// registrations and the connection pool their toolsets and the
// deployment's MCP-served backends share.
type mcpRuntime struct {
	regs *mcpclient.Registrations
	pool *mcpclient.Pool
}

// newMCPRuntime builds the registrations over st and kr and the pool,
// from the configuration.
func newMCPRuntime(cfg config.Config, st store.MCPServers, kr *secret.Keyring, env Env) *mcpRuntime {
	pool := mcpPool(cfg, env)
	regs := mcpclient.NewRegistrations(mcpclient.RegistrationsConfig{
		Store: st, Keyring: kr, Pool: pool, Slots: cfg.MCP.Slots, Now: env.Now, Logger: env.Logger,
	})
	return &mcpRuntime{regs: regs, pool: pool}
}

// mcpPool builds the MCP connection pool from the configuration: the
// deployment's network mode is the widest an organisation may be given.
func mcpPool(cfg config.Config, env Env) *mcpclient.Pool {
	m := cfg.MCP
	return mcpclient.NewPool(mcpclient.PoolConfig{
		Network: netguard.Config{Mode: netguard.ParseMode(cfg.Network.Mode)},
		Limits: mcpclient.Limits{
			ConnectTimeout: m.ConnectTimeout.Std(), CallTimeout: m.CallTimeout.Std(),
			IdleClose: m.IdleClose.Std(), Cooldown: m.Cooldown.Std(), MaxResponseBytes: m.MaxResponseBytes,
		},
		Version: Version, Now: env.Now, Logger: env.Logger,
	})
}

// Run closes idle connections until ctx ends (see mcpclient.Pool.Run).
func (m *mcpRuntime) Run(ctx context.Context) { m.pool.Run(ctx) }

// Close closes every connection, then waits for the registrations'
// background snapshot writes.
func (m *mcpRuntime) Close() {
	m.pool.Close()
	m.regs.Close()
}

// turnCatalog is the catalog one turn selects from (see
// mcpclient.TurnCatalog: the built-ins with the organisation's MCP tools,
// fail closed when its servers cannot be read), its notices printed on
// stderr, or logged when there is none. A nil m gives base.
func turnCatalog(ctx context.Context, base *registry.Catalog, m *mcpRuntime, orgID string, mode netguard.Mode, env Env) *registry.Catalog {
	if m == nil {
		return base
	}
	cat, notices := mcpclient.TurnCatalog(ctx, m.regs, m.pool, orgID, mode, base)
	for _, n := range notices {
		if env.Stderr == nil {
			env.Logger.Warn("mcp: "+n, "org", orgID)
			continue
		}
		fmt.Fprintf(env.Stderr, "quiver: mcp: %s\n", n)
	}
	return cat
}
