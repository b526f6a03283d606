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
	tools  *providers.ToolCaches // the adapters' tool declaration caches; nil: none
	logger *slog.Logger
}

// set returns the providers of cfg.
func (ms models) set(cfg config.Config) *providers.Set {
	pc := cfg.ProviderConfig()
	pc.Getenv, pc.Probe, pc.HTTPClient, pc.Logger, pc.Tools = ms.getenv, ms.http, ms.api, ms.logger, ms.tools
	return providers.New(pc)
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
func (ms models) opener(cfg config.Config) settings.ModelOpener { return ms.set(cfg).Opener() }
