package postgres

import (
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/internal/pgtest"
	"github.com/quiverhq/quiver/store"
)

// TestUpgradeLinksOlderTurns writes a conversation of three turns and an
// empty one as a build without branches did, then opens the database:
// the migration's Go part links each turn to the one before it (by first
// message) and makes the last the head, and leaves the empty one without
// a head.
func TestUpgradeLinksOlderTurns(t *testing.T) {
	url := pgtest.URL(t)
	pool, err := connect(t.Context(), url)
	if err != nil {
		t.Fatalf("connect: %v", err)
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
	if _, err := migrate(t.Context(), pool, fsys); err != nil {
		t.Fatalf("migrate to before branches: %v", err)
	}
	now := time.Date(2025, time.March, 30, 1, 2, 3, 0, time.UTC)
	qs := []string{`INSERT INTO conversations (org_id, id, user_id, agent, title, created_at, updated_at)
		VALUES ('org', 'c', 'u', 'assistant', '', $1, $1), ('org', 'empty', 'u', 'assistant', '', $1, $1)`}
	// Stored t1, t3, t2, written t1, t2, t3: the order is by first message.
	for _, id := range []string{"t1", "t3", "t2"} {
		qs = append(qs, `INSERT INTO turns (org_id, id, user_id, conversation_id, agent, model, timezone, payer, tools, status, question, suggested, steps, started_at)
			VALUES ('org', '`+id+`', 'u', 'c', 'assistant', '', '', '', '{}', 'done', '', '', 0, $1)`)
	}
	for i, id := range []string{"t1", "t1", "t2", "t2", "t3"} {
		qs = append(qs, `INSERT INTO messages (org_id, conversation_id, seq, turn_id, role, content, tool_name, tool_call_id, created_at)
			VALUES ('org', 'c', `+string(rune('1'+i))+`, '`+id+`', 'user', 'x'::bytea, '', '', $1)`)
	}
	for _, q := range qs {
		if _, err := pool.Exec(t.Context(), q, now); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	pool.Close()
	s := openTest(t, url)
	got, err := s.TurnTree(t.Context(), "org", "c")
	if err != nil {
		t.Fatal(err)
	}
	want := store.TurnTree{Head: "t3", Turns: []store.TurnLink{{ID: "t1"}, {ID: "t2", ParentID: "t1"}, {ID: "t3", ParentID: "t2"}}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("tree after the upgrade (-want +got):\n%s", d)
	}
	var head *string
	if err := s.pool.QueryRow(t.Context(), `SELECT head_turn_id FROM conversations WHERE org_id = 'org' AND id = 'empty'`).Scan(&head); err != nil || head != nil {
		t.Errorf("empty conversation's head column: %v, %v; want NULL", head, err)
	}
}
