package app

import (
	"context"
	"fmt"

	"github.com/quiverhq/quiver/mcpclient"
	"github.com/quiverhq/quiver/settings"
)

const secretsUsage = `Usage: quiver secrets rotate [flags]

Re-encrypts every stored secret (MCP auth tokens, settings keys) under the
primary key, the first key of the configured key list. To rotate keys: put
the new key first and keep the old one after it, run this, then remove the
old key.

Flags:
  --config FILE  deployment configuration (secrets.key_file or secrets.keys_env)
  --data DIR     data folder (default $QUIVER_DATA, else $XDG_DATA_HOME/quiver,
                 else ~/.local/share/quiver)
`

// runSecrets runs "quiver secrets rotate".
func runSecrets(ctx context.Context, args []string, env Env) error {
	if len(args) == 0 {
		return usagef(`secrets: no subcommand given (run "quiver secrets --help")`)
	}
	switch args[0] {
	case "help", "-h", "--help", "-help":
		fmt.Fprint(env.Stdout, secretsUsage)
		return nil
	case "rotate":
	default:
		return usagef("secrets: unknown subcommand %q (rotate)", args[0])
	}
	fs := newFlags("secrets rotate")
	var cfgPath, data string
	fs.StringVar(&cfgPath, "config", "", "")
	fs.StringVar(&data, "data", "", "")
	pos, err := parse(fs, args[1:], secretsUsage, env.Stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("secrets rotate: takes no arguments")
	}
	df := dataFlags{config: cfgPath, data: data}
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
	fmt.Fprintf(env.Stdout, "re-encrypted %d token(s) and %d settings key(s) under key %s\n", n, k, kr.PrimaryID())
	return nil
}
