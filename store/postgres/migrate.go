package postgres

import (
	"cmp"
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/quiverhq/quiver/store"
)

// migrationFiles holds the schema, one file per step, named
// NNNN_description.sql and numbered from 0001 without gaps. A released
// migration is never edited; a change is a new file.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationDir is the directory inside migrationFiles' file system.
const migrationDir = "migrations"

// migrateLockKey is the advisory lock that migrations run under: the
// ASCII of "quiver". Advisory locks are per database, so databases on one
// server do not wait for each other.
const migrateLockKey int64 = 0x717569766572

// ErrSchemaTooNew is store.ErrSchemaTooNew, which Open and Migrate wrap
// on a database migrated by a newer build.
var ErrSchemaTooNew = store.ErrSchemaTooNew

// migration is one schema step.
type migration struct {
	version int
	name    string // the file name, recorded for people reading the table
	sql     string
}

// Migration and MigrationStatus are the store's, shared by the backends.
type (
	Migration       = store.Migration
	MigrationStatus = store.MigrationStatus
)

// Migrate connects to the database url names, applies the migrations it
// lacks, under an advisory lock, in one transaction, and returns the
// versions it applied (none when up to date). A database newer than this
// build gives an error wrapping ErrSchemaTooNew and changes nothing.
// Errors never contain the URL's password.
func Migrate(ctx context.Context, url string) ([]int, error) {
	pool, err := connect(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("postgres: migrate: %w", err)
	}
	defer pool.Close()
	applied, err := migrate(ctx, pool, migrationFiles)
	if err != nil {
		return nil, fmt.Errorf("postgres: migrate: %w", err)
	}
	return applied, nil
}

// Status connects to the database url names and reports which migrations
// it has applied and which this build would apply; it writes nothing and
// takes no lock. Errors never contain the URL's password.
func Status(ctx context.Context, url string) (MigrationStatus, error) {
	pool, err := connect(ctx, url)
	if err != nil {
		return MigrationStatus{}, fmt.Errorf("postgres: migration status: %w", err)
	}
	defer pool.Close()
	st, err := status(ctx, pool, migrationFiles)
	if err != nil {
		return MigrationStatus{}, fmt.Errorf("postgres: migration status: %w", err)
	}
	return st, nil
}

// migrate applies, in order and in one transaction, every migration in
// fsys that the database has not recorded in schema_migrations, and
// returns the versions it applied. The transaction first takes
// migrateLockKey: of processes migrating at once one applies the steps,
// the others wait for it and then, reading what it committed, apply
// nothing. PostgreSQL's DDL is transactional, so a failing step leaves
// the database as it was.
func migrate(ctx context.Context, pool *pgxpool.Pool, fsys fs.FS) ([]int, error) {
	ms, err := loadMigrations(fsys)
	if err != nil {
		return nil, err
	}
	var applied []int
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		applied, err = applyMigrations(ctx, tx, ms)
		return err
	})
	if err != nil {
		return nil, err
	}
	return applied, nil
}

// applyMigrations runs, inside tx, the missing migrations of ms.
func applyMigrations(ctx context.Context, tx pgx.Tx, ms []migration) ([]int, error) {
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", migrateLockKey); err != nil {
		return nil, fmt.Errorf("take the migration lock: %w", err)
	}
	if err := createMigrationsTable(ctx, tx); err != nil {
		return nil, err
	}
	done, err := recorded(ctx, tx)
	if err != nil {
		return nil, err
	}
	if err := checkKnown(done, len(ms)); err != nil {
		return nil, err
	}
	var applied []int
	for _, m := range ms {
		if _, ok := done[m.version]; ok {
			continue
		}
		if err := applyOne(ctx, tx, m); err != nil {
			return nil, err
		}
		applied = append(applied, m.version)
	}
	return applied, nil
}

// createMigrationsTable creates schema_migrations when it is missing. It
// looks first, so that a role without CREATE on the schema can open an
// up-to-date database.
func createMigrationsTable(ctx context.Context, tx pgx.Tx) error {
	exists, err := migrationsTableExists(ctx, tx)
	if err != nil || exists {
		return err
	}
	const create = `CREATE TABLE schema_migrations (
		version    integer NOT NULL PRIMARY KEY CHECK (version > 0),
		name       text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now()
	)`
	if _, err := tx.Exec(ctx, create); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	return nil
}

// querier is a pool, a connection or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// migrationsTableExists reports whether schema_migrations is on the
// search path.
func migrationsTableExists(ctx context.Context, q querier) (bool, error) {
	var exists bool
	err := q.QueryRow(ctx, "SELECT to_regclass('schema_migrations') IS NOT NULL").Scan(&exists)
	if err != nil {
		return false, fmt.Errorf("look for schema_migrations: %w", err)
	}
	return exists, nil
}

