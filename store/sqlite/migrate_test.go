package sqlite

import (
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

func TestParseMigrationName(t *testing.T) {
	tests := []struct {
		name    string
		want    int
		wantErr bool
	}{
		{"0001_init.sql", 1, false},
		{"0042_add_index.sql", 42, false},
		{"0001_init.SQL", 0, true},
		{"0001init.sql", 0, true},
		{"0001_.sql", 0, true},
		{"001_init.sql", 0, true},
		{"00001_init.sql", 0, true},
		{"0000_zero.sql", 0, true},
		{"+001_plus.sql", 0, true},
		{"abcd_init.sql", 0, true},
		{"0001_init.sql.bak", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseMigrationName(tc.name)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("parseMigrationName(%q) = %d, %v; want %d, error %v", tc.name, got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func FuzzParseMigrationName(f *testing.F) {
	for _, s := range []string{"0001_init.sql", "9999_x.sql", "0001_.sql", "-001_x.sql", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		v, err := parseMigrationName(name)
		if err == nil && (v < 1 || v > 9999) {
			t.Errorf("parseMigrationName(%q) = %d, want 1..9999", name, v)
		}
	})
}

func TestLoadMigrationsRejectsBadSets(t *testing.T) {
	file := &fstest.MapFile{Data: []byte("SELECT 1;")}
	tests := []struct {
		name  string
		files []string
	}{
		{"Gap", []string{"0001_a.sql", "0003_c.sql"}},
		{"Duplicate", []string{"0001_a.sql", "0001_b.sql"}},
		{"StartsAtTwo", []string{"0002_b.sql"}},
		{"BadName", []string{"0001_a.sql", "notes.txt"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for _, f := range tc.files {
				fsys[migrationDir+"/"+f] = file
			}
			if _, err := loadMigrations(fsys); err == nil {
				t.Errorf("loadMigrations(%v) succeeded, want an error", tc.files)
			}
		})
	}
}

// TestMigrateAppliesOnlyNewSteps adds a second migration to an opened
// database and checks it alone runs, once, after the first.
func TestMigrateAppliesOnlyNewSteps(t *testing.T) {
	s := openTest(t, t.TempDir())
	fsys := fstest.MapFS{
		"migrations/0001_init.sql": {Data: mustRead(t, "migrations/0001_init.sql")},
		"migrations/0002_index.sql": {Data: []byte(
			"CREATE INDEX turns_by_conversation ON turns (org_id, conversation_id);")},
	}
	for i, want := range [][]int{{2}, nil} {
		got, err := migrate(t.Context(), s.writer, fsys)
		if err != nil {
			t.Fatalf("migrate %d: %v", i, err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("migrate %d applied (-want +got):\n%s", i, d)
		}
	}
	if got := appliedRows(t, s.reader); !cmp.Equal(got, []int{1, 2}) {
		t.Errorf("schema_migrations = %v, want [1 2]", got)
	}
}

func TestMigrateRefusesNewerDatabase(t *testing.T) {
	s := openTest(t, t.TempDir())
	_, err := s.writer.ExecContext(t.Context(),
		"INSERT INTO schema_migrations VALUES (99, '0099_future.sql', 'now')")
	if err != nil {
		t.Fatalf("insert: %v", err)
	}
	if _, err := migrate(t.Context(), s.writer, migrationFiles); err == nil {
		t.Errorf("migrate on a database from a newer build succeeded, want an error")
	}
}

// TestFailedMigrationRollsBack checks a failing step leaves no trace:
// neither its own changes nor those of the steps before it in the run.
func TestFailedMigrationRollsBack(t *testing.T) {
	s := openTest(t, t.TempDir())
	fsys := fstest.MapFS{
		"migrations/0001_init.sql": {Data: mustRead(t, "migrations/0001_init.sql")},
		"migrations/0002_ok.sql":   {Data: []byte("CREATE TABLE extra (x INTEGER);")},
		"migrations/0003_bad.sql":  {Data: []byte("CREATE TABLE broken (;")},
	}
	if _, err := migrate(t.Context(), s.writer, fsys); err == nil {
		t.Fatalf("migrate with a broken step succeeded, want an error")
	}
	if got := appliedRows(t, s.reader); !cmp.Equal(got, []int{1}) {
		t.Errorf("schema_migrations = %v, want [1]", got)
	}
	var n int
	err := s.reader.QueryRowContext(t.Context(),
		"SELECT count(*) FROM sqlite_schema WHERE name = 'extra'").Scan(&n)
	if err != nil || n != 0 {
		t.Errorf("table from the rolled-back run: count %d, err %v; want 0, nil", n, err)
	}
}

// mustRead reads an embedded migration.
func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := migrationFiles.ReadFile(name)
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return b
}
