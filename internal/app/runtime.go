package app

import (
	"context"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/builtin"
	"github.com/quiverhq/quiver/dispatch"
	"github.com/quiverhq/quiver/intent"
	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/settings"
	"github.com/quiverhq/quiver/store/sqlite"
	"github.com/quiverhq/quiver/turn"
)

// runtime is what every command that runs tools opens: the store (with
// the refusal to start on unreadable tokens), the MCP registrations and
// connection pool, and the built-in catalog. close releases them.
type runtime struct {
	st  *sqlite.Store
	mcp *mcpRuntime
	// orgs gives each organisation its configuration and built-in catalog
	// (the deployment's with the organisation's settings applied).
	orgs *settings.Service
}

// openRuntime opens the data folder's runtime under the configuration.
func openRuntime(ctx context.Context, dir string, cfg config.Config, env Env) (*runtime, error) {
	st, kr, err := openStore(ctx, dir, cfg, env)
	if err != nil {
		return nil, err
	}
	m := newMCPRuntime(cfg, st, kr, env)
	var readPDF func(context.Context, []byte) (string, string, error)
	if exe := selfExecutable(); exe != "" {
		readPDF = pdfReader(exe)
	}
	orgs := settings.New(settings.Config{
		Store: st, Keyring: kr, Base: cfg, Getenv: env.Getenv, Now: env.Now, Logger: env.Logger,
		ProviderKey: func(provider string) string { return models{getenv: env.Getenv}.set(cfg).Connection(provider).Key },
		Build: func(c config.Config, keys map[string]string) *registry.Catalog {
			return builtin.NewCatalog(builtin.CatalogDeps{Results: st, Messages: st, DataDir: dir, Config: c, Getenv: env.Getenv, MCP: m.pool, ReadPDF: readPDF, Keys: keys})
		},
	})
	return &runtime{st: st, mcp: m, orgs: orgs}, nil
}

// catalog is the turn catalog of f's organisation (see orgCatalog).
func (r *runtime) catalog(ctx context.Context, f *turn.Facts, env Env) (*registry.Catalog, error) {
	return orgCatalog(ctx, r.orgs, r.mcp, f, env)
}

// orgCatalog is the turn catalog of f's organisation: its built-ins under
// its settings, with its MCP servers' tools (see turnCatalog). It applies
// the organisation's feature switches under the agent's own in f.
func orgCatalog(ctx context.Context, orgs *settings.Service, m *mcpRuntime, f *turn.Facts, env Env) (*registry.Catalog, error) {
	v, err := orgs.Runtime(ctx, f.Place.OrgID)
	if err != nil {
		return nil, err
	}
	f.Agent.Switches = v.MergeSwitches(f.Agent.Switches)
	return turnCatalog(ctx, v.Catalog(), m, f.Place.OrgID, networkMode(v.Config().Network.Mode), env), nil
}

// openTurnRuntime serves the commands that run one turn's tools without a
// model (call, mcp serve): it validates the turn's facts and the
// configuration, and only then opens the data folder's runtime and the
// facts' catalog (applying the organisation's switches to facts). The
// caller closes the runtime.
func openTurnRuntime(ctx context.Context, in TurnInput, data, cfgPath string, env Env) (*runtime, turn.Facts, *registry.Catalog, error) {
	in.Now = env.Now()
	facts, err := collectFacts(in)
	if err != nil {
		return nil, turn.Facts{}, nil, err
	}
	dir, err := dataDir(data, env)
	if err != nil {
		return nil, turn.Facts{}, nil, err
	}
	cfg, err := config.LoadConfig(cfgPath)
	if err != nil {
		return nil, turn.Facts{}, nil, &UsageError{Msg: err.Error()}
	}
	rt, err := openRuntime(ctx, dir, cfg, env)
	if err != nil {
		return nil, turn.Facts{}, nil, err
	}
	cat, err := rt.catalog(ctx, &facts, env)
	if err != nil {
		rt.close()
		return nil, turn.Facts{}, nil, err
	}
	return rt, facts, cat, nil
}

// close closes the MCP connections, then the store.
func (r *runtime) close() {
	r.mcp.Close()
	r.st.Close()
}

// engine builds the turn engine over the runtime; userMode overrides
// Deliberate Tool Mode's stored user mode ("" keeps it).
func (r *runtime) engine(cfg config.Config, det *intent.Detector, userMode string, env Env) *engine {
	disp := dispatch.New(dispatch.Config{Results: r.st, Logger: env.Logger})
	return &engine{
		st: r.st, mcp: r.mcp, orgs: r.orgs, logger: env.Logger, disp: disp, now: env.Now,
		dtm: &deliberate{detector: det, st: r.st, userMode: userMode, logger: env.Logger},
		runner: agent.New(agent.Config{
			Store: r.st, Dispatcher: disp,
			MaxSteps: cfg.MaxSteps, Prices: prices(cfg), Now: env.Now, Logger: env.Logger,
		}),
	}
}
