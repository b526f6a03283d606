package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"testing"
)

func openCaching(t *testing.T) *sql.DB {
	t.Helper()
	db := sql.OpenDB(cachingConnector{dsn: "file:" + filepath.Join(t.TempDir(), "c.db")})
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE TABLE n (v INTEGER)`); err != nil {
		t.Fatal(err)
	}
	for _, v := range []int{1, 2, 3} {
		if _, err := db.Exec(`INSERT INTO n (v) VALUES (?)`, v); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

func ints(t *testing.T, rows *sql.Rows) []int {
	t.Helper()
	var out []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestStmtCacheReusesStatements: a query run many times is prepared once
// on its connection.
func TestStmtCacheReusesStatements(t *testing.T) {
	db := openCaching(t)
	for range 5 {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM n WHERE v > ?`, 0).Scan(&n); err != nil || n != 3 {
			t.Fatalf("count = %d, %v", n, err)
		}
	}
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var cached []string
	if err := conn.Raw(func(dc any) error {
		for q := range dc.(*cachingConn).stmts {
			cached = append(cached, q)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(cached)
	want := []string{`CREATE TABLE n (v INTEGER)`, `INSERT INTO n (v) VALUES (?)`, `SELECT count(*) FROM n WHERE v > ?`}
	if !slices.Equal(cached, want) {
		t.Errorf("cached statements %q, want %q", cached, want)
	}
}

// TestStmtCacheSameQueryWhileRowsOpen: inside one transaction (one
// connection) the same query issued while its first rows are still being
// read gets a statement of its own, so neither result is disturbed.
func TestStmtCacheSameQueryWhileRowsOpen(t *testing.T) {
	db := openCaching(t)
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	const q = `SELECT v FROM n WHERE v >= ? ORDER BY v`
	outer, err := tx.Query(q, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !outer.Next() {
		t.Fatal("no first row")
	}
	inner, err := tx.Query(q, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got := ints(t, inner); !slices.Equal(got, []int{2, 3}) {
		t.Errorf("inner query = %v, want [2 3]", got)
	}
	var first int
	if err := outer.Scan(&first); err != nil {
		t.Fatal(err)
	}
	rest := ints(t, outer)
	if got := append([]int{first}, rest...); !slices.Equal(got, []int{1, 2, 3}) {
		t.Errorf("outer query = %v, want [1 2 3]", got)
	}
	// Closed rows free the statement for the next call.
	if got := ints(t, must(tx.Query(q, 3))); !slices.Equal(got, []int{3}) {
		t.Errorf("after both closed = %v, want [3]", got)
	}
}

func must(rows *sql.Rows, err error) *sql.Rows {
	if err != nil {
		panic(err)
	}
	return rows
}
