package app

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/dispatch"
	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/intent"
	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/settings"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/turn"
)

// newEngine builds the turn engine over the runtime: its repositories,
// the organisations' runtimes, stored agents, MCP tools and, when models
// is set, the models turns open (the CLI passes its session's model in
// each request instead).
func (r *runtime) newEngine(cfg config.Config, det *intent.Detector, om *openedModels, env Env) *engine.Engine {
	disp := dispatch.New(dispatch.Config{Results: r.st, Now: env.Now, Logger: env.Logger})
	ecfg := engine.Config{
		Repos:   engine.Repositories{Conversations: r.st, Messages: r.st, Turns: r.st, Intents: r.st},
		Runtime: orgRuntimes{orgs: r.orgs}, Agents: storedAgents{r.st},
		Tools:    mcpTools{m: r.mcp, env: env},
		Detector: det, Dispatcher: disp, Now: env.Now, Logger: env.Logger,
		Runner: agent.New(agent.Config{
			Store: r.st, Dispatcher: disp,
			MaxSteps: cfg.MaxSteps, Prices: prices(cfg), Now: env.Now, Logger: env.Logger,
		}),
	}
	if om != nil {
		ecfg.Runtime = orgRuntimes{orgs: r.orgs, models: om}
	}
	return engine.New(ecfg)
}

// orgRuntimes is engine.RuntimeSource over the organisations' settings;
// models nil opens none (the CLI brings its session's model).
type orgRuntimes struct {
	orgs   *settings.Service
	models *openedModels
}

// Runtime implements engine.RuntimeSource: one settings read.
func (o orgRuntimes) Runtime(ctx context.Context, orgID string) (engine.Runtime, error) {
	v, err := o.orgs.Runtime(ctx, orgID)
	if err != nil {
		return engine.Runtime{}, err
	}
	rt := runtimeOf(v)
	if o.models != nil {
		rt.Models = o.models.at(orgID, v)
	}
	return rt, nil
}

// runtimeOf is the engine's runtime of a settings runtime.
func runtimeOf(v *settings.Runtime) engine.Runtime {
	backends := slices.Sorted(maps.Keys(v.Keys()))
	return engine.Runtime{Version: v.Version(), Catalog: v.Catalog(), Switches: v.Switches(),
		Network: string(v.Mode()), Backends: backends}
}

// storedAgents is engine.AgentSource over the store's agents.
type storedAgents struct{ st store.Agents }

// Agent implements engine.AgentSource.
func (s storedAgents) Agent(ctx context.Context, orgID, name string) (engine.Agent, error) {
	stored, err := s.st.GetAgent(ctx, orgID, name)
	if err != nil {
		return engine.Agent{}, err
	}
	ag, err := config.ParseAgent(stored.Definition)
	if err != nil {
		return engine.Agent{}, fmt.Errorf("stored agent %s: %w", name, err)
	}
	return agentOf(ag)
}

// agentOf is what a turn sees of a parsed agent.
func agentOf(ag config.Agent) (engine.Agent, error) {
	m, err := ag.TurnModel("")
	if err != nil {
		return engine.Agent{}, &engine.InputError{Msg: err.Error()}
	}
	return engine.Agent{Agent: ag.TurnAgent(), Model: m}, nil
}

// mcpTools is engine.ToolSource over the MCP registrations and pool.
type mcpTools struct {
	m   *mcpRuntime
	env Env
}

// TurnCatalog implements engine.ToolSource (see turnCatalog).
func (t mcpTools) TurnCatalog(ctx context.Context, orgID, network string, base *registry.Catalog) *registry.Catalog {
	return turnCatalog(ctx, base, t.m, orgID, networkMode(network), t.env)
}

// openedModels opens models once per organisation and settings version,
// with the organisation's keys.
type openedModels struct {
	ms models

	mu sync.Mutex
	// byOrg holds, per organisation, the models opened under its
	// settings version; a new version starts afresh.
	byOrg map[string]versionModels
}

// versionModels are an organisation's models at one settings version, by
// "provider:model".
type versionModels struct {
	version int64
	models  map[string]llm.Model
}

// at is the engine.ModelOpener of an organisation's settings view.
func (o *openedModels) at(orgID string, v *settings.Runtime) engine.ModelOpener {
	return viewModels{o: o, orgID: orgID, v: v}
}

// viewModels is engine.ModelOpener for one organisation's view.
type viewModels struct {
	o     *openedModels
	orgID string
	v     *settings.Runtime
}

// Open implements engine.ModelOpener.
func (vm viewModels) Open(ctx context.Context, m turn.Model) (llm.Model, error) {
	return vm.o.open(ctx, vm.orgID, vm.v, m)
}

// open returns the model m names under v, opened once per version.
func (o *openedModels) open(ctx context.Context, orgID string, v *settings.Runtime, m turn.Model) (llm.Model, error) {
	key := m.Provider + ":" + m.Name
	o.mu.Lock()
	cur := o.byOrg[orgID]
	mod, ok := cur.models[key]
	o.mu.Unlock()
	if ok && cur.version == v.Version() {
		return mod, nil
	}
	mod, _, err := o.ms.open(ctx, v.Config(), m)
	if err != nil {
		return nil, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.byOrg == nil {
		o.byOrg = map[string]versionModels{}
	}
	cur = o.byOrg[orgID]
	switch {
	case cur.models != nil && cur.version > v.Version():
		// A newer version was cached meanwhile: use mod for this turn
		// only, never replace the newer models with it.
	case cur.models == nil || cur.version < v.Version():
		o.byOrg[orgID] = versionModels{version: v.Version(), models: map[string]llm.Model{key: mod}}
	default:
		cur.models[key] = mod
	}
	return mod, nil
}
