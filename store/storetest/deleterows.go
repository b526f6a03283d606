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

// EraseLeavesNoRow looks in every table of schema that has an org_id
// column after s erased a user (EraseUser): no text column of any of
// them holds the erased user's ID (their usage records stay with user_id
// ""), while a user kept, seeded alike (SeedUser), has a row in each
// user_id and owner_id column, so a table the seed does not reach fails
// here until the erase and the seed cover it. runs is the exception: a
// user with a run refuses the erase. At least minTables tables must
// hold such a column, so a schema read that finds fewer fails. orgID
// should be unique to the test when s is shared.
func EraseLeavesNoRow(t *testing.T, s store.Store, orgID string, schema []SchemaTable, count RowCounter, minTables int) {
	t.Helper()
	const gone, kept = "erased-person", "kept-person"
	if err := s.CreateOrg(t.Context(), store.Org{ID: orgID, Name: "Erase", CreatedAt: seedMonths[0]}); err != nil {
		t.Fatalf("CreateOrg: %v", err)
	}
	SeedUser(t, s, orgID, gone, "g")
	SeedUser(t, s, orgID, kept, "k")
	if err := s.EraseUser(t.Context(), orgID, gone); err != nil {
		t.Fatalf("EraseUser: %v", err)
	}
	rows := func(table, col, value string) int {
		n, err := count(table, col, orgID, value)
		if err != nil {
			t.Fatalf("count %s.%s: %v", table, col, err)
		}
		return n
	}
	checked := 0
	for _, tb := range schema {
		if !slices.ContainsFunc(tb.Columns, func(c SchemaColumn) bool { return c.Name == "org_id" }) {
			continue
		}
		person := false
		for _, c := range tb.Columns {
			if !slices.Contains(c.Kinds, store.KindText) {
				continue
			}
			if n := rows(tb.Name, c.Name, gone); n != 0 {
				t.Errorf("%s.%s holds the erased user's ID in %d rows", tb.Name, c.Name, n)
			}
			if c.Name != "user_id" && c.Name != "owner_id" && !(tb.Name == "users" && c.Name == "id") {
				continue
			}
			person = true
			if n := rows(tb.Name, c.Name, kept); n == 0 && tb.Name != "runs" {
				t.Errorf("%s.%s holds no row of the kept user: the seed does not reach it", tb.Name, c.Name)
			}
		}
		if person {
			checked++
		}
	}
	if checked < minTables {
		t.Errorf("checked %d tables holding a user's ID, want at least %d", checked, minTables)
	}
}
