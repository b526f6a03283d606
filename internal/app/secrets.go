package app

import (
	"context"
	"fmt"

	"github.com/quiverhq/quiver/keyring"
	"github.com/quiverhq/quiver/mcpclient"
	"github.com/quiverhq/quiver/settings"
)

// SecretsRotateOptions is what "quiver secrets rotate" runs with.
type SecretsRotateOptions struct {
	// Data is the configuration (which must configure a key) and the data
	// folder.
	Data Data
}

// SecretsRotate re-encrypts every stored MCP token and settings key under
// the keyring's primary key. No key configured is a *UsageError.
func SecretsRotate(ctx context.Context, o SecretsRotateOptions, env Env) error {
	env.defaults()
	df := o.Data.flags()
	cfg, err := df.loadConfig()
	if err != nil {
		return err
	}
	kr, err := loadKeyring(cfg, env.Getenv)
	if err != nil {
		return err
	}
	if kr == nil {
		return usagef("secrets rotate: no key is configured (set secrets.key_file or secrets.keys_env in --config)")
	}
	op, err := df.openUnder(ctx, cfg, needStore, env)
	if err != nil {
		return err
	}
	defer op.close()
	st := op.st
	n, err := mcpclient.RotateTokens(ctx, st, kr)
	if err != nil {
		return fmt.Errorf("rotate: %w (nothing was changed)", err)
	}
	k, err := settings.RotateKeys(ctx, st, kr)
	if err != nil {
		return fmt.Errorf("rotate settings keys: %w (the %d token(s) were re-encrypted; settings keys were not changed)", err, n)
	}
	if err := keyring.RotateCheck(ctx, st, kr); err != nil {
		return fmt.Errorf("rotate the keyring check: %w (the %d token(s) and %d settings key(s) were re-encrypted; run it again)", err, n, k)
	}
	fmt.Fprintf(env.Stdout, "re-encrypted %d token(s) and %d settings key(s) under key %s\n", n, k, kr.PrimaryID())
	return nil
}
