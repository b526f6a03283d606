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

// TestUpgradeSearchesOlderMessages writes a titled conversation and its
// messages as a build without conversation search did, then opens the
// database: the migration's Go part makes the title and the user message
// searchable, folded as new ones are, and the assistant's text not.
func TestUpgradeSearchesOlderMessages(t *testing.T) {
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
		if strings.HasSuffix(m.name, "_conversation_model_search.sql") {
			break
		}
		fsys[migrationDir+"/"+m.name] = &fstest.MapFile{Data: []byte(m.sql)}
	}
	if _, err := migrate(t.Context(), db, fsys); err != nil {
		t.Fatalf("migrate to before search: %v", err)
	}
	now := encodeTime(time.Date(2025, time.March, 30, 1, 2, 3, 0, time.UTC))
	for _, q := range []string{
		`INSERT INTO conversations VALUES ('org', 'c', 'u', 'assistant', 'CHUYẾN ĐI ĐÀ NẴNG', ?1, ?1)`,
		`INSERT INTO messages (org_id, conversation_id, seq, turn_id, role, content, tool_name, tool_call_id, created_at)
			VALUES ('org', 'c', 1, 't', 'user', 'Tìm KHÁCH SẠN gần biển', '', '', ?1),
			       ('org', 'c', 2, 't', 'assistant', 'unsearchable reply', '', '', ?1)`,
	} {
		if _, err := db.ExecContext(t.Context(), q, now); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	s := openTest(t, dir)
	for text, want := range map[string][]string{"khách sạn": {"c"}, "đà nẵng": {"c"}, "unsearchable": nil} {
		cs, err := s.FindConversations(t.Context(), store.ConversationQuery{OrgID: "org", UserID: "u", Text: text})
		var got []string
		for _, c := range cs {
			got = append(got, c.ID)
		}
		if err != nil || !cmp.Equal(want, got) {
			t.Errorf("search %q after the upgrade = %v, %v; want %v", text, got, err, want)
		}
	}
}
