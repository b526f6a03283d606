package app

import (
	"context"
	"fmt"

	"github.com/quiverhq/quiver/mcpclient"
	"github.com/quiverhq/quiver/settings"
)

var secretsUsage = usageText("secrets")

// runSecrets runs "quiver secrets rotate".
func runSecrets(ctx context.Context, args []string, env Env) error {
	if _, err := subcommand("secrets", args, secretsUsage, env.Stdout, "rotate"); err != nil {
		return err
	}
	fs := newFlags("secrets rotate")
	var df dataFlags
	df.register(fs)
	if _, err := parseArgs(fs, args[1:], secretsUsage, env.Stdout, 0, "takes no arguments"); err != nil {
		return err
	}
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
	o, err := df.openUnder(ctx, cfg, needStore, env)
	if err != nil {
		return err
	}
	defer o.close()
	st := o.st
	n, err := mcpclient.RotateTokens(ctx, st, kr)
	if err != nil {
		return fmt.Errorf("rotate: %w (nothing was changed)", err)
	}
	k, err := settings.RotateKeys(ctx, st, kr)
	if err != nil {
		return fmt.Errorf("rotate settings keys: %w (the %d token(s) were re-encrypted; settings keys were not changed)", err, n)
	}
	if err := rotateKeyCheck(ctx, st, kr); err != nil {
		return fmt.Errorf("rotate the keyring check: %w (the %d token(s) and %d settings key(s) were re-encrypted; run it again)", err, n, k)
	}
	fmt.Fprintf(env.Stdout, "re-encrypted %d token(s) and %d settings key(s) under key %s\n", n, k, kr.PrimaryID())
	return nil
}
