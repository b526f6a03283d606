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

// TestUpgradeSearchesOlderMessages writes a titled conversation and its
// messages as a build without conversation search did, then opens the
// database: the migration's Go part makes the title and the user message
// searchable, folded as new ones are (a NUL in a message included), and
// the assistant's text not.
func TestUpgradeSearchesOlderMessages(t *testing.T) {
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
		if strings.HasSuffix(m.name, "_conversation_model_search.sql") {
			break
		}
		fsys[migrationDir+"/"+m.name] = &fstest.MapFile{Data: []byte(m.sql)}
	}
	if _, err := migrate(t.Context(), pool, fsys); err != nil {
		t.Fatalf("migrate to before search: %v", err)
	}
	now := time.Date(2025, time.March, 30, 1, 2, 3, 0, time.UTC)
	for _, q := range []string{
		`INSERT INTO conversations VALUES ('org', 'c', 'u', 'assistant', 'CHUYẾN ĐI ĐÀ NẴNG', $1, $1)`,
		`INSERT INTO messages (org_id, conversation_id, seq, turn_id, role, content, tool_name, tool_call_id, created_at)
			VALUES ('org', 'c', 1, 't', 'user', convert_to('Tìm KHÁCH SẠN gần biển', 'UTF8') || '\x00ff'::bytea, '', '', $1),
			       ('org', 'c', 2, 't', 'assistant', 'unsearchable reply'::bytea, '', '', $1)`,
	} {
		if _, err := pool.Exec(t.Context(), q, now); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	pool.Close()
	s := openTest(t, url)
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
