package postgres

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quiverhq/quiver/internal/pgtest"
)

// This file is the harness of the tests that play several replicas on
// one database (accounts_test.go, credentials_test.go): stores with pools
// of their own, told apart on the server by their application_name, a
// connection to hold locks with, and a wait for backends blocked on a
// lock, which lets a test order two transactions without sleeping.

// replicaConns is the size of each replica's pool: the most calls of one
// replica that can wait on the server at once.
const replicaConns = 4

// replicas is one database and the stores of n replicas on it.
type replicas struct {
	url    string
	stores []*Store
	// observer is a connection outside every transaction, for reading
	// pg_stat_activity (a transaction sees one snapshot of it).
	observer *pgx.Conn
}

// openReplicas creates a database and opens n stores on it, replica i's
// connections named "replica-i", each pool of replicaConns connections.
func openReplicas(t *testing.T, n int) *replicas {
	t.Helper()
	r := &replicas{url: pgtest.URL(t)}
	for i := range n {
		r.stores = append(r.stores, openTest(t, r.replicaURL(t, i)))
	}
	r.observer = r.connect(t)
	return r
}

// replicaName is the application_name of replica i's connections.
func replicaName(i int) string { return fmt.Sprint("replica-", i) }

// replicaURL returns the database's URL with replica i's settings.
func (r *replicas) replicaURL(t *testing.T, i int) string {
	t.Helper()
	u, err := url.Parse(r.url)
	if err != nil {
		t.Fatalf("parse the test database URL: %v", err)
	}
	q := u.Query()
	q.Set("application_name", replicaName(i))
	q.Set("pool_max_conns", fmt.Sprint(replicaConns))
	u.RawQuery = q.Encode()
	return u.String()
}

// connect opens a connection to the database, closed when the test ends.
func (r *replicas) connect(t *testing.T) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), r.url)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// hold begins a transaction on a connection of its own and runs the
// statement q in it, to hold the locks q takes until the returned
// function ends the transaction (commit or roll back). The transaction
// is rolled back when the test ends, should the test not have ended it.
func (r *replicas) hold(t *testing.T, q string, args ...any) (end func(commit bool)) {
	t.Helper()
	tx, err := r.connect(t).Begin(t.Context())
	if err != nil {
		t.Fatalf("hold: begin: %v", err)
	}
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	tag, err := tx.Exec(t.Context(), q, args...)
	if err != nil {
		t.Fatalf("hold: %s: %v", q, err)
	}
	if tag.RowsAffected() == 0 {
		t.Fatalf("hold: %s locked no row", q)
	}
	return func(commit bool) {
		t.Helper()
		end := tx.Rollback
		if commit {
			end = tx.Commit
		}
		if err := end(t.Context()); err != nil {
			t.Fatalf("hold: end: %v", err)
		}
	}
}

// pollInterval is how often waitBlocked reads pg_stat_activity. It paces
// the polling only: the wait ends on what the server reports.
const pollInterval = time.Millisecond

// waitBlocked returns once n backends of replica i wait for a lock, or
// once done is closed (a call that did not block has returned: the test's
// assertions then say whether it should have). It fails the test when
// the test's context ends first.
func (r *replicas) waitBlocked(t *testing.T, i, n int, done <-chan struct{}) {
	t.Helper()
	const q = `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND application_name = $1
			AND wait_event_type = 'Lock'`
	for {
		var blocked int
		if err := r.observer.QueryRow(t.Context(), q, replicaName(i)).Scan(&blocked); err != nil {
			t.Fatalf("read pg_stat_activity: %v", err)
		}
		if blocked >= n {
			return
		}
		select {
		case <-done:
			return
		case <-t.Context().Done():
			t.Fatalf("%s: %d of %d backends waiting for a lock when the test ended", replicaName(i), blocked, n)
		case <-time.After(pollInterval):
		}
	}
}

// async runs fn in a goroutine and returns a channel closed once it has
// returned.
func async(fn func()) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	return done
}
