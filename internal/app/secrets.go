package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/mcpclient"
	"github.com/quiverhq/quiver/secret"
	"github.com/quiverhq/quiver/settings"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
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

// loadKeyring returns the configured keyring, or nil when no key source is
// configured. A configured source that cannot be read is a usage error.
func loadKeyring(cfg config.Config, getenv func(string) string) (*secret.Keyring, error) {
	kr, err := cfg.Secrets.Keyring(getenv)
	if err != nil {
		return nil, &UsageError{Msg: err.Error()}
	}
	return kr, nil
}

// errNoKey is the refusal to start with stored tokens and no key.
var errNoKey = errors.New("stored secrets (MCP auth tokens or settings keys) exist but no encryption key is configured (set secrets.key_file or secrets.keys_env in the config); refusing to start")

// openStore opens the data folder's store and the keyring, refusing to go
// on when tokens are stored and no key is configured to read them.
func openStore(ctx context.Context, dir string, cfg config.Config, env Env) (*sqlite.Store, *secret.Keyring, error) {
	kr, err := loadKeyring(cfg, env.Getenv)
	if err != nil {
		return nil, nil, err
	}
	st, err := sqlite.Open(ctx, dir)
	if err != nil {
		return nil, nil, fmt.Errorf("open store: %w", err)
	}
	if err := checkTokens(ctx, st, kr); err != nil {
		st.Close()
		return nil, nil, err
	}
	return st, kr, nil
}

// checkTokens refuses a store holding sealed secrets (MCP tokens,
// settings keys) when there is no keyring.
func checkTokens(ctx context.Context, st store.Store, kr *secret.Keyring) error {
	if kr != nil {
		return nil
	}
	n, err := st.CountMCPTokens(ctx)
	if err != nil {
		return fmt.Errorf("count stored tokens: %w", err)
	}
	k, err := st.CountOrgSecrets(ctx)
	if err != nil {
		return fmt.Errorf("count stored keys: %w", err)
	}
	if n+k > 0 {
		return errNoKey
	}
	return nil
}

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
