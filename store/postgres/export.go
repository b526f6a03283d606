package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quiverhq/quiver/store"
)

// KnownVersion is the newest schema version this build knows (the number
// of its migrations), as an archive's manifest records it.
func KnownVersion() int {
	ms, err := loadMigrations(migrationFiles)
	if err != nil {
		panic("postgres: embedded migrations: " + err.Error()) // a build fault the tests catch
	}
	return len(ms)
}

// ExportTables runs fn in one REPEATABLE READ, READ ONLY transaction: at
// READ COMMITTED each statement would see the commits made since the
// last, so a count could disagree with the rows read after it, and a
// message with the turn it belongs to; one snapshot for the whole export
// makes it consistent while replicas keep writing. A read-only
// transaction at this level never fails to serialize, so it is not
// retried.
func (s *Store) ExportTables(ctx context.Context, fn func(store.TableSnapshot) error) error {
	opts := pgx.TxOptions{IsoLevel: repeatableRead, AccessMode: pgx.ReadOnly}
	err := pgx.BeginTxFunc(ctx, s.pool, opts, func(tx pgx.Tx) error { return fn(snapshot{tx}) })
	if err != nil {
		return fmt.Errorf("postgres: export: %w", err)
	}
	return nil
}

// snapshot is a store.TableSnapshot over a read-only transaction.
type snapshot struct{ tx pgx.Tx }

// Count counts t's rows.
func (s snapshot) Count(ctx context.Context, t store.ArchiveTable) (int64, error) {
	var n int64
	if err := s.tx.QueryRow(ctx, "SELECT count(*) FROM "+ident(t.Name)).Scan(&n); err != nil {
		return 0, fmt.Errorf("count %s: %w", t.Name, err)
	}
	return n, nil
}

// Rows reads t's rows in key order (COLLATE "C" keys: byte order) and
// converts each to its kinds. json and text[] columns are read as JSON
// text: json keeps its bytes, and an array's NULL and '{}' stay apart.
func (s snapshot) Rows(ctx context.Context, t store.ArchiveTable, fn func([]any) error) error {
	exprs := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		switch c.Kind {
		case store.KindJSON:
			exprs[i] = ident(c.Name) + "::text"
		case store.KindNames:
			exprs[i] = "to_json(" + ident(c.Name) + ")::text"
		default:
			exprs[i] = ident(c.Name)
		}
	}
	q := "SELECT " + strings.Join(exprs, ", ") + " FROM " + ident(t.Name) + " ORDER BY " + identAll(t.Key)
	rows, err := s.tx.Query(ctx, q)
	if err != nil {
		return fmt.Errorf("read %s: %w", t.Name, err)
	}
	defer rows.Close()
	row := make([]any, len(t.Columns))
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return fmt.Errorf("read %s: %w", t.Name, err)
		}
		for i, c := range t.Columns {
			if row[i], err = fromPostgres(c.Kind, vals[i]); err != nil {
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

// fromPostgres converts a value pgx decoded to the Go type kind names
// (store.ColumnKind); NULL stays nil.
func fromPostgres(kind store.ColumnKind, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch v := v.(type) {
	case string:
		if kind == store.KindNames {
			names := []string{}
			if err := json.Unmarshal([]byte(v), &names); err != nil || names == nil {
				return nil, errors.New("stored names: not an array of text")
			}
			return names, nil
		}
		return v, nil
	case []byte:
		return v, nil
	case int32:
		return int64(v), nil
	case time.Time:
		return v.UTC(), nil
	case int64, bool:
		return v, nil
	}
	return nil, fmt.Errorf("a stored %T is not a %s value", v, kind)
}

// CheckEmpty refuses a database holding any row outside schema_migrations.
func (s *Store) CheckEmpty(ctx context.Context) error {
	if err := checkEmpty(ctx, s.pool); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	return nil
}

// checkEmpty returns an error wrapping store.ErrNotEmpty naming every
// table, but schema_migrations, that holds a row.
func checkEmpty(ctx context.Context, q querier) error {
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
		if err := q.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM "+ident(name)+")").Scan(&held); err != nil {
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

// schemaTables lists the tables of the schema the store uses (the first
// on the search path), by name.
func schemaTables(ctx context.Context, q querier) ([]string, error) {
	rows, err := q.Query(ctx, `SELECT table_name::text FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`)
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	return names, nil
}

// ImportTables writes r's tables in one READ COMMITTED transaction that
// first locks every table of the schema in SHARE ROW EXCLUSIVE mode: no
// other session writes any of them until the commit, so the emptiness
// check holds for the inserts after it (readers are not blocked). Rows go
// in by COPY, which also writes the identity column (usage.id) as given.
// The transaction is not retried: r cannot be read again, and with the
// locks held nothing can make it fail to serialize.
func (s *Store) ImportTables(ctx context.Context, r store.TableReader) error {
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: readCommitted}, func(tx pgx.Tx) error {
		if err := lockAll(ctx, tx); err != nil {
			return err
		}
		if err := checkEmpty(ctx, tx); err != nil {
			return err
		}
		if err := copyTables(ctx, tx, r); err != nil {
			return err
		}
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
		if err := rebuildKnowledgeSearch(ctx, tx); err != nil {
			return err
		}
		return rebuildDerived(ctx, tx)
	})
	if err != nil {
		return fmt.Errorf("postgres: import: %w", err)
	}
	return nil
}

