package app

import (
	"context"
	"fmt"
	"time"

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
		RecheckTTL: time.Duration(cfg.MCP.RecheckTTL),
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

// Close closes every connection, then waits for the registrations'
// background snapshot writes.
func (m *mcpRuntime) Close() {
	m.pool.Close()
	m.regs.Close()
}

// mcpTools is engine.ToolSource over the MCP registrations and pool: a
// turn's catalog is the built-ins with the organisation's MCP tools (see
// mcpclient.TurnCatalog: fail closed when its servers cannot be read),
// its notices printed on stderr, or logged when there is none.
type mcpTools struct {
	m   *mcpRuntime
	env Env
}

// TurnCatalog implements engine.ToolSource.
func (t mcpTools) TurnCatalog(ctx context.Context, orgID, network string, base *registry.Catalog) *registry.Catalog {
	cat, notices := mcpclient.TurnCatalog(ctx, t.m.regs, t.m.pool, orgID, netguard.ParseMode(network), base)
	for _, n := range notices {
		if t.env.Stderr == nil {
			t.env.Logger.Warn("mcp: "+n, "org", orgID)
			continue
		}
		fmt.Fprintf(t.env.Stderr, "quiver: mcp: %s\n", n)
	}
	return cat
}
