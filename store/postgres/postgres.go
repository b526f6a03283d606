// Package postgres is Quiver's scale-out store: every repository of
// package store on one PostgreSQL database, shared by any number of
// `quiver serve` replicas, through the pgx driver and its pool (pgxpool).
//
// Open migrates the database before it returns, under an advisory lock,
// so that replicas starting together apply each migration once; a
// database migrated by a newer build is refused with ErrSchemaTooNew.
//
// Transactions. A statement that is its own transaction runs on the pool.
// Several statements that must hold together run in inTx, at READ
// COMMITTED unless a comment at the call says which invariant needs more;
// inTx retries serialization failures and deadlocks a bounded number of
// times, so the function it runs must be quick (nothing slow: no model or
// tool call, no network) and must have no effect outside the transaction.
//
// Types. Instants are timestamptz (microseconds; returned in UTC), an
// absent instant (a zero time.Time where the interface says "zero means
// not yet") NULL. Text that comes from models, tools or people unchecked
// (message content, result bodies) is bytea, since PostgreSQL text refuses
// NUL bytes and invalid UTF-8 that a Go string may hold; keys and names
// are text COLLATE "C", so that ORDER BY is byte order, as SQLite's, on any
// database locale.
//
// The connection URL holds a password; nothing here logs it or puts it in
// an error. RedactURL is for callers that show the URL.
package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/quiverhq/quiver/store"
)

// Store is the PostgreSQL implementation of store.Store. It is safe for
// concurrent use, by several goroutines and by several processes on one
// database; Close it when done.
type Store struct {
	pool *pgxpool.Pool
	// events is the one LISTEN connection waking WaitTurnEvents calls.
	events listener
	// vectors keeps memory vectors between searches (MemoryVectors).
	vectors *store.VectorCache
}

var _ store.Store = (*Store)(nil)

// Open connects to the database that url names (a postgres:// URL or a
// keyword/value connection string, as libpq reads them; pool settings
// such as pool_max_conns are read from it too), applies every migration
// the database lacks and returns the Store. A database whose schema is
// newer than this build knows gives an error wrapping ErrSchemaTooNew,
// changing nothing. ctx bounds the connecting and the migrations, not the
// Store's lifetime. Errors never contain the URL's password.
func Open(ctx context.Context, url string) (*Store, error) {
	pool, err := connect(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	if _, err := migrate(ctx, pool, migrationFiles); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: open: migrate: %w", err)
	}
	return &Store{pool: pool, vectors: store.NewVectorCache(0)}, nil
}

// connect opens a pool on url and checks that one connection can be made.
func connect(ctx context.Context, url string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgconn's message may quote the connection string: keep only
		// that it did not parse.
		return nil, errors.New("the database URL does not parse (see the pgx connection string format)")
	}
	setDefaults(cfg.ConnConfig.RuntimeParams)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to %s: %w", describe(cfg), err)
	}
	return pool, nil
}

// setDefaults sets the session settings the store relies on: statements
// outside inTx run at READ COMMITTED, whatever the server's, the
// database's or the URL's default_transaction_isolation (the store's
// single statements are written for it and are not retried), and sessions
// name themselves "quiver" in pg_stat_activity unless the URL names them.
func setDefaults(params map[string]string) {
	params["default_transaction_isolation"] = "read committed"
	if _, ok := params["application_name"]; !ok {
		params["application_name"] = "quiver"
	}
}

// describe names the server and database of cfg for an error: host,
// port, database and user, never the password.
func describe(cfg *pgxpool.Config) string {
	c := cfg.ConnConfig
	return fmt.Sprintf("database %q on %s:%d as %q", c.Database, c.Host, c.Port, c.User)
}

// Close closes every connection of the pool, waiting for those in use to
// be released. The Store must not be used afterwards.
func (s *Store) Close() error {
	s.events.stop()
	s.pool.Close()
	s.events.hub.RecheckAll() // their reads now fail: no waiter outlives the store
	return nil
}

// unsupported is what a method this package does not implement yet
// returns, wrapped with the operation.
func unsupported(op string) error {
	return fmt.Errorf("postgres: %s: %w", op, errors.ErrUnsupported)
}