// recorded returns the steps schema_migrations holds, by version.
func recorded(ctx context.Context, q querier) (map[int]Migration, error) {
	rows, err := q.Query(ctx, "SELECT version, name, applied_at FROM schema_migrations")
	if err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	done := map[int]Migration{}
	var m Migration
	_, err = pgx.ForEachRow(rows, []any{&m.Version, &m.Name, &m.AppliedAt}, func() error {
		m.AppliedAt = utc(m.AppliedAt)
		done[m.Version] = m
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	return done, nil
}

// checkKnown fails with ErrSchemaTooNew when done holds a version above
// known.
func checkKnown(done map[int]Migration, known int) error {
	newest := 0
	for v := range done {
		newest = max(newest, v)
	}
	if newest > known {
		return fmt.Errorf("%w: the database is at migration %d, this build knows up to %d; upgrade quiver",
			ErrSchemaTooNew, newest, known)
	}
	return nil
}

// applyOne runs m and records it.
func applyOne(ctx context.Context, tx pgx.Tx, m migration) error {
	if _, err := tx.Exec(ctx, m.sql); err != nil {
		return fmt.Errorf("%s: %w", m.name, err)
	}
	if step := goStep(m.name); step != nil {
		if err := step(ctx, tx); err != nil {
			return fmt.Errorf("%s: %w", m.name, err)
		}
	}
	const record = `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`
	if _, err := tx.Exec(ctx, record, m.version, m.name); err != nil {
		return fmt.Errorf("%s: record: %w", m.name, err)
	}
	return nil
}

// goStep is the part of a migration written in Go, run after its SQL in
// the same transaction, or nil: what SQL cannot compute alike on every
// backend (store.FoldText). It is found by the file's description, not
// its number, so that renumbering a migration keeps its Go part.
func goStep(name string) func(context.Context, pgx.Tx) error {
	_, desc, _ := strings.Cut(strings.TrimSuffix(name, ".sql"), "_")
	switch desc {
	case "conversation_model_search":
		return rebuildSearch
	case "turn_branches":
		return linkTurns
	}
	return nil
}

// status compares what the database recorded with the migrations in fsys.
func status(ctx context.Context, q querier, fsys fs.FS) (MigrationStatus, error) {
	ms, err := loadMigrations(fsys)
	if err != nil {
		return MigrationStatus{}, err
	}
	st := MigrationStatus{Known: len(ms)}
	done := map[int]Migration{}
	exists, err := migrationsTableExists(ctx, q)
	if err != nil {
		return MigrationStatus{}, err
	}
	if exists {
		if done, err = recorded(ctx, q); err != nil {
			return MigrationStatus{}, err
		}
	}
	for v, m := range done {
		st.Current = max(st.Current, v)
		st.Applied = append(st.Applied, m)
	}
	slices.SortFunc(st.Applied, func(a, b Migration) int { return cmp.Compare(a.Version, b.Version) })
	for _, m := range ms {
		if _, ok := done[m.version]; !ok {
			st.Pending = append(st.Pending, Migration{Version: m.version, Name: m.name})
		}
	}
	return st, nil
}

// loadMigrations reads the migrations directory of fsys, sorted by
// version, and checks that versions run 1, 2, 3... with no gap or
// duplicate.
func loadMigrations(fsys fs.FS) ([]migration, error) {
	entries, err := fs.ReadDir(fsys, migrationDir)
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range entries { // ReadDir sorts by name: 0001 before 0002
		m, err := readMigration(fsys, e.Name())
		if err != nil {
			return nil, err
		}
		if want := len(ms) + 1; m.version != want {
			return nil, fmt.Errorf("%s: version %d, want %d", m.name, m.version, want)
		}
		ms = append(ms, m)
	}
	return ms, nil
}

// readMigration reads one file named NNNN_description.sql.
func readMigration(fsys fs.FS, name string) (migration, error) {
	version, err := parseMigrationName(name)
	if err != nil {
		return migration{}, err
	}
	b, err := fs.ReadFile(fsys, path.Join(migrationDir, name))
	if err != nil {
		return migration{}, err
	}
	return migration{version: version, name: name, sql: string(b)}, nil
}

// parseMigrationName returns the version of a file named
// NNNN_description.sql: four digits, an underscore, a non-empty
// description, and the .sql suffix.
func parseMigrationName(name string) (int, error) {
	num, desc, ok := strings.Cut(strings.TrimSuffix(name, ".sql"), "_")
	if !ok || !strings.HasSuffix(name, ".sql") || len(num) != 4 || desc == "" {
		return 0, fmt.Errorf("migration file %q: want NNNN_description.sql", name)
	}
	v, err := strconv.Atoi(num)
	if err != nil || v < 1 || strings.ContainsAny(num, "+-") {
		return 0, fmt.Errorf("migration file %q: bad version %q", name, num)
	}
	return v, nil
}
