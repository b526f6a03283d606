package sqlite

import (
	"testing"

	"github.com/quiverhq/quiver/store/storetest"
)

// TestDeleteConversationLeavesNoRow runs storetest.DeleteLeavesNoRow on
// every table of the schema.
func TestDeleteConversationLeavesNoRow(t *testing.T) {
	s := openTest(t, t.TempDir())
	count := func(table, column, orgID, value string) (int, error) {
		var n int
		err := s.writer.QueryRowContext(t.Context(), `SELECT count(*) FROM "`+table+`" WHERE org_id = ? AND "`+column+`" = ?`, orgID, value).Scan(&n)
		return n, err
	}
	storetest.DeleteLeavesNoRow(t, s, "acme", schemaOf(t.Context(), t, s.writer), count, 9)
}
