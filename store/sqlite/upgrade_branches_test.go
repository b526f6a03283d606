package sqlite

import (
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/store"
)

// TestUpgradeLinksOlderTurns writes a conversation of three turns and an
// empty one as a build without branches did, then opens the database:
// the migration's Go part links each turn to the one before it and
// makes the last the head, and leaves the empty one without a head.
func TestUpgradeLinksOlderTurns(t *testing.T) {
	dir := t.TempDir()
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
		if strings.HasSuffix(m.name, "_turn_branches.sql") {
			break
		}
		fsys[migrationDir+"/"+m.name] = &fstest.MapFile{Data: []byte(m.sql)}
	}
	if _, err := migrate(t.Context(), db, fsys); err != nil {
		t.Fatalf("migrate to before branches: %v", err)
	}
	now := encodeTime(time.Date(2025, time.March, 30, 1, 2, 3, 0, time.UTC))
	qs := []string{`INSERT INTO conversations (org_id, id, user_id, agent, title, created_at, updated_at)
		VALUES ('org', 'c', 'u', 'assistant', '', ?1, ?1), ('org', 'empty', 'u', 'assistant', '', ?1, ?1)`}
	// Stored t1, t3, t2, written t1, t2, t3: the order is by first message.
	for _, id := range []string{"t1", "t3", "t2"} {
		qs = append(qs, `INSERT INTO turns (org_id, id, user_id, conversation_id, agent, timezone, payer, tools, status, started_at)
			VALUES ('org', '`+id+`', 'u', 'c', 'assistant', '', '', '[]', 'done', ?1)`)
	}
	for seq, id := range []string{"t1", "t1", "t2", "t2", "t3"} {
		qs = append(qs, `INSERT INTO messages (org_id, conversation_id, seq, turn_id, role, content, tool_name, tool_call_id, created_at)
			VALUES ('org', 'c', `+string(rune('1'+seq))+`, '`+id+`', 'user', 'x', '', '', ?1)`)
	}
	for _, q := range qs {
		if _, err := db.ExecContext(t.Context(), q, now); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	s := openTest(t, dir)
	got, err := s.TurnTree(t.Context(), "org", "c")
	if err != nil {
		t.Fatal(err)
	}
	want := store.TurnTree{Head: "t3", Turns: []store.TurnLink{{ID: "t1"}, {ID: "t2", ParentID: "t1"}, {ID: "t3", ParentID: "t2"}}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("tree after the upgrade (-want +got):\n%s", d)
	}
	if e, err := s.TurnTree(t.Context(), "org", "empty"); err != nil || e.Head != "" || len(e.Turns) != 0 {
		t.Errorf("empty conversation after the upgrade: %+v, %v", e, err)
	}
	var head *string
	if err := s.reader.QueryRowContext(t.Context(), `SELECT head_turn_id FROM conversations WHERE org_id = 'org' AND id = 'empty'`).Scan(&head); err != nil || head != nil {
		t.Errorf("empty conversation's head column: %v, %v; want NULL", head, err)
	}
}
