package app_test

import (
	"database/sql"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/quiverhq/quiver/internal/pgtest"
)

// TestMigrateSQLite: status reports every step pending and creates no
// data folder; up applies them once; status then says up to date, and
// names the store.
func TestMigrateSQLite(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	code, out, stderr := run(t, data, "migrate", "status")
	if code != 0 || !strings.Contains(out, "store: sqlite "+filepath.Join(data, "quiver.db")) || !strings.Contains(out, "pending:\n  0001_init.sql") {
		t.Fatalf("status of no database: exit %d\n%s%s", code, out, stderr)
	}
	if _, err := os.Stat(data); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("migrate status created the data folder: %v", err)
	}
	code, out, stderr = run(t, data, "migrate", "up")
	if code != 0 || !strings.Contains(out, "applied ") {
		t.Fatalf("up: exit %d\n%s%s", code, out, stderr)
	}
	code, out, _ = run(t, data, "migrate", "up")
	if code != 0 || !strings.Contains(out, "applied 0 migration(s)") {
		t.Errorf("up again: exit %d\n%s", code, out)
	}
	code, out, _ = run(t, data, "migrate", "status", "--json")
	var st struct {
		Store            string
		Known, Current   int
		Applied, Pending []json.RawMessage
	}
	if err := json.Unmarshal([]byte(out), &st); code != 0 || err != nil || st.Current != st.Known || len(st.Pending) != 0 || len(st.Applied) != st.Known {
		t.Errorf("status --json: exit %d, %v\n%s", code, err, out)
	}
	if code, _, stderr := run(t, data, "migrate", "up", "--json"); code != 2 || !strings.Contains(stderr, "--json goes with status") {
		t.Errorf("up --json: exit %d, %q", code, stderr)
	}
}

// TestSchemaTooNewRefused: a database a newer build migrated is reported
// by status and refused by every command that opens it, writing nothing.
func TestSchemaTooNewRefused(t *testing.T) {
	data := t.TempDir()
	if code, _, stderr := run(t, data, "migrate", "up"); code != 0 {
		t.Fatal(stderr)
	}
	db, err := sql.Open("sqlite", filepath.Join(data, "quiver.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("INSERT INTO schema_migrations VALUES (999, '0999_future.sql', '2030-01-01T00:00:00.000Z')"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if code, out, _ := run(t, data, "migrate", "status"); code != 0 || !strings.Contains(out, "newer than this build") {
		t.Errorf("status of a newer database: exit %d\n%s", code, out)
	}
	code, _, stderr := run(t, data, "mcp", "list")
	if code != 1 || !strings.Contains(stderr, "newer than this build of quiver knows") {
		t.Errorf("a command on a newer database: exit %d, %q", code, stderr)
	}
}

// TestMigratePostgres: with QUIVER_DATABASE_URL the store is PostgreSQL,
// named with its password hidden, and migrated by up.
func TestMigratePostgres(t *testing.T) {
	url := pgtest.URL(t)
	vars := map[string]string{"QUIVER_DATABASE_URL": url}
	code, out, stderr := runEnv(t, t.TempDir(), vars, "", "migrate", "up")
	if code != 0 || !strings.Contains(out, "store: postgres postgres://") || strings.Contains(out, passwordOf(t, url)) {
		t.Fatalf("up on PostgreSQL: exit %d\n%s%s", code, out, stderr)
	}
	if code, out, _ := runEnv(t, t.TempDir(), vars, "", "migrate", "status"); code != 0 || !strings.Contains(out, "schema: up to date") {
		t.Errorf("status on PostgreSQL: exit %d\n%s", code, out)
	}
	bad := map[string]string{"QUIVER_DATABASE_URL": "mysql://u:s3cret@h/db"}
	if code, _, stderr := runEnv(t, t.TempDir(), bad, "", "migrate", "status"); code != 2 || strings.Contains(stderr, "s3cret") {
		t.Errorf("a bad URL: exit %d, %q", code, stderr)
	}
}

// passwordOf is the password in a postgres:// URL.
func passwordOf(t *testing.T, url string) string {
	t.Helper()
	_, rest, _ := strings.Cut(url, "://")
	userinfo, _, _ := strings.Cut(rest, "@")
	_, pw, ok := strings.Cut(userinfo, ":")
	if !ok || pw == "" {
		t.Fatalf("no password in the test server's URL")
	}
	return pw
}
