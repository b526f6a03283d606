package postgres

import (
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/quiverhq/quiver/internal/pgtest"
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

// versionsOf returns the versions of ms in order.
func versionsOf(ms []Migration) []int {
	var vs []int
	for _, m := range ms {
		vs = append(vs, m.Version)
	}
	return vs
}

// migrationStatus returns Status' answer, failing the test on error.
func migrationStatus(t *testing.T, url string) MigrationStatus {
	t.Helper()
	st, err := Status(t.Context(), url)
	if err != nil {
		t.Fatalf("Status: %v", err)
	}
	return st
}

// TestMigrateFresh: a new database has every migration pending; Open
// applies them all, after which none is pending.
func TestMigrateFresh(t *testing.T) {
	url := pgtest.URL(t)
	all := allVersions(t)
	before := migrationStatus(t, url)
	if before.Current != 0 || len(before.Applied) != 0 || !cmp.Equal(versionsOf(before.Pending), all) {
		t.Errorf("Status of a new database = %+v, want nothing applied and %v pending", before, all)
	}
	openTest(t, url)
	after := migrationStatus(t, url)
	if after.Current != len(all) || after.Known != len(all) || len(after.Pending) != 0 ||
		!cmp.Equal(versionsOf(after.Applied), all) || after.TooNew() {
		t.Errorf("Status after Open = %+v, want %v applied", after, all)
	}
	for _, m := range after.Applied {
		if m.Name == "" || m.AppliedAt.IsZero() {
			t.Errorf("applied migration %+v lacks a name or a time", m)
		}
	}
}

// TestReopenChangesNothing: opening and migrating an up-to-date database
// applies nothing and leaves schema_migrations as it was.
func TestReopenChangesNothing(t *testing.T) {
	url := pgtest.URL(t)
	openTest(t, url)
	before := migrationStatus(t, url)
	s := openTest(t, url)
	applied, err := Migrate(t.Context(), url)
	if err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	if len(applied) != 0 {
		t.Errorf("Migrate on an up-to-date database applied %v, want none", applied)
	}
	if d := cmp.Diff(before, migrationStatus(t, url)); d != "" {
		t.Errorf("status changed by a second Open and Migrate (-before +after):\n%s", d)
	}
	if got := countRows(t, s.pool, "schema_migrations"); got != len(allVersions(t)) {
		t.Errorf("schema_migrations holds %d rows, want %d", got, len(allVersions(t)))
	}
}

// countRows returns how many rows a table holds.
func countRows(t *testing.T, pool *pgxpool.Pool, table string) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(t.Context(), "SELECT count(*) FROM "+table).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

// TestConcurrentOpensMigrateOnce: stores opened at once on a new
// database (replicas starting together) all succeed, and exactly one of
// their migrations applies the steps.
func TestConcurrentOpensMigrateOnce(t *testing.T) {
	url := pgtest.URL(t)
	const replicas = 6
	pools := make([]*pgxpool.Pool, replicas)
	for i := range pools {
		var err error
		if pools[i], err = connect(t.Context(), url); err != nil {
			t.Fatalf("connect: %v", err)
		}
		t.Cleanup(pools[i].Close)
	}
	applied := make([][]int, replicas)
	errs := make([]error, replicas)
	var wg sync.WaitGroup
	for i, pool := range pools {
		wg.Go(func() { applied[i], errs[i] = migrate(t.Context(), pool, migrationFiles) })
	}
	wg.Wait()
	migrated := 0
	for i := range replicas {
		switch {
		case errs[i] != nil:
			t.Errorf("replica %d: migrate: %v", i, errs[i])
		case cmp.Equal(applied[i], allVersions(t)):
			migrated++
		case len(applied[i]) != 0:
			t.Errorf("replica %d applied %v, want all or none", i, applied[i])
		}
	}
	if migrated != 1 {
		t.Errorf("%d replicas applied the migrations, want exactly 1", migrated)
	}
	if got := countRows(t, pools[0], "schema_migrations"); got != len(allVersions(t)) {
		t.Errorf("schema_migrations holds %d rows, want %d", got, len(allVersions(t)))
	}
}

// TestSchemaTooNewRefused: a database that recorded a migration this
// build does not know is refused by Open and Migrate with ErrSchemaTooNew,
// changing nothing, and Status says so.
func TestSchemaTooNewRefused(t *testing.T) {
	url := pgtest.URL(t)
	s := openTest(t, url)
	future := len(allVersions(t)) + 1
	_, err := s.pool.Exec(t.Context(), "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
		future, fmt.Sprintf("%04d_future.sql", future))
	if err != nil {
		t.Fatalf("insert: %v", err)
	}
	before := migrationStatus(t, url)
	if !before.TooNew() || before.Current != future {
		t.Errorf("Status = %+v, want too new at %d", before, future)
	}
	if s, err := Open(t.Context(), url); !errors.Is(err, ErrSchemaTooNew) {
		if err == nil {
			s.Close()
		}
		t.Errorf("Open on a newer schema: err = %v, want ErrSchemaTooNew", err)
	}
	if _, err := Migrate(t.Context(), url); !errors.Is(err, ErrSchemaTooNew) {
		t.Errorf("Migrate on a newer schema: err = %v, want ErrSchemaTooNew", err)
	}
	if d := cmp.Diff(before, migrationStatus(t, url)); d != "" {
		t.Errorf("refused Open changed the status (-before +after):\n%s", d)
	}
}

// withExtraMigrations returns the embedded migrations plus steps after
// them, and the version of the first extra one.
func withExtraMigrations(t *testing.T, steps ...string) (fs.FS, int) {
	t.Helper()
	fsys := fstest.MapFS{}
	ms, err := loadMigrations(migrationFiles)
	if err != nil {
		t.Fatalf("loadMigrations: %v", err)
	}
	for _, m := range ms {
		fsys[migrationDir+"/"+m.name] = &fstest.MapFile{Data: []byte(m.sql)}
	}
	next := len(ms) + 1
	for i, sql := range steps {
		fsys[fmt.Sprintf("%s/%04d_extra.sql", migrationDir, next+i)] = &fstest.MapFile{Data: []byte(sql)}
	}
	return fsys, next
}

// TestMigrateAppliesOnlyNewSteps adds a migration after the embedded ones
// and checks it alone runs, once.
func TestMigrateAppliesOnlyNewSteps(t *testing.T) {
	s := openTest(t, pgtest.URL(t))
	fsys, next := withExtraMigrations(t, "CREATE INDEX turns_by_agent ON turns (org_id, agent);")
	for i, want := range [][]int{{next}, nil} {
		got, err := migrate(t.Context(), s.pool, fsys)
		if err != nil {
			t.Fatalf("migrate %d: %v", i, err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("migrate %d applied (-want +got):\n%s", i, d)
		}
	}
}

// TestFailedMigrationRollsBack: a failing step leaves no trace, neither
// its own changes nor those of the steps before it in the run.
func TestFailedMigrationRollsBack(t *testing.T) {
	url := pgtest.URL(t)
	s := openTest(t, url)
	before := migrationStatus(t, url)
	fsys, _ := withExtraMigrations(t, "CREATE TABLE extra (x integer);", "CREATE TABLE broken (;")
	if _, err := migrate(t.Context(), s.pool, fsys); err == nil {
		t.Fatalf("migrate with a broken step succeeded, want an error")
	}
	var exists bool
	if err := s.pool.QueryRow(t.Context(), "SELECT to_regclass('extra') IS NOT NULL").Scan(&exists); err != nil {
		t.Fatalf("look for extra: %v", err)
	}
	if exists {
		t.Errorf("the step before the broken one was kept")
	}
	if d := cmp.Diff(before, migrationStatus(t, url)); d != "" {
		t.Errorf("failed migration changed the status (-before +after):\n%s", d)
	}
}
