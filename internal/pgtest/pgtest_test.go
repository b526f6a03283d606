package pgtest

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestURLGivesAFreshDatabaseDroppedAfter: URL's database exists, empty,
// while the test runs, and is gone once it ended.
func TestURLGivesAFreshDatabaseDroppedAfter(t *testing.T) {
	server := ServerURL(t)
	var name string
	t.Run("Use", func(t *testing.T) {
		u := URL(t)
		conn, err := pgx.Connect(t.Context(), u)
		if err != nil {
			t.Fatalf("connect to the test database: %v", err)
		}
		defer conn.Close(context.WithoutCancel(t.Context()))
		var tables int
		err = conn.QueryRow(t.Context(), `SELECT current_database(),
			(SELECT count(*) FROM pg_tables WHERE schemaname = 'public')`).Scan(&name, &tables)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(name, "quiver_test_") || tables != 0 {
			t.Errorf("database %q with %d tables, want a new quiver_test_ one, empty", name, tables)
		}
	})
	conn, err := pgx.Connect(t.Context(), server)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.WithoutCancel(t.Context()))
	var exists bool
	if err := conn.QueryRow(t.Context(), "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if name == "" || exists {
		t.Errorf("database %q still exists after its test ended", name)
	}
}

// TestNoServer runs TestHelperNeedsServer in a child process without
// EnvURL: it skips, or fails when EnvRequire is "1".
func TestNoServer(t *testing.T) {
	tests := []struct {
		name     string
		require  string
		wantFail bool
		wantOut  string
	}{
		{"Skips", "", false, "--- SKIP: TestHelperNeedsServer"},
		{"FailsWhenRequired", "1", true, "--- FAIL: TestHelperNeedsServer"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestHelperNeedsServer$", "-test.v")
			cmd.Env = append(os.Environ(), EnvURL+"=", EnvRequire+"="+tc.require, "PGTEST_HELPER=1")
			out, err := cmd.CombinedOutput()
			if (err != nil) != tc.wantFail || !strings.Contains(string(out), tc.wantOut) {
				t.Errorf("child: err %v, output:\n%s\nwant failure %v and %q", err, out, tc.wantFail, tc.wantOut)
			}
		})
	}
}

// TestHelperNeedsServer asks for a database; it runs only as TestNoServer's
// child.
func TestHelperNeedsServer(t *testing.T) {
	if os.Getenv("PGTEST_HELPER") != "1" {
		t.Skip("run by TestNoServer")
	}
	URL(t)
	t.Error("URL returned without a server")
}
