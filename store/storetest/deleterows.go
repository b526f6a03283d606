package storetest

import (
	"slices"
	"testing"

	"github.com/quiverhq/quiver/store"
)

// RowCounter counts a backend's rows for the checks that look at its
// tables directly: how many rows of table have org_id = orgID and column
// = value. table and column come from the backend's own schema.
type RowCounter func(table, column, orgID, value string) (int, error)

// DeleteLeavesNoRow looks in every table of schema that has a
// conversation_id column (and in conversations, by id) after s deleted a
// conversation: the deleted one has no row left in any, while a kept one,
// seeded alike (SeedConversation), has a row in each, so a table the seed
// does not reach fails here until the delete and the seed cover it. runs
// is the exception: a conversation with a run refuses the delete. At
// least minTables tables must be checked, so a schema read that finds
// fewer fails. orgID should be unique to the test when s is shared.
func DeleteLeavesNoRow(t *testing.T, s store.Store, orgID string, schema []SchemaTable, count RowCounter, minTables int) {
	t.Helper()
	SeedConversation(t, s, orgID, "ana", "gone", "a")
	SeedConversation(t, s, orgID, "ana", "kept", "b")
	if err := s.DeleteConversation(t.Context(), orgID, "ana", "gone"); err != nil {
		t.Fatalf("DeleteConversation: %v", err)
	}
	checked := 0
	for _, tb := range schema {
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
		rows := func(id string) int {
			n, err := count(tb.Name, col, orgID, id)
			if err != nil {
				t.Fatalf("count %s: %v", tb.Name, err)
			}
			return n
		}
		if n := rows("gone"); n != 0 {
			t.Errorf("table %s holds %d rows of the deleted conversation", tb.Name, n)
		}
		if n := rows("kept"); n == 0 && !slices.Contains([]string{"runs"}, tb.Name) {
			t.Errorf("table %s holds no row of the kept conversation: the seed does not reach it", tb.Name)
		}
	}
	if checked < minTables {
		t.Errorf("checked %d tables, want every table of a conversation's records (at least %d)", checked, minTables)
	}
}
