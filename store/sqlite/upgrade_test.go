package sqlite

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/storetest"
)

// TestUpgrades runs the shared upgrade checks: each on a new database an
// older build left, opened with every migration.
func TestUpgrades(t *testing.T) {
	storetest.RunUpgrades(t, func(t *testing.T, u storetest.Upgrade) store.Store {
		dir := t.TempDir()
		db := migratedBefore(t, dir, u.Migration)
		for _, r := range u.Rows {
			q, args := r.Insert(func(n int) string { return fmt.Sprintf("?%d", n) })
			for i, a := range args {
				if tm, ok := a.(time.Time); ok {
					args[i] = encodeTime(tm)
				}
			}
			if _, err := db.ExecContext(t.Context(), q, args...); err != nil {
				t.Fatalf("write %s as before %s: %v", r.Table, u.Migration, err)
			}
		}
		if err := db.Close(); err != nil {
			t.Fatalf("close: %v", err)
		}
		return openTest(t, dir)
	})
}

// migratedBefore is a new database in dir migrated up to the migration
// before the one whose name ends in _name, as a build that knew no later
// one left it, open for writing.
func migratedBefore(t *testing.T, dir, name string) *sql.DB {
	t.Helper()
	db, err := openDB(t.Context(), writerDSN(filepath.Join(dir, FileName)), 1)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	ms, err := loadMigrations(migrationFiles)
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{}
	for _, m := range ms {
		if strings.HasSuffix(m.name, "_"+name) {
			if _, err := migrate(t.Context(), db, fsys); err != nil {
				t.Fatalf("migrate to before %s: %v", name, err)
			}
			return db
		}
		fsys[migrationDir+"/"+m.name] = &fstest.MapFile{Data: []byte(m.sql)}
	}
	t.Fatalf("no migration %s", name)
	return nil
}
