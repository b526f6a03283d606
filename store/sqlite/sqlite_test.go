package sqlite

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/storetest"
)

// openTest opens a store in dir and closes it when the test ends.
func openTest(t testing.TB, dir string) *Store {
	t.Helper()
	s, err := Open(t.Context(), dir)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return openTest(t, t.TempDir())
	})
}

func TestReopenKeepsData(t *testing.T) {
	dir := t.TempDir()
	want := store.Turn{ID: "t1", OrgID: "o1", Tools: []string{"b", "a"}, StartedAt: time.Unix(1, 5e6).UTC()}
	s, err := Open(t.Context(), dir)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if err := s.PutTurn(t.Context(), want); err != nil {
		t.Fatalf("PutTurn: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	s = openTest(t, dir)
	got, err := s.GetTurn(t.Context(), want.OrgID, want.ID)
	if err != nil {
		t.Fatalf("GetTurn after reopen: %v", err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("GetTurn after reopen (-want +got):\n%s", d)
	}
}

func TestReopenAppliesNoMigrationTwice(t *testing.T) {
	dir := t.TempDir()
	for i := range 3 {
		if err := openTest(t, dir).Close(); err != nil {
			t.Fatalf("Close %d: %v", i, err)
		}
	}
	s := openTest(t, dir)
	if got := appliedRows(t, s.reader); !cmp.Equal(got, allVersions(t)) {
		t.Errorf("schema_migrations after 4 opens = %v, want each of %v once", got, allVersions(t))
	}
	applied, err := migrate(t.Context(), s.writer, migrationFiles)
	if err != nil {
		t.Fatalf("migrate: %v", err)
	}
	if len(applied) != 0 {
		t.Errorf("migrate on an up-to-date database applied %v, want none", applied)
	}
}

// appliedRows returns every version in schema_migrations, repeats kept.
func appliedRows(t *testing.T, db *sql.DB) []int {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), "SELECT version FROM schema_migrations ORDER BY version")
	if err != nil {
		t.Fatalf("query schema_migrations: %v", err)
	}
	defer rows.Close()
	var vs []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			t.Fatalf("scan: %v", err)
		}
		vs = append(vs, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("rows: %v", err)
	}
	return vs
}

// allVersions returns the versions of the embedded migrations.
func allVersions(t *testing.T) []int {
	t.Helper()
	ms, err := loadMigrations(migrationFiles)
	if err != nil {
		t.Fatalf("loadMigrations: %v", err)
	}
	var vs []int
	for _, m := range ms {
		vs = append(vs, m.version)
	}
	return vs
}

func TestOpenCreatesPrivateDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "quiver")
	openTest(t, dir)
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatalf("Stat: %v", err)
	}
	if !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Errorf("data dir mode = %v, want drwx------", fi.Mode())
	}
	if _, err := os.Stat(filepath.Join(dir, FileName)); err != nil {
		t.Errorf("database file: %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		dir  string
	}{
		{"EmptyDir", t.Context(), ""},
		{"DirIsAFile", t.Context(), file},
		{"Cancelled", cancelled, t.TempDir()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Open(tc.ctx, tc.dir)
			if err == nil {
				s.Close()
				t.Fatalf("Open(%q) succeeded, want an error", tc.dir)
			}
		})
	}
}

// TestPragmas checks the settings every connection is opened with.
func TestPragmas(t *testing.T) {
	s := openTest(t, t.TempDir())
	tests := []struct {
		db     *sql.DB
		pragma string
		want   string
	}{
		{s.writer, "journal_mode", "wal"},
		{s.reader, "journal_mode", "wal"},
		{s.writer, "foreign_keys", "1"},
		{s.reader, "foreign_keys", "1"},
		{s.writer, "synchronous", "1"}, // NORMAL
		{s.writer, "busy_timeout", "5000"},
		{s.reader, "busy_timeout", "5000"},
		{s.writer, "query_only", "0"},
		{s.reader, "query_only", "1"},
	}
	for _, tc := range tests {
		name := tc.pragma + "/writer"
		if tc.db == s.reader {
			name = tc.pragma + "/reader"
		}
		t.Run(name, func(t *testing.T) {
			var got string
			if err := tc.db.QueryRowContext(t.Context(), "PRAGMA "+tc.pragma).Scan(&got); err != nil {
				t.Fatalf("PRAGMA %s: %v", tc.pragma, err)
			}
			if got != tc.want {
				t.Errorf("PRAGMA %s = %q, want %q", tc.pragma, got, tc.want)
			}
		})
	}
}

// TestReaderRefusesWrites guards the single-writer design: a write that
// slipped onto the reader pool would fail loudly instead of racing.
func TestReaderRefusesWrites(t *testing.T) {
	s := openTest(t, t.TempDir())
	_, err := s.reader.ExecContext(t.Context(), "DELETE FROM turns")
	if err == nil {
		t.Errorf("write through the reader pool succeeded, want an error")
	}
}

func TestPathWithURICharacters(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a?b#c%20d")
	s := openTest(t, dir)
	if err := s.PutTurn(t.Context(), store.Turn{ID: "t", OrgID: "o"}); err != nil {
		t.Fatalf("PutTurn: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, FileName)); err != nil {
		t.Errorf("database not at the literal path: %v", err)
	}
}
