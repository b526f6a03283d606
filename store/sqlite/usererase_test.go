package sqlite

import (
	"testing"

	"github.com/quiverhq/quiver/store/storetest"
)

// TestEraseUserLeavesNoRow runs storetest.EraseLeavesNoRow on every
// table of the schema, and looks in the memories' full-text table
// (virtual, so not in the schema's list) too.
func TestEraseUserLeavesNoRow(t *testing.T) {
	s := openTest(t, t.TempDir())
	count := func(table, column, orgID, value string) (int, error) {
		var n int
		err := s.writer.QueryRowContext(t.Context(), `SELECT count(*) FROM "`+table+`" WHERE org_id = ? AND "`+column+`" = ?`, orgID, value).Scan(&n)
		return n, err
	}
	storetest.EraseLeavesNoRow(t, s, "acme", schemaOf(t.Context(), t, s.writer), count, 13)
	for _, tc := range []struct {
		user string
		want int
	}{{"erased-person", 0}, {"kept-person", 1}} {
		if n, err := count("memory_search", "owner_id", "acme", tc.user); err != nil || n != tc.want {
			t.Errorf("memory_search rows of %s: %d (%v), want %d", tc.user, n, err, tc.want)
		}
	}
}
