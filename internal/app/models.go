package app

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/providers"
	"github.com/quiverhq/quiver/settings"
	"github.com/quiverhq/quiver/turn"
)

// models is what every configuration's providers share in one process:
// the environment, the HTTP clients and the logger. set applies it to a
// configuration (the deployment's, or an organisation's view of it).
type models struct {
	getenv func(string) string
	// http sends the Ollama probe only.
	http *http.Client
	// api sends model requests; nil means each model's own default client.
	// quiver serve shares one with a large idle pool across every turn.
	api    *http.Client
	logger *slog.Logger
}

// set returns the providers of cfg.
func (ms models) set(cfg config.Config) *providers.Set {
	ps := make(map[string]providers.Provider, len(cfg.Providers))
	for name, p := range cfg.Providers {
		ps[name] = providers.Provider{APIKey: p.APIKey, APIKeyEnv: p.APIKeyEnv, BaseURL: p.BaseURL}
	}
	return providers.New(providers.Config{
		Providers: ps, TextTools: cfg.TextTools, Getenv: ms.getenv,
		Probe: ms.http, HTTPClient: ms.api, Logger: ms.logger,
	})
}

// open opens the model m names under cfg (see providers.Set.Open); not
// being able to connect one is a usage error.
func (ms models) open(ctx context.Context, cfg config.Config, m turn.Model) (llm.Model, string, error) {
	mod, notice, err := ms.set(cfg).Open(ctx, m)
	var ce *providers.ConnectError
	if errors.As(err, &ce) {
		return nil, "", &UsageError{Msg: ce.Msg}
	}
	return mod, notice, err
}

// opener is settings.Config.Models: the models under cfg, each Open
// opening afresh (the settings Runtime keeps what it opens).
func (ms models) opener(cfg config.Config) settings.ModelOpener { return cfgModels{ms: ms, cfg: cfg} }

// cfgModels opens models under one configuration in force.
type cfgModels struct {
	ms  models
	cfg config.Config
}

// Open implements settings.ModelOpener (see models.open).
func (c cfgModels) Open(ctx context.Context, m turn.Model) (llm.Model, error) {
	mod, _, err := c.ms.open(ctx, c.cfg, m)
	return mod, err
}
