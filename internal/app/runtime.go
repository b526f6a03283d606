package app

import (
	"context"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/dispatch"
	"github.com/quiverhq/quiver/intent"
	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/mcpclient"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/store/sqlite"
)

// runtime is what every command that runs tools opens: the store (with
// the refusal to start on unreadable tokens), the MCP client service and
// the built-in catalog. close releases them.
type runtime struct {
	st  *sqlite.Store
	mcp *mcpclient.Service
	cat *registry.Catalog
}

// openRuntime opens the data folder's runtime under the configuration.
func openRuntime(ctx context.Context, dir string, cfg config.Config, env Env) (*runtime, error) {
	st, kr, err := openStore(ctx, dir, cfg, env)
	if err != nil {
		return nil, err
	}
	svc := mcpService(cfg, st, kr, env)
	cat := NewCatalog(CatalogDeps{Store: st, DataDir: dir, Config: cfg, Getenv: env.Getenv, MCP: svc, Executable: selfExecutable()})
	return &runtime{st: st, mcp: svc, cat: cat}, nil
}

// close closes the MCP connections, then the store.
func (r *runtime) close() {
	r.mcp.Close()
	r.st.Close()
}

// engine builds the turn engine over the runtime; userMode overrides
// Deliberate Tool Mode's stored user mode ("" keeps it).
func (r *runtime) engine(cfg config.Config, det *intent.Detector, userMode string, env Env) *engine {
	return &engine{
		st: r.st, mcp: r.mcp, cat: r.cat, logger: env.Logger,
		dtm: &deliberate{detector: det, st: r.st, userMode: userMode, logger: env.Logger},
		runner: agent.New(agent.Config{
			Store: r.st, Dispatcher: dispatch.New(dispatch.Config{Results: r.st, Logger: env.Logger}),
			MaxSteps: cfg.MaxSteps, Prices: prices(cfg), Now: env.Now, Logger: env.Logger,
		}),
	}
}
