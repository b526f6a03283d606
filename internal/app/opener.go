package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/keyring"
	"github.com/quiverhq/quiver/secret"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/backend"
)

// dataFlags are a command's --config and --data: the deployment's
// configuration file ("" means its defaults) and the data folder (""
// means the default one, see dataDir).
type dataFlags struct{ config, data string }

// need is what a command opens in its data folder.
type need int

const (
	// needStore is the store and the keyring, refused when the store
	// holds sealed secrets (MCP tokens, settings keys) and no key is
	// configured to read them, or when the keyring is not the one the
	// database's keyring check was sealed with (keyring.Check).
	needStore need = iota
	// needRuntime is needStore and the runtime over it: the MCP
	// registrations and connection pool, and the organisations'
	// settings and catalogs.
	needRuntime
	// needMessages is the store alone, for a command that reads no
	// secret (transcript): no keyring and no refusal.
	needMessages
	// needPlace is where the store is, opening nothing: no close.
	needPlace
)

// opened is a command's open data folder: the configuration it was
// opened under, the store and keyring, and (needRuntime) the runtime,
// which then owns the store. close releases it.
type opened struct {
	cfg config.Config
	// db is the store's backend and where it lives.
	db backend.Config
	st store.Store
	kr *secret.Keyring
	rt *runtime
}

// close closes the runtime when one was opened, else the store.
func (o *opened) close() {
	if o.rt != nil {
		o.rt.close()
		return
	}
	o.st.Close()
}

// loadConfig reads --config; a file that cannot be read or does not
// validate is bad input (a UsageError). It touches no data folder.
func (f dataFlags) loadConfig() (config.Config, error) {
	cfg, err := config.LoadConfig(f.config)
	if err != nil {
		return config.Config{}, &UsageError{Msg: err.Error()}
	}
	return cfg, nil
}

// open is the one way into the data folder for a command with nothing
// else to check first: it reads --config (loadConfig), then opens what
// n names under it (openUnder).
func (f dataFlags) open(ctx context.Context, n need, env Env) (*opened, error) {
	cfg, err := f.loadConfig()
	if err != nil {
		return nil, err
	}
	return f.openUnder(ctx, cfg, n, env)
}

// openUnder resolves --data (config.DataDir), loads the keyring and opens what
// n names under cfg, which the caller read with loadConfig. A command
// calls it after every check it can make without touching the disk, so
// that bad input creates no data folder: this is the first step that
// writes (opening the store creates the folder). On error nothing is
// left open.
func (f dataFlags) openUnder(ctx context.Context, cfg config.Config, n need, env Env) (*opened, error) {
	db, err := f.store(cfg, env)
	if err != nil {
		return nil, err
	}
	o := &opened{cfg: cfg, db: db}
	if n == needPlace {
		return o, nil
	}
	if n == needMessages {
		if o.st, err = backend.Open(ctx, db); err != nil {
			return nil, fmt.Errorf("open store: %w", err)
		}
		return o, nil
	}
	if o.st, o.kr, err = openStore(ctx, db, cfg, env); err != nil {
		return nil, err
	}
	if n == needRuntime {
		o.rt = newRuntime(o.st, o.kr, db.Dir, cfg, env)
	}
	return o, nil
}

// store is the store cfg selects for --data (config.DataDir): PostgreSQL
// when a database URL is configured (config.Config.DatabaseURL), else
// SQLite in the data folder. It touches no disk; a bad setting is bad
// input.
func (f dataFlags) store(cfg config.Config, env Env) (backend.Config, error) {
	dir, err := config.DataDir(f.data, env.Getenv)
	if err != nil {
		return backend.Config{}, &UsageError{Msg: err.Error()}
	}
	url, err := cfg.DatabaseURL(env.Getenv)
	if err != nil {
		return backend.Config{}, &UsageError{Msg: err.Error()}
	}
	return backend.Config{URL: url, Dir: dir}, nil
}

// storeDir returns the data folder when there is a store to read (see
// backend.Exists), else why not: opening one would create it, and a
// check writes nothing.
func storeDir(cfg config.Config, flagValue string, env Env) (dir, why string) {
	db, err := dataFlags{data: flagValue}.store(cfg, env)
	if err != nil {
		return "", err.Error()
	}
	if ok, why := backend.Exists(db); !ok {
		if strings.HasPrefix(why, "no store") {
			why += ", so no registered servers to check against"
		}
		return "", why
	}
	return db.Dir, ""
}

// loadKeyring returns the configured keyring, or nil when no key source is
// configured. A configured source that cannot be read is a usage error.
func loadKeyring(cfg config.Config, getenv func(string) string) (*secret.Keyring, error) {
	kr, err := cfg.Secrets.Keyring(getenv)
	if err != nil {
		return nil, &UsageError{Msg: err.Error()}
	}
	return kr, nil
}

// openStore opens the data folder's store and the keyring, refusing to go
// on when tokens are stored and no key is configured to read them, or
// when the keyring is not the database's (keyring.Check).
func openStore(ctx context.Context, db backend.Config, cfg config.Config, env Env) (store.Store, *secret.Keyring, error) {
	kr, err := loadKeyring(cfg, env.Getenv)
	if err != nil {
		return nil, nil, err
	}
	st, err := backend.Open(ctx, db)
	if err != nil {
		return nil, nil, fmt.Errorf("open store: %w", err)
	}
	if err := keyring.Check(ctx, st, kr); err != nil {
		st.Close()
		return nil, nil, err
	}
	return st, kr, nil
}
