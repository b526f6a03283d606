package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/quiverhq/quiver/store"
)

// KnownVersion is the newest schema version this build knows (the number
// of its migrations), as an archive's manifest records it.
func KnownVersion() int {
	ms, err := loadMigrations(migrationFiles)
	if err != nil {
		panic("sqlite: embedded migrations: " + err.Error()) // a build fault the tests catch
	}
	return len(ms)
}

// zeroWhenNull are the columns SQLite allows NULL in that an archive (and
// PostgreSQL) holds NOT NULL, with the value NULL reads as: a turn
// stored before migration 0009 has no selected count, which the store
// reads as 0.
var zeroWhenNull = map[string]string{"turns.selected": "0"}

// ExportTables runs fn in one read transaction on a reading connection:
// in WAL mode the transaction's first read fixes the snapshot that every
// later read sees, whatever the writer commits meanwhile.
func (s *Store) ExportTables(ctx context.Context, fn func(store.TableSnapshot) error) error {
	tx, err := s.reader.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: export: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // read only
	if err := fn(snapshot{tx}); err != nil {
		return fmt.Errorf("sqlite: export: %w", err)
	}
	return nil
}

// snapshot is a store.TableSnapshot over a read transaction.
type snapshot struct{ tx *sql.Tx }

// Count counts t's rows.
func (s snapshot) Count(ctx context.Context, t store.ArchiveTable) (int64, error) {
	var n int64
	if err := s.tx.QueryRowContext(ctx, "SELECT count(*) FROM "+quote(t.Name)).Scan(&n); err != nil {
		return 0, fmt.Errorf("count %s: %w", t.Name, err)
	}
	return n, nil
}

// Rows reads t's rows in key order and converts each to its kinds.
func (s snapshot) Rows(ctx context.Context, t store.ArchiveTable, fn func([]any) error) error {
	exprs := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		exprs[i] = quote(c.Name)
		if zero, ok := zeroWhenNull[t.Name+"."+c.Name]; ok {
			exprs[i] = "COALESCE(" + quote(c.Name) + ", " + zero + ")"
		}
	}
	q := "SELECT " + strings.Join(exprs, ", ") + " FROM " + quote(t.Name) + " ORDER BY " + quoteAll(t.Key)
	rows, err := s.tx.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("read %s: %w", t.Name, err)
	}
	defer rows.Close()
	raw := make([]any, len(t.Columns))
	ptrs := make([]any, len(raw))
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	row := make([]any, len(raw))
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return fmt.Errorf("read %s: %w", t.Name, err)
		}
		for i, c := range t.Columns {
			if row[i], err = fromSQLite(c.Kind, raw[i]); err != nil {
				return fmt.Errorf("read %s: column %s: %w", t.Name, c.Name, err)
			}
		}
		if err := fn(row); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read %s: %w", t.Name, err)
	}
	return nil
}

// fromSQLite converts a value the driver returned to the Go type kind
// names (store.ColumnKind); NULL stays nil.
func fromSQLite(kind store.ColumnKind, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch kind {
	case store.KindText, store.KindJSON:
		return asString(v)
	case store.KindBytes:
		s, err := asString(v)
		return []byte(s), err
	case store.KindInt:
		if n, ok := v.(int64); ok {
			return n, nil
		}
	case store.KindBool:
		if n, ok := v.(int64); ok && (n == 0 || n == 1) {
			return n == 1, nil
		}
	case store.KindTime:
		s, err := asString(v)
		if err != nil {
			return nil, err
		}
		return decodeTime(s)
	case store.KindNames:
		s, err := asString(v)
		if err != nil {
			return nil, err
		}
		names := []string{}
		if err := json.Unmarshal([]byte(s), &names); err != nil || names == nil {
			return nil, fmt.Errorf("stored names: not a JSON array of strings")
		}
		return names, nil
	}
	return nil, fmt.Errorf("a stored %T is not a %s value", v, kind)
}

// asString is a TEXT or BLOB value as a string.
func asString(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case []byte:
		return string(v), nil
	}
	return "", fmt.Errorf("a stored %T where text is expected", v)
}

// CheckEmpty refuses a database holding any row outside schema_migrations.
func (s *Store) CheckEmpty(ctx context.Context) error {
	if err := checkEmpty(ctx, s.reader); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	return nil
}

// rowsQuerier is a *sql.DB or a *sql.Tx.
type rowsQuerier interface {
	querier
	queryRower
}

// checkEmpty returns an error wrapping store.ErrNotEmpty naming every
// table, but schema_migrations, that holds a row.
func checkEmpty(ctx context.Context, q rowsQuerier) error {
	tables, err := schemaTables(ctx, q)
	if err != nil {
		return err
	}
	var full []string
	for _, name := range tables {
		if name == "schema_migrations" {
			continue
		}
		var held bool
		if err := q.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM "+quote(name)+")").Scan(&held); err != nil {
			return fmt.Errorf("check %s is empty: %w", name, err)
		}
		if held {
			full = append(full, name)
		}
	}
	if full != nil {
		return fmt.Errorf("%w: %s hold rows; import only into a new database", store.ErrNotEmpty, strings.Join(full, ", "))
	}
	return nil
}

