// Package pgtest gives tests a fresh PostgreSQL database on the server
// that $QUIVER_TEST_DATABASE_URL names (scripts/postgres start prints it;
// scripts/test sets it). Without the variable a test that asks for a
// database is skipped, or fails when QUIVER_REQUIRE_PEERS=1, so CI cannot
// pass by skipping. Tests only.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Environment variables read here.
const (
	// EnvURL names a PostgreSQL server the tests may create and drop
	// databases on, as a postgres:// URL of a role with CREATEDB.
	EnvURL = "QUIVER_TEST_DATABASE_URL"
	// EnvRequire set to "1" turns a missing server into a failure.
	EnvRequire = "QUIVER_REQUIRE_PEERS"
)

// dropTimeout bounds the cleanup's DROP DATABASE, which runs after the
// test's context is done.
const dropTimeout = 30 * time.Second

// URL creates an empty database with a name of its own on the server
// EnvURL names and returns that database's URL; the database is dropped
// (its connections closed) when t ends. Without EnvURL it skips t, or
// fails it when EnvRequire is "1".
func URL(t testing.TB) string {
	t.Helper()
	server := ServerURL(t)
	name := "quiver_test_" + randomSuffix(t)
	admin := connect(t.Context(), t, server)
	defer admin.Close(context.WithoutCancel(t.Context()))
	if _, err := admin.Exec(t.Context(), "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatalf("pgtest: create database %s: %v", name, err)
	}
	t.Cleanup(func() { drop(t, server, name) })
	return withDatabase(t, server, name)
}

// ServerURL returns EnvURL, or skips t (fails it when EnvRequire is "1")
// when it is unset. Tests that need a database of their own call URL.
func ServerURL(t testing.TB) string {
	t.Helper()
	server := os.Getenv(EnvURL)
	if server == "" {
		msg := "no PostgreSQL server: " + EnvURL + " is unset (run scripts/postgres start, or scripts/test)"
		if os.Getenv(EnvRequire) == "1" {
			t.Fatal("pgtest: " + msg + " and " + EnvRequire + "=1")
		}
		t.Skip(msg)
	}
	return server
}

// connect opens one connection to the server.
func connect(ctx context.Context, t testing.TB, server string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		t.Fatalf("pgtest: connect to the server of %s: %v", EnvURL, err)
	}
	return conn
}

// drop removes the database, closing any connection a test left open.
func drop(t testing.TB, server, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), dropTimeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		t.Errorf("pgtest: drop database %s: %v", name, err)
		return
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		t.Errorf("pgtest: drop database %s: %v", name, err)
	}
}

// withDatabase returns server with its database replaced by name.
func withDatabase(t testing.TB, server, name string) string {
	t.Helper()
	u, err := url.Parse(server)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		t.Fatalf("pgtest: %s must be a postgres:// URL", EnvURL)
	}
	u.Path = "/" + name
	return u.String()
}

// randomSuffix returns 12 random hex digits.
func randomSuffix(t testing.TB) string {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return hex.EncodeToString(b)
}
