package app

import (
	"context"
	"slices"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/budget"
	"github.com/quiverhq/quiver/builtin/memory"
	"github.com/quiverhq/quiver/dispatch"
	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/intent"
	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/prompt"
	"github.com/quiverhq/quiver/settings"
)

// newEngine builds the turn engine over the runtime: its repositories,
// the organisations' runtimes, stored agents, MCP tools and, when models
// is set, the models turns open under their organisation's settings (the
// CLI passes its session's model in each request instead).
func (r *runtime) newEngine(cfg config.Config, det *intent.Detector, models bool, env Env) *engine.Engine {
	disp := dispatch.New(dispatch.Config{Results: r.st, Quota: r.quota, Now: env.Now, Logger: env.Logger, IDs: r.ids})
	ecfg := engine.Config{
		Repos:   engine.Repositories{Conversations: r.st, Messages: r.st, Turns: r.st, Intents: r.st, Branches: r.st},
		Runtime: orgRuntimes{orgs: r.orgs, models: models, embeddings: r.embeddings}, Agents: engine.StoredAgents(r.st, parseAgent),
		Tools: mcpTools{m: r.mcp, env: env}, ShortTerms: r.st, Attachments: r.st, Knowledge: r.knowledge, Skills: r.st,
		Budgets:  r.st,
		Detector: det, Dispatcher: disp, Now: env.Now, NewID: r.ids.New, Logger: env.Logger,
		Prompts: prompt.NewCache(cfg.PromptCache), Selections: engine.NewSelections(cfg.SelectionCache),
		Deferral: engine.Deferral{Off: cfg.Discovery.Defer == "off", OverTools: cfg.Discovery.OverTools,
			OverChars: cfg.Discovery.OverChars, Core: slices.Clone(cfg.Discovery.Core)},
		Runner: agent.New(agent.Config{
			Store: r.st, Dispatcher: disp, IDs: r.ids, Budget: budget.Guard{Store: r.st, Now: env.Now},
			MaxSteps: cfg.MaxSteps, Prices: cfg.AgentPrices(), Now: env.Now, Logger: env.Logger,
			MaxCallsPerStep: cfg.ToolCalls.PerStep, MaxCallsPerTurn: cfg.ToolCalls.PerTurn, MaxConcurrentCalls: cfg.ToolCalls.Concurrent,
			Windows:   cfg.ContextWindow,
			ModelIdle: cfg.Turns.ModelIdle.Std(), MaxDuration: cfg.Turns.MaxDuration.Std(),
		}),
	}
	if sem := semanticStage(cfg, env); det != nil && sem != nil && r.embeddings != nil {
		ecfg.Semantic, ecfg.Embeddings = sem, r.embeddings
	}
	return engine.New(ecfg)
}

// semanticStage is Deliberate Tool Mode's semantic stage when
// intent.semantic is on, else nil. The exemplars ship in the binary and
// are checked by its tests, so failing to read them is logged, not
// fatal: the mode goes on without the stage.
func semanticStage(cfg config.Config, env Env) *intent.Semantic {
	if !cfg.Intent.SemanticOn() {
		return nil
	}
	s, err := intent.BuiltinSemantic()
	if err != nil {
		env.Logger.Warn("deliberate tool mode: semantic stage off", "err", err)
		return nil
	}
	return s
}

// orgRuntimes is engine.RuntimeSource over the organisations' settings;
// models false opens none (the CLI brings its session's model). It lives
// here, where both are composed, because neither package should know the
// other: the engine takes narrow sources, and settings is a layer below
// the turn.
type orgRuntimes struct {
	orgs   *settings.Service
	models bool
	// embeddings, when set, puts "embedding" among the backends of an
	// organisation whose embedding model opens.
	embeddings *embeddings
}

// Runtime implements engine.RuntimeSource: one settings read.
func (o orgRuntimes) Runtime(ctx context.Context, orgID string) (engine.Runtime, error) {
	v, err := o.orgs.Runtime(ctx, orgID)
	if err != nil {
		return engine.Runtime{}, err
	}
	rt := engine.Runtime{Version: v.Version(), Catalog: v.Catalog(), Switches: v.Switches(),
		Network: string(v.Mode()), Backends: v.KeyNames()}
	if o.embeddings.has(ctx, orgID, v) {
		rt.Backends = append(rt.Backends, memory.EmbeddingBackend)
		slices.Sort(rt.Backends)
	}
	if o.models {
		rt.Models = v.Models()
	}
	return rt, nil
}

// parseAgent is what a turn sees of an agent definition, parsed and
// validated; a model it names badly is an *engine.InputError.
func parseAgent(definition []byte) (engine.Agent, error) {
	ag, err := config.ParseAgent(definition)
	if err != nil {
		return engine.Agent{}, err
	}
	m, others, err := ag.TurnModels()
	if err != nil {
		return engine.Agent{}, &engine.InputError{Msg: err.Error()}
	}
	return engine.Agent{Agent: ag.TurnAgent(), Model: m, Models: others}, nil
}
