package sqlite

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/quiverhq/quiver/store"
)

// Status reports which migrations the database in dir has applied and
// which this build would apply. It writes nothing, creates neither dir
// nor the file (a missing database has every migration pending) and
// opens the file read-only.
func Status(ctx context.Context, dir string) (store.MigrationStatus, error) {
	ms, err := loadMigrations(migrationFiles)
	if err != nil {
		return store.MigrationStatus{}, fmt.Errorf("sqlite: migration status: %w", err)
	}
	applied, err := readApplied(ctx, filepath.Join(dir, FileName))
	if err != nil {
		return store.MigrationStatus{}, fmt.Errorf("sqlite: migration status: %w", err)
	}
	return statusOf(ms, applied), nil
}

// readApplied reads schema_migrations from the database file at path;
// none when the file or the table does not exist.
func readApplied(ctx context.Context, path string) ([]store.Migration, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	db, err := openDB(ctx, readerDSN(path), 1)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").Scan(&n); err != nil || n == 0 {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, "SELECT version, name, applied_at FROM schema_migrations ORDER BY version")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Migration
	for rows.Next() {
		var m store.Migration
		var at string
		if err := rows.Scan(&m.Version, &m.Name, &at); err != nil {
			return nil, err
		}
		m.AppliedAt, _ = time.Parse("2006-01-02T15:04:05.999Z", at)
		out = append(out, m)
	}
	return out, rows.Err()
}

// statusOf lays the applied steps beside the known ones.
func statusOf(known []migration, applied []store.Migration) store.MigrationStatus {
	st := store.MigrationStatus{Known: len(known), Applied: applied}
	done := map[int]bool{}
	for _, m := range applied {
		done[m.Version] = true
		st.Current = max(st.Current, m.Version)
	}
	for _, m := range known {
		if !done[m.version] {
			st.Pending = append(st.Pending, store.Migration{Version: m.version, Name: m.name})
		}
	}
	if st.Applied == nil {
		st.Applied = []store.Migration{}
	}
	if st.Pending == nil {
		st.Pending = []store.Migration{}
	}
	return st
}

// Migrate applies the migrations the database in dir lacks, creating dir
// and the file when they are missing, and returns the versions it applied
// (none when up to date). Open does the same before it returns a Store;
// Migrate is for "quiver migrate up". A database newer than this build is
// refused with an error wrapping store.ErrSchemaTooNew.
func Migrate(ctx context.Context, dir string) ([]int, error) {
	path, err := prepareDir(dir)
	if err != nil {
		return nil, fmt.Errorf("sqlite: migrate: %w", err)
	}
	writer, err := openDB(ctx, writerDSN(path), 1)
	if err != nil {
		return nil, fmt.Errorf("sqlite: migrate: %w", err)
	}
	defer writer.Close()
	if err := checkWAL(ctx, writer); err != nil {
		return nil, fmt.Errorf("sqlite: migrate: %w", err)
	}
	return migrate(ctx, writer, migrationFiles)
}
