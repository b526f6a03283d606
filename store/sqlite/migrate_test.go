package sqlite

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/store"
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

// TestMigrateAppliesOnlyNewSteps adds a migration after the embedded ones
// to an opened database and checks it alone runs, once, after them.
func TestMigrateAppliesOnlyNewSteps(t *testing.T) {
	s := openTest(t, t.TempDir())
	fsys, next := withExtraMigrations(t,
		"CREATE INDEX turns_by_agent ON turns (org_id, agent);")
	for i, want := range [][]int{{next}, nil} {
		got, err := migrate(t.Context(), s.writer, fsys)
		if err != nil {
			t.Fatalf("migrate %d: %v", i, err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("migrate %d applied (-want +got):\n%s", i, d)
		}
	}
	if want := append(allVersions(t), next); !cmp.Equal(appliedRows(t, s.reader), want) {
		t.Errorf("schema_migrations = %v, want %v", appliedRows(t, s.reader), want)
	}
}

func TestMigrateRefusesNewerDatabase(t *testing.T) {
	s := openTest(t, t.TempDir())
	_, err := s.writer.ExecContext(t.Context(),
		"INSERT INTO schema_migrations VALUES (99, '0099_future.sql', 'now')")
	if err != nil {
		t.Fatalf("insert: %v", err)
	}
	if _, err := migrate(t.Context(), s.writer, migrationFiles); !errors.Is(err, store.ErrSchemaTooNew) {
		t.Errorf("migrate on a database from a newer build = %v, want ErrSchemaTooNew", err)
	}
}

// TestStatus: a missing database has every step pending and is not
// created; an opened one has every step applied; one a newer build
// migrated is too new, and Open refuses it.
func TestStatus(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	st, err := Status(t.Context(), dir)
	if err != nil || st.Current != 0 || len(st.Pending) != st.Known || st.Known != len(allVersions(t)) || len(st.Applied) != 0 {
		t.Fatalf("Status of no database = %+v, %v", st, err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Status created the data folder: %v", err)
	}
	s := openTest(t, dir)
	st, err = Status(t.Context(), dir)
	if err != nil || st.Current != st.Known || len(st.Pending) != 0 || len(st.Applied) != st.Known || st.TooNew() {
		t.Fatalf("Status after Open = %+v, %v", st, err)
	}
	if st.Applied[0].Name != "0001_init.sql" || st.Applied[0].AppliedAt.IsZero() {
		t.Errorf("first applied step = %+v", st.Applied[0])
	}
	if _, err := s.writer.ExecContext(t.Context(), "INSERT INTO schema_migrations VALUES (99, '0099_future.sql', '2030-01-01T00:00:00.000Z')"); err != nil {
		t.Fatal(err)
	}
	if st, err = Status(t.Context(), dir); err != nil || !st.TooNew() || st.Current != 99 {
		t.Errorf("Status of a newer database = %+v, %v", st, err)
	}
	s.Close()
	if _, err := Open(t.Context(), dir); !errors.Is(err, store.ErrSchemaTooNew) {
		t.Errorf("Open of a newer database = %v, want ErrSchemaTooNew", err)
	}
}

// TestFailedMigrationRollsBack checks a failing step leaves no trace:
// neither its own changes nor those of the steps before it in the run.
func TestFailedMigrationRollsBack(t *testing.T) {
	s := openTest(t, t.TempDir())
	fsys, _ := withExtraMigrations(t,
		"CREATE TABLE extra (x INTEGER);",
		"CREATE TABLE broken (;")
	if _, err := migrate(t.Context(), s.writer, fsys); err == nil {
		t.Fatalf("migrate with a broken step succeeded, want an error")
	}
	if got, want := appliedRows(t, s.reader), allVersions(t); !cmp.Equal(got, want) {
		t.Errorf("schema_migrations = %v, want %v", got, want)
	}
	var n int
	err := s.reader.QueryRowContext(t.Context(),
		"SELECT count(*) FROM sqlite_schema WHERE name = 'extra'").Scan(&n)
	if err != nil || n != 0 {
		t.Errorf("table from the rolled-back run: count %d, err %v; want 0, nil", n, err)
	}
}

// withExtraMigrations returns the embedded migrations followed by one step
// per SQL text, numbered on from the last, and the first extra version.
func withExtraMigrations(t *testing.T, sqls ...string) (fstest.MapFS, int) {
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
	for i, q := range sqls {
		name := fmt.Sprintf("%s/%04d_extra%d.sql", migrationDir, next+i, i)
		fsys[name] = &fstest.MapFile{Data: []byte(q)}
	}
	return fsys, next
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

// TestUpgradeFrom0001 writes a database as a build that knew only 0001
// did, then opens it: Open must apply the later migrations and read the
// old rows back with the new fields at their zero values.
func TestUpgradeFrom0001(t *testing.T) {
	dir := t.TempDir()
	started := time.Date(2025, time.March, 30, 1, 2, 3, 456_000_000, time.UTC)
	oldTurn := store.Turn{
		ID: "t1", OrgID: "o1", UserID: "u1", ConversationID: "c1", Agent: "assistant",
		Timezone: "Europe/Zurich", Payer: "org", Tools: []string{"b", "a"},
		Status: store.TurnDone, StartedAt: started,
	}
	oldMsg := store.Message{
		ConversationID: "c1", TurnID: "t1", Seq: 1, Role: "tool", Content: "42",
		ToolName: "calculate", ToolCallID: "call_1", CreatedAt: started,
	}
	write0001(t, dir, oldTurn, oldMsg)

	s := openTest(t, dir)
	if got, want := appliedRows(t, s.reader), allVersions(t); !cmp.Equal(got, want) {
		t.Errorf("schema_migrations after upgrade = %v, want %v", got, want)
	}
	gotTurn, err := s.GetTurn(t.Context(), "o1", "t1")
	if err != nil {
		t.Fatalf("GetTurn: %v", err)
	}
	if d := cmp.Diff(oldTurn, gotTurn); d != "" {
		t.Errorf("turn from 0001 (-want +got):\n%s", d)
	}
	gotMsgs, err := s.ListMessages(t.Context(), "o1", "c1", 0)
	if err != nil {
		t.Fatalf("ListMessages: %v", err)
	}
	if d := cmp.Diff([]store.Message{oldMsg}, gotMsgs); d != "" {
		t.Errorf("messages from 0001 (-want +got):\n%s", d)
	}
	seq, err := s.AppendMessage(t.Context(), "o1", store.Message{ConversationID: "c1", Role: "tool", IsError: true})
	if err != nil || seq != 2 {
		t.Errorf("AppendMessage after upgrade = %d, %v; want 2, nil", seq, err)
	}
}

// write0001 creates dir/quiver.db with migration 0001 alone and inserts tu
// and m with 0001's columns.
func write0001(t *testing.T, dir string, tu store.Turn, m store.Message) {
	t.Helper()
	db, err := openDB(t.Context(), writerDSN(filepath.Join(dir, FileName)), 1)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer db.Close()
	fsys := fstest.MapFS{"migrations/0001_init.sql": {Data: mustRead(t, "migrations/0001_init.sql")}}
	if _, err := migrate(t.Context(), db, fsys); err != nil {
		t.Fatalf("migrate to 0001: %v", err)
	}
	tools, err := encodeTools(tu.Tools)
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.ExecContext(t.Context(), `INSERT INTO turns VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		tu.OrgID, tu.ID, tu.UserID, tu.ConversationID, tu.Agent, tu.Timezone, tu.Payer,
		tools, tu.Status, encodeTime(tu.StartedAt))
	if err != nil {
		t.Fatalf("insert 0001 turn: %v", err)
	}
	_, err = db.ExecContext(t.Context(), `INSERT INTO messages VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		tu.OrgID, m.ConversationID, m.Seq, m.TurnID, m.Role, m.Content, m.ToolName,
		m.ToolCallID, encodeTime(m.CreatedAt))
	if err != nil {
		t.Fatalf("insert 0001 message: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
}

// TestUpgradeFrom0005 writes a user as a build that knew migrations up to
// 0005 did, then opens the database: the user must read back active.
func TestUpgradeFrom0005(t *testing.T) {
	dir := t.TempDir()
	db, err := openDB(t.Context(), writerDSN(filepath.Join(dir, FileName)), 1)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	fsys := fstest.MapFS{}
	for _, name := range []string{"0001_init.sql", "0002_conversations_usage.sql",
		"0003_mcp_servers.sql", "0004_intents.sql", "0005_accounts.sql"} {
		fsys[migrationDir+"/"+name] = &fstest.MapFile{Data: mustRead(t, migrationDir+"/"+name)}
	}
	if _, err := migrate(t.Context(), db, fsys); err != nil {
		t.Fatalf("migrate to 0005: %v", err)
	}
	created := time.Date(2025, time.March, 30, 1, 2, 3, 0, time.UTC)
	for _, q := range []string{
		`INSERT INTO orgs VALUES ('org', 'Org', ?)`,
		`INSERT INTO users VALUES ('org', 'u', 'U', '', '', 'admin', ?, ?1)`,
	} {
		if _, err := db.ExecContext(t.Context(), q, encodeTime(created)); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	s := openTest(t, dir)
	got, err := s.GetUser(t.Context(), "org", "u")
	want := store.User{OrgID: "org", ID: "u", DisplayName: "U", Role: store.RoleAdmin, CreatedAt: created, UpdatedAt: created}
	if err != nil || !cmp.Equal(want, got) {
		t.Errorf("GetUser after upgrade = %+v, %v; want %+v", got, err, want)
	}
}

// TestUpgradeFrom0007 writes a community's Deliberate Tool Mode settings as
// a build that knew migrations up to 0007 did, then opens the database:
// they read back unchanged, with the always-on opt-in off.
func TestUpgradeFrom0007(t *testing.T) {
	dir := t.TempDir()
	db := migratedBefore(t, dir, "intent_gate_always_on.sql")
	updated := time.Date(2025, time.March, 30, 1, 2, 3, 0, time.UTC)
	if _, err := db.ExecContext(t.Context(), `INSERT INTO intent_settings VALUES ('org', 1, 3, ?)`, encodeTime(updated)); err != nil {
		t.Fatalf("insert 0007 settings: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	s := openTest(t, dir)
	got, err := s.GetIntentSettings(t.Context(), "org")
	want := store.IntentSettings{OrgID: "org", Enabled: true, HistoryTurns: 3, UpdatedAt: updated}
	if err != nil || !cmp.Equal(want, got) {
		t.Errorf("GetIntentSettings after upgrade = %+v, %v; want %+v", got, err, want)
	}
}

// TestMigrateUp: Migrate, as "quiver migrate up" runs it, applies every
// step of a new database once, and nothing the second time.
func TestMigrateUp(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "up")
	applied, err := Migrate(t.Context(), dir)
	if err != nil || !cmp.Equal(applied, allVersions(t)) {
		t.Errorf("Migrate of a new database applied %v, %v; want %v", applied, err, allVersions(t))
	}
	if applied, err := Migrate(t.Context(), dir); err != nil || len(applied) != 0 {
		t.Errorf("Migrate again applied %v, %v; want none", applied, err)
	}
}
