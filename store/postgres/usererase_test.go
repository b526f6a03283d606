package postgres

import (
	"testing"

	"github.com/quiverhq/quiver/internal/pgtest"
	"github.com/quiverhq/quiver/store/storetest"
)

// TestEraseUserLeavesNoRow runs storetest.EraseLeavesNoRow on every
// table of the schema.
func TestEraseUserLeavesNoRow(t *testing.T) {
	s := openTest(t, pgtest.URL(t))
	count := func(table, column, orgID, value string) (int, error) {
		var n int
		err := s.pool.QueryRow(t.Context(), `SELECT count(*) FROM `+ident(table)+` WHERE org_id = $1 AND `+ident(column)+` = $2`, orgID, value).Scan(&n)
		return n, err
	}
	storetest.EraseLeavesNoRow(t, s, "acme-"+t.Name(), schemaOf(t.Context(), t, s), count, 14)
}
