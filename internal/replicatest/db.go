package replicatest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Conn opens a connection to the cluster's PostgreSQL database, closed
// when the test ends, for a test to look at what the replicas stored. A
// SQLite cluster fails the test.
func (c *Cluster) Conn() *pgx.Conn {
	c.tb.Helper()
	if c.DatabaseURL == "" {
		c.tb.Fatal("replicatest: Conn needs a PostgreSQL cluster")
	}
	return Connect(c.tb, WithApplicationName(c.tb, c.DatabaseURL, "replicatest"))
}

// Connect opens a connection to the database at url, closed when tb
// ends.
func Connect(tb testing.TB, url string) *pgx.Conn {
	tb.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		tb.Fatalf("replicatest: connect: %v", err)
	}
	tb.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// Digest returns, for every table of the database's public schema, its
// row count and an MD5 of its rows (each as its text form, sorted), so
// that two digests differ exactly when some table's content does: a
// check that a refused process wrote nothing.
func Digest(tb testing.TB, conn *pgx.Conn) map[string]TableDigest {
	tb.Helper()
	ctx := context.Background()
	rows, err := conn.Query(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`)
	if err != nil {
		tb.Fatalf("replicatest: list tables: %v", err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		tb.Fatalf("replicatest: list tables: %v", err)
	}
	out := make(map[string]TableDigest, len(tables))
	for _, table := range tables {
		id := pgx.Identifier{table}.Sanitize()
		var d TableDigest
		q := `SELECT count(*), coalesce(md5(string_agg(t::text, E'\n' ORDER BY t::text COLLATE "C")), '') FROM ` + id + ` t`
		if err := conn.QueryRow(ctx, q).Scan(&d.Rows, &d.MD5); err != nil {
			tb.Fatalf("replicatest: digest %s: %v", table, err)
		}
		out[table] = d
	}
	return out
}

// TableDigest is one table's part of a Digest.
type TableDigest struct {
	Rows int64
	MD5  string
}
