package sqlite

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/storetest"
)

// sqliteKinds are the archive kinds each declared type holds: TEXT holds
// times, JSON and names as text, and message content and result bodies as
// bytes stored as text.
var sqliteKinds = map[string][]store.ColumnKind{
	"TEXT":    {store.KindText, store.KindTime, store.KindJSON, store.KindNames, store.KindBytes},
	"INTEGER": {store.KindInt, store.KindBool},
	"BLOB":    {store.KindBytes},
}

// schemaOf describes the database's schema as storetest.ArchiveCoverage
// takes it.
func schemaOf(ctx context.Context, t *testing.T, q rowsQuerier) []storetest.SchemaTable {
	t.Helper()
	names, err := schemaTables(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	var schema []storetest.SchemaTable
	for _, name := range names {
		cols, err := tableColumns(ctx, q, name)
		if err != nil {
			t.Fatal(err)
		}
		st := storetest.SchemaTable{Name: name}
		keys := map[int]string{}
		rows, err := q.QueryContext(ctx, "SELECT name, pk FROM pragma_table_info(?) WHERE pk > 0", name)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var col string
			var pk int
			if err := rows.Scan(&col, &pk); err != nil {
				t.Fatal(err)
			}
			keys[pk] = col
		}
		rows.Close()
		for i := 1; i <= len(keys); i++ {
			st.Key = append(st.Key, keys[i])
		}
		for _, c := range cols {
			_, zero := zeroWhenNull[name+"."+c.name]
			st.Columns = append(st.Columns, storetest.SchemaColumn{
				Name: c.name, Kinds: sqliteKinds[strings.ToUpper(c.declared)],
				Null: !c.notNull && !c.key && !zero,
			})
		}
		schema = append(schema, st)
	}
	return schema
}

// TestArchiveCoversEverySQLiteTable: every table the migrations create is
// archived, column for column, or skipped with a reason; a migration that
// adds a table or a column fails here until store.ArchiveTables says what
// an export does with it.
func TestArchiveCoversEverySQLiteTable(t *testing.T) {
	s := openTest(t, t.TempDir())
	if problems := storetest.ArchiveCoverage(schemaOf(t.Context(), t, s.writer)); len(problems) > 0 {
		t.Errorf("the archive does not cover SQLite's schema:\n%s", strings.Join(problems, "\n"))
	}
}

// TestArchiveCoverageSeesANewTable: a table and a column no archive
// carries are reported, so the coverage test above can fail.
func TestArchiveCoverageSeesANewTable(t *testing.T) {
	s := openTest(t, t.TempDir())
	for _, q := range []string{"CREATE TABLE gadgets (id TEXT PRIMARY KEY)", "ALTER TABLE orgs ADD COLUMN plan TEXT"} {
		if _, err := s.writer.ExecContext(t.Context(), q); err != nil {
			t.Fatal(err)
		}
	}
	problems := storetest.ArchiveCoverage(schemaOf(t.Context(), t, s.writer))
	want := []string{
		"orgs.plan is in the schema but not archived (add it to store.ArchiveTables)",
		"table gadgets is neither archived (store.ArchiveTables) nor skipped with a reason (store.SkippedTables)",
	}
	if !slices.Equal(problems, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(problems, "\n"), strings.Join(want, "\n"))
	}
}
