package postgres

import (
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/quiverhq/quiver/internal/pgtest"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/storetest"
)

// TestUpgrades runs the shared upgrade checks: each on a new database an
// older build left, opened with every migration.
func TestUpgrades(t *testing.T) {
	storetest.RunUpgrades(t, func(t *testing.T, u storetest.Upgrade) store.Store {
		url := pgtest.URL(t)
		pool, err := connect(t.Context(), url)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		defer pool.Close() // Close is idempotent: also on a failure below
		if _, err := migrate(t.Context(), pool, migrationsBefore(t, u.Migration)); err != nil {
			t.Fatalf("migrate to before %s: %v", u.Migration, err)
		}
		for _, r := range u.Rows {
			q, args := r.Insert(func(n int) string { return fmt.Sprintf("$%d", n) })
			// A string in a binary column (messages.content) is its bytes.
			binary := make([]bool, len(r.Columns))
			for j, col := range r.Columns {
				var typ string
				err := pool.QueryRow(t.Context(), `SELECT data_type::text FROM information_schema.columns
					WHERE table_schema = current_schema() AND table_name = $1 AND column_name = $2`, r.Table, col).Scan(&typ)
				if err != nil {
					t.Fatalf("type of %s.%s: %v", r.Table, col, err)
				}
				binary[j] = typ == "bytea"
			}
			for i, a := range args {
				if s, ok := a.(string); ok && binary[i%len(r.Columns)] {
					args[i] = []byte(s)
				}
			}
			if _, err := pool.Exec(t.Context(), q, args...); err != nil {
				t.Fatalf("write %s as before %s: %v", r.Table, u.Migration, err)
			}
		}
		pool.Close()
		return openTest(t, url)
	})
}

// migrationsBefore is the embedded migrations before the one whose name
// ends in _name, as a build that knew no later one had them.
func migrationsBefore(t *testing.T, name string) fs.FS {
	t.Helper()
	ms, err := loadMigrations(migrationFiles)
	if err != nil {
		t.Fatalf("loadMigrations: %v", err)
	}
	fsys := fstest.MapFS{}
	for _, m := range ms {
		if strings.HasSuffix(m.name, "_"+name) {
			return fsys
		}
		fsys[migrationDir+"/"+m.name] = &fstest.MapFile{Data: []byte(m.sql)}
	}
	t.Fatalf("no migration %s", name)
	return nil
}
