// Package backend opens the store a deployment is configured for: SQLite
// in the data folder (the default, one process) or PostgreSQL at a URL
// (several replicas). It is the one place that knows both backends, so
// the composition root asks it for a store.Store and never names one.
package backend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/postgres"
	"github.com/quiverhq/quiver/store/sqlite"
)

// Names of the backends, as Config.Name reports them.
const (
	SQLite   = "sqlite"
	Postgres = "postgres"
)

// Config says which store to open.
type Config struct {
	// URL is a PostgreSQL connection URL; "" means SQLite in Dir.
	URL string
	// Dir is the data folder, which holds SQLite's database file (and,
	// with either backend, what else lives on disk).
	Dir string
}

// Name is the backend Config selects: SQLite or Postgres.
func (c Config) Name() string {
	if c.URL != "" {
		return Postgres
	}
	return SQLite
}

// Where names the database for people and logs: the SQLite file's path,
// or the PostgreSQL URL with its password hidden (postgres.RedactURL).
func (c Config) Where() string {
	if c.URL != "" {
		return postgres.RedactURL(c.URL)
	}
	return filepath.Join(c.Dir, sqlite.FileName)
}

// String is Name and Where, as a start-up line shows them:
// "sqlite /data/quiver.db", "postgres postgres://quiver:xxxxx@db/quiver".
func (c Config) String() string { return c.Name() + " " + c.Where() }

// GoString, LogValue and MarshalJSON show String too, so that %#v, a log
// attribute or a JSON document never carries the URL's password.
func (c Config) GoString() string { return c.String() }

// LogValue implements slog.LogValuer (see GoString).
func (c Config) LogValue() slog.Value { return slog.StringValue(c.String()) }

// MarshalJSON encodes String (see GoString).
func (c Config) MarshalJSON() ([]byte, error) { return json.Marshal(c.String()) }

// KnownSchemas is, by backend name, the newest schema version this build
// knows, as an archive's manifest records it.
func KnownSchemas() map[string]int {
	return map[string]int{SQLite: sqlite.KnownVersion(), Postgres: postgres.KnownVersion()}
}

// Open opens and migrates the store (see sqlite.Open and postgres.Open).
// A database migrated by a newer build is refused with an error wrapping
// store.ErrSchemaTooNew. Errors never hold the URL's password.
func Open(ctx context.Context, c Config) (store.Store, error) {
	if c.URL != "" {
		return postgres.Open(ctx, c.URL)
	}
	return sqlite.Open(ctx, c.Dir)
}

// Migrate applies the migrations the database lacks and returns the
// versions applied (none when it is up to date).
func Migrate(ctx context.Context, c Config) ([]int, error) {
	if c.URL != "" {
		return postgres.Migrate(ctx, c.URL)
	}
	return sqlite.Migrate(ctx, c.Dir)
}

// Status is a store's name (Config.String) and where its schema stands,
// as "quiver migrate status" prints it.
type Status struct {
	Store string `json:"store"`
	store.MigrationStatus
}

// WriteText writes the store's name, then the status.
func (s Status) WriteText(w io.Writer) {
	fmt.Fprintf(w, "store: %s\n", s.Store)
	s.MigrationStatus.WriteText(w)
}

// MigrationStatus reports the database's migrations against this build's,
// writing nothing (a missing SQLite database is reported with every step
// pending and is not created). Applied and Pending are never nil.
func MigrationStatus(ctx context.Context, c Config) (Status, error) {
	var st store.MigrationStatus
	var err error
	if c.URL != "" {
		st, err = postgres.Status(ctx, c.URL)
	} else {
		st, err = sqlite.Status(ctx, c.Dir)
	}
	if err != nil {
		return Status{}, fmt.Errorf("migration status of %s: %w", c, err)
	}
	if st.Applied == nil {
		st.Applied = []store.Migration{}
	}
	if st.Pending == nil {
		st.Pending = []store.Migration{}
	}
	return Status{Store: c.String(), MigrationStatus: st}, nil
}

// Exists reports whether there is a store to read without creating one:
// for SQLite, whether the data folder holds the database file (why says
// what is missing when it does not); a PostgreSQL database is always
// there to ask.
func Exists(c Config) (ok bool, why string) {
	if c.URL != "" {
		return true, ""
	}
	_, err := os.Stat(filepath.Join(c.Dir, sqlite.FileName))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, fmt.Sprintf("no store in %s", c.Dir)
	case err != nil:
		return false, fmt.Sprintf("the store in %s is unreadable: %v", c.Dir, err)
	}
	return true, ""
}

// LockServer makes this process the database's one server where the
// backend needs it: SQLite serves one process (sqlite.LockServer), so a
// second server on the same data folder is refused with an error saying
// that several replicas need PostgreSQL. PostgreSQL takes no lock: any
// number of replicas share it. release is never nil on success.
func LockServer(c Config) (release func(), err error) {
	if c.URL != "" {
		return func() {}, nil
	}
	release, err = sqlite.LockServer(c.Dir)
	if errors.Is(err, sqlite.ErrServerRunning) {
		return nil, fmt.Errorf("%w; one SQLite database serves one process: run several replicas on PostgreSQL (set QUIVER_DATABASE_URL, docs/postgres.md)", err)
	}
	return release, err
}