// lockAll locks every table of the schema against writers.
func lockAll(ctx context.Context, tx pgx.Tx) error {
	tables, err := schemaTables(ctx, tx)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, "LOCK TABLE "+identAll(tables)+" IN SHARE ROW EXCLUSIVE MODE"); err != nil {
		return fmt.Errorf("lock the tables: %w", err)
	}
	return nil
}

// copyTables copies each table r yields. Row values go to pgx as they
// are: each kind's Go type is what pgx encodes for the column's type (a
// string to json is sent as the JSON text it holds).
func copyTables(ctx context.Context, tx pgx.Tx, r store.TableReader) error {
	for {
		t, err := r.NextTable()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		src := pgx.CopyFromFunc(func() ([]any, error) {
			row, err := r.NextRow()
			if errors.Is(err, io.EOF) {
				return nil, nil
			}
			return row, err
		})
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{t.Name}, t.ColumnNames(), src); err != nil {
			return fmt.Errorf("import %s: %w", t.Name, err)
		}
	}
}

// rebuildDerived sets what the store keeps beside the rows: each
// conversation's message counter to its highest Seq (an append then
// takes the next one; see AppendMessage), and every identity column's
// sequence past the highest value imported.
func rebuildDerived(ctx context.Context, tx pgx.Tx) error {
	const counters = `INSERT INTO message_counters (org_id, conversation_id, last_seq)
		SELECT org_id, conversation_id, max(seq) FROM messages GROUP BY org_id, conversation_id`
	if _, err := tx.Exec(ctx, counters); err != nil {
		return fmt.Errorf("rebuild the message counters: %w", err)
	}
	rows, err := tx.Query(ctx, `SELECT table_name::text, column_name::text FROM information_schema.columns
		WHERE table_schema = current_schema() AND is_identity = 'YES'`)
	if err != nil {
		return fmt.Errorf("list identity columns: %w", err)
	}
	cols, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) ([2]string, error) {
		var c [2]string
		err := row.Scan(&c[0], &c[1])
		return c, err
	})
	if err != nil {
		return fmt.Errorf("list identity columns: %w", err)
	}
	for _, c := range cols {
		table, col := c[0], c[1]
		q := fmt.Sprintf("SELECT setval(pg_get_serial_sequence($1, $2), COALESCE((SELECT max(%s) FROM %s), 0) + 1, false)",
			ident(col), ident(table))
		if _, err := tx.Exec(ctx, q, ident(table), col); err != nil {
			return fmt.Errorf("reset the sequence of %s.%s: %w", table, col, err)
		}
	}
	return nil
}

// ident quotes an identifier.
func ident(name string) string { return pgx.Identifier{name}.Sanitize() }

// identAll quotes names and joins them with commas.
func identAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = ident(n)
	}
	return strings.Join(q, ", ")
}
