package sqlite

import (
	"slices"
	"testing"

	"github.com/quiverhq/quiver/store/storetest"
)

// TestDeleteConversationLeavesNoRow looks in every table of the schema
// that has a conversation_id column (and in conversations, by id): the
// deleted conversation has no row left in any, while the kept one, seeded
// alike, has a row in each (so a table the seed does not reach fails here
// until the delete and the seed cover it). runs is the exception: a
// conversation with a run refuses the delete.
func TestDeleteConversationLeavesNoRow(t *testing.T) {
	s := openTest(t, t.TempDir())
	ctx := t.Context()
	storetest.SeedConversation(t, s, "acme", "ana", "gone", "a")
	storetest.SeedConversation(t, s, "acme", "ana", "kept", "b")
	if err := s.DeleteConversation(ctx, "acme", "ana", "gone"); err != nil {
		t.Fatalf("DeleteConversation: %v", err)
	}
	checked := 0
	for _, tb := range schemaOf(ctx, t, s.writer) {
		col := ""
		for _, c := range tb.Columns {
			if c.Name == "conversation_id" || tb.Name == "conversations" && c.Name == "id" {
				col = c.Name
			}
		}
		if col == "" {
			continue
		}
		checked++
		count := func(id string) int {
			var n int
			if err := s.writer.QueryRowContext(ctx, `SELECT count(*) FROM "`+tb.Name+`" WHERE org_id = 'acme' AND "`+col+`" = ?`, id).Scan(&n); err != nil {
				t.Fatalf("count %s: %v", tb.Name, err)
			}
			return n
		}
		if n := count("gone"); n != 0 {
			t.Errorf("table %s holds %d rows of the deleted conversation", tb.Name, n)
		}
		if n := count("kept"); n == 0 && !slices.Contains([]string{"runs"}, tb.Name) {
			t.Errorf("table %s holds no row of the kept conversation: the seed does not reach it", tb.Name)
		}
	}
	if checked < 9 {
		t.Errorf("checked %d tables, want every table of a conversation's records", checked)
	}
}
