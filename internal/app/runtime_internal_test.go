package app

import (
	"context"

	"github.com/quiverhq/quiver/internal/config"
)

// openRuntime opens the runtime of the data folder dir under cfg, as a
// command does (the opener's needRuntime with --data dir). The caller
// closes the runtime.
func openRuntime(ctx context.Context, dir string, cfg config.Config, env Env) (*runtime, error) {
	o, err := dataFlags{data: dir}.openUnder(ctx, cfg, needRuntime, env)
	if err != nil {
		return nil, err
	}
	return o.rt, nil
}