// schemaTables lists the database's tables (SQLite's own left out, and
// virtual tables with their shadow tables: the FTS5 index memory search
// reads is derived, rebuilt on import), by name.
func schemaTables(ctx context.Context, q rowsQuerier) ([]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT name FROM pragma_table_list
		WHERE schema = 'main' AND type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("list tables: %w", err)
		}
		names = append(names, n)
	}
	return names, rows.Err()
}

// ImportTables writes r's tables in one write transaction, which holds
// SQLite's write lock from BEGIN: the emptiness check and the inserts
// cannot be raced by another writer. The rowid of usage continues from the
// highest id imported by itself; SQLite keeps no other counter. What
// conversation search reads is rebuilt from the imported rows.
func (s *Store) ImportTables(ctx context.Context, r store.TableReader) error {
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		if err := checkEmpty(ctx, tx); err != nil {
			return err
		}
		for {
			t, err := r.NextTable()
			if errors.Is(err, io.EOF) {
				if err := linkTurns(ctx, tx); err != nil {
					return err
				}
				if err := rebuildSearch(ctx, tx); err != nil {
					return err
				}
				if err := rebuildMemorySearch(ctx, tx); err != nil {
					return err
				}
				if err := rebuildAttachmentSearch(ctx, tx); err != nil {
					return err
				}
				return rebuildKnowledgeSearch(ctx, tx)
			}
			if err != nil {
				return err
			}
			if err := importTable(ctx, tx, t, r); err != nil {
				return err
			}
		}
	})
	if err != nil {
		return fmt.Errorf("sqlite: import: %w", err)
	}
	return nil
}

// importTable inserts the rows r yields into t.
func importTable(ctx context.Context, tx *sql.Tx, t store.ArchiveTable, r store.TableReader) error {
	blob, err := storedAsBlob(ctx, tx, t.Name)
	if err != nil {
		return err
	}
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(t.Columns)), ", ")
	stmt, err := tx.PrepareContext(ctx, "INSERT INTO "+quote(t.Name)+" ("+quoteAll(t.ColumnNames())+") VALUES ("+marks+")")
	if err != nil {
		return fmt.Errorf("import %s: %w", t.Name, err)
	}
	defer stmt.Close()
	args := make([]any, len(t.Columns))
	for {
		row, err := r.NextRow()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		for i, c := range t.Columns {
			if args[i], err = toSQLite(c.Kind, blob[c.Name], row[i]); err != nil {
				return fmt.Errorf("import %s: column %s: %w", t.Name, c.Name, err)
			}
		}
		if _, err := stmt.ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("import %s: %w", t.Name, err)
		}
	}
}

// storedAsBlob reports which columns of table are declared BLOB: their
// bytes are stored as a blob, those of a TEXT column (message content,
// result bodies) as text, as the repositories store them.
func storedAsBlob(ctx context.Context, q rowsQuerier, table string) (map[string]bool, error) {
	cols, err := tableColumns(ctx, q, table)
	if err != nil {
		return nil, err
	}
	blob := map[string]bool{}
	for _, c := range cols {
		blob[c.name] = strings.EqualFold(c.declared, "BLOB")
	}
	return blob, nil
}

// column is one column as PRAGMA table_info describes it.
type column struct {
	name, declared string
	notNull, key   bool
}

// tableColumns describes table's columns, in order.
func tableColumns(ctx context.Context, q rowsQuerier, table string) ([]column, error) {
	rows, err := q.QueryContext(ctx, "SELECT name, type, \"notnull\", pk FROM pragma_table_info(?) ORDER BY cid", table)
	if err != nil {
		return nil, fmt.Errorf("describe %s: %w", table, err)
	}
	defer rows.Close()
	var cols []column
	for rows.Next() {
		var c column
		var pk int
		if err := rows.Scan(&c.name, &c.declared, &c.notNull, &pk); err != nil {
			return nil, fmt.Errorf("describe %s: %w", table, err)
		}
		c.key = pk > 0
		cols = append(cols, c)
	}
	return cols, rows.Err()
}

// toSQLite converts a row value of kind to what the repositories store:
// times as timeLayout text, names as a JSON array, bytes as a blob in a
// BLOB column and as text in a TEXT one.
func toSQLite(kind store.ColumnKind, blob bool, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch v := v.(type) {
	case string, int64:
		return v, nil
	case bool:
		if v {
			return int64(1), nil
		}
		return int64(0), nil
	case []byte:
		if blob {
			return v, nil
		}
		return string(v), nil
	case time.Time:
		return encodeTime(v), nil
	case []string:
		b, err := json.Marshal(v)
		return string(b), err
	}
	return nil, fmt.Errorf("a %T is not a %s value", v, kind)
}

// quote quotes an identifier for SQLite.
func quote(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

// quoteAll quotes names and joins them with commas.
func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = quote(n)
	}
	return strings.Join(q, ", ")
}
