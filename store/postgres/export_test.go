package postgres

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/internal/pgtest"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/storetest"
)

// postgresKinds are the archive kinds each SQL type holds (ARRAY is
// text[] here: information_schema names every array so).
var postgresKinds = map[string][]store.ColumnKind{
	"text":                     {store.KindText},
	"bytea":                    {store.KindBytes},
	"bigint":                   {store.KindInt},
	"integer":                  {store.KindInt},
	"boolean":                  {store.KindBool},
	"timestamp with time zone": {store.KindTime},
	"json":                     {store.KindJSON},
	"ARRAY":                    {store.KindNames},
}

// schemaOf describes the database's schema as storetest.ArchiveCoverage
// takes it.
func schemaOf(ctx context.Context, t *testing.T, s *Store) []storetest.SchemaTable {
	t.Helper()
	names, err := schemaTables(ctx, s.pool)
	if err != nil {
		t.Fatal(err)
	}
	var schema []storetest.SchemaTable
	for _, name := range names {
		st := storetest.SchemaTable{Name: name}
		rows, err := s.pool.Query(ctx, `SELECT column_name::text, data_type::text, is_nullable = 'YES'
			FROM information_schema.columns
			WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`, name)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var col, typ string
			var null bool
			if err := rows.Scan(&col, &typ, &null); err != nil {
				t.Fatal(err)
			}
			st.Columns = append(st.Columns, storetest.SchemaColumn{Name: col, Kinds: postgresKinds[typ], Null: null})
		}
		rows.Close()
		const key = `SELECT a.attname::text FROM pg_index i
			JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
			WHERE i.indrelid = $1::regclass AND i.indisprimary
			ORDER BY array_position(i.indkey, a.attnum)`
		rows, err = s.pool.Query(ctx, key, ident(name))
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var col string
			if err := rows.Scan(&col); err != nil {
				t.Fatal(err)
			}
			st.Key = append(st.Key, col)
		}
		rows.Close()
		schema = append(schema, st)
	}
	return schema
}

// TestArchiveCoversEveryPostgresTable: every table the migrations create
// is archived, column for column, or skipped with a reason; a migration
// that adds a table or a column fails here until store.ArchiveTables says
// what an export does with it.
func TestArchiveCoversEveryPostgresTable(t *testing.T) {
	s := openTest(t, pgtest.URL(t))
	if problems := storetest.ArchiveCoverage(schemaOf(t.Context(), t, s)); len(problems) > 0 {
		t.Errorf("the archive does not cover PostgreSQL's schema:\n%s", strings.Join(problems, "\n"))
	}
}

// TestArchiveCoverageSeesANewPostgresTable: a table and a column no
// archive carries are reported, so the coverage test above can fail.
func TestArchiveCoverageSeesANewPostgresTable(t *testing.T) {
	s := openTest(t, pgtest.URL(t))
	for _, q := range []string{"CREATE TABLE gadgets (id text PRIMARY KEY)", "ALTER TABLE orgs ADD COLUMN plan text"} {
		if _, err := s.pool.Exec(t.Context(), q); err != nil {
			t.Fatal(err)
		}
	}
	problems := storetest.ArchiveCoverage(schemaOf(t.Context(), t, s))
	want := []string{
		"orgs.plan is in the schema but not archived (add it to store.ArchiveTables)",
		"table gadgets is neither archived (store.ArchiveTables) nor skipped with a reason (store.SkippedTables)",
	}
	if !slices.Equal(problems, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(problems, "\n"), strings.Join(want, "\n"))
	}
}
