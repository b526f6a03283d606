package app

import (
	"context"
	"errors"

	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/providers"
	"github.com/quiverhq/quiver/settings"
	"github.com/quiverhq/quiver/turn"
)

// models are the providers' parts every configuration shares in one
// process (providers.Shared), applied to a configuration by set.
type models struct{ providers.Shared }

// set returns the providers of cfg.
func (ms models) set(cfg config.Config) *providers.Set { return ms.Set(cfg.ProviderConfig()) }

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
