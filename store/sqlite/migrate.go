package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"

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

// migration is one schema step.
type migration struct {
	version int
	name    string // the file name, recorded for people reading the table
	sql     string
}

// migrate applies, in order and in one transaction, every migration in
// fsys that the database has not recorded in schema_migrations, and returns
// the versions it applied. Two processes migrating at once are safe: the
// transaction takes the write lock before it reads what was applied.
func migrate(ctx context.Context, db *sql.DB, fsys fs.FS) ([]int, error) {
	ms, err := loadMigrations(fsys)
	if err != nil {
		return nil, fmt.Errorf("sqlite: migrate: %w", err)
	}
	applied, err := applyMigrations(ctx, db, ms)
	if err != nil {
		return nil, fmt.Errorf("sqlite: migrate: %w", err)
	}
	return applied, nil
}

// applyMigrations runs the missing migrations of ms inside one transaction.
func applyMigrations(ctx context.Context, db *sql.DB, ms []migration) ([]int, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback() // after Commit, a no-op
	done, err := appliedVersions(ctx, tx, len(ms))
	if err != nil {
		return nil, err
	}
	var applied []int
	for _, m := range ms {
		if done[m.version] {
			continue
		}
		if err := applyOne(ctx, tx, m); err != nil {
			return nil, err
		}
		applied = append(applied, m.version)
	}
	return applied, tx.Commit()
}

// appliedVersions creates schema_migrations when missing and returns the
// versions recorded in it. A version above known means the database was
// migrated by a newer build, which this one must not write to.
func appliedVersions(ctx context.Context, tx *sql.Tx, known int) (map[int]bool, error) {
	const create = `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER NOT NULL PRIMARY KEY,
		name       TEXT NOT NULL,
		applied_at TEXT NOT NULL
	)`
	if _, err := tx.ExecContext(ctx, create); err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, "SELECT version FROM schema_migrations")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	done := map[int]bool{}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		if v > known {
			return nil, fmt.Errorf("%w: it has migration %d, this build knows %d", store.ErrSchemaTooNew, v, known)
		}
		done[v] = true
	}
	return done, rows.Err()
}

// applyOne runs m, then its Go part when it has one, and records it.
func applyOne(ctx context.Context, tx *sql.Tx, m migration) error {
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return fmt.Errorf("%s: %w", m.name, err)
	}
	if step := goStep(m.name); step != nil {
		if err := step(ctx, tx); err != nil {
			return fmt.Errorf("%s: %w", m.name, err)
		}
	}
	const record = `INSERT INTO schema_migrations (version, name, applied_at)
		VALUES (?, ?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))`
	if _, err := tx.ExecContext(ctx, record, m.version, m.name); err != nil {
		return fmt.Errorf("%s: record: %w", m.name, err)
	}
	return nil
}

// goStep is the part of a migration written in Go, run after its SQL in
// the same transaction, or nil: what SQL cannot compute alike on every
// backend (store.FoldText). It is found by the file's description, not
// its number, so that renumbering a migration keeps its Go part.
func goStep(name string) func(context.Context, *sql.Tx) error {
	_, desc, _ := strings.Cut(strings.TrimSuffix(name, ".sql"), "_")
	switch desc {
	case "conversation_model_search":
		return rebuildSearch
	case "turn_branches":
		return linkTurns
	}
	return nil
}

// loadMigrations reads the migrations directory of fsys, sorted by version,
// and checks that versions run 1, 2, 3... with no gap or duplicate.
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
