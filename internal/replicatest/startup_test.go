package replicatest_test

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/quiverhq/quiver/internal/pgtest"
	"github.com/quiverhq/quiver/internal/replicatest"
)

// TestReplicaWithOtherKeyRefused: a replica given a key file other than
// its peers' stops at start, exit status 1, with the keyring message
// naming key ids only, and writes nothing to the database; the replica
// with the right keys keeps serving.
func TestReplicaWithOtherKeyRefused(t *testing.T) {
	t.Parallel()
	c := replicatest.New(t, replicatest.Options{DatabaseURL: pgtest.URL(t)})
	a := c.Start()
	admin := c.Admin(a)
	admin.Send(admin.NewConversation("assistant"), "something to keep")
	const need = "every replica and command needs the same keyring (secrets.key_file or secrets.keys_env, see docs/postgres.md, \"Secrets with several replicas\"); refusing to start"
	tests := []struct {
		name, keyID, want string
	}{
		{"another key id", "k2", "quiver: the configured keys (k2) cannot open this database's secrets (sealed under key k1); " + need},
		{"the same id, another key", "k1", "quiver: the configured keys (k1) cannot open this database's secrets (sealed under a different key with the id k1); " + need},
	}
	conn := c.Conn()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := replicatest.Digest(t, conn)
			r := c.With(t).Launch(replicatest.ReplicaOptions{KeyFile: replicatest.WriteKeyFile(t, t.TempDir(), tc.keyID)})
			if code := r.Wait(); code != 1 {
				t.Errorf("exit status %d, want 1", code)
			}
			if got := strings.TrimSpace(r.Log()); got != tc.want {
				t.Errorf("it printed\n%s\nwant\n%s", got, tc.want)
			}
			if strings.Contains(r.Log(), keyMaterial(t, c.KeyFile)) {
				t.Error("the refusal shows key material")
			}
			if diff := cmp.Diff(before, replicatest.Digest(t, conn)); diff != "" {
				t.Errorf("the refused replica changed the database (-before +after):\n%s", diff)
			}
		})
	}
	if code, body := admin.Do(http.MethodGet, "/api/me", nil); code != http.StatusOK {
		t.Errorf("the first replica after the refusals: %d %s", code, body)
	}
}

// keyMaterial is the base64 key of a key file's first line.
func keyMaterial(t *testing.T, keyFile string) string {
	t.Helper()
	_, key, ok := strings.Cut(strings.TrimSpace(readFile(t, keyFile)), ":")
	if !ok || key == "" {
		t.Fatalf("key file %s has no key", keyFile)
	}
	return key
}

// migrateLockKey is the advisory lock store/postgres migrates under (the
// ASCII of "quiver"); the test holds it to make replicas start together.
const migrateLockKey int64 = 0x717569766572

// TestReplicasStartingTogetherMigrateOnce: two replicas started on a
// fresh database while the migration lock is held both wait for it, then
// migrate once between them — every version recorded once, nothing
// pending — store one keyring check, set up one organisation with one
// admin and one example agent, and both serve.
func TestReplicasStartingTogetherMigrateOnce(t *testing.T) {
	t.Parallel()
	c := replicatest.New(t, replicatest.Options{DatabaseURL: pgtest.URL(t)})
	conn := c.Conn()
	if _, err := conn.Exec(t.Context(), "SELECT pg_advisory_lock($1)", migrateLockKey); err != nil {
		t.Fatal(err)
	}
	a, b := c.Launch(replicatest.ReplicaOptions{}), c.Launch(replicatest.ReplicaOptions{})
	waitForLockWaiters(t, conn, a, b)
	if _, err := conn.Exec(t.Context(), "SELECT pg_advisory_unlock($1)", migrateLockKey); err != nil {
		t.Fatal(err)
	}
	for _, r := range []*replicatest.Replica{a, b} {
		if err := r.WaitReady(); err != nil {
			t.Fatal(err)
		}
	}
	var dup, total int
	if err := conn.QueryRow(t.Context(), `SELECT count(*) - count(DISTINCT version), count(*) FROM schema_migrations`).Scan(&dup, &total); err != nil {
		t.Fatal(err)
	}
	res := c.Run("migrate", "status", "--json")
	var st struct {
		Known, Current int
		Pending        []json.RawMessage
	}
	if err := json.Unmarshal([]byte(res.Stdout), &st); err != nil || res.Code != 0 {
		t.Fatalf("migrate status: exit %d, %v\n%s%s", res.Code, err, res.Stdout, res.Stderr)
	}
	if dup != 0 || total != st.Known || st.Current != st.Known || len(st.Pending) != 0 {
		t.Errorf("schema_migrations: %d rows, %d repeated; status %+v", total, dup, st)
	}
	// Both may take part in the first start (accounts.Bootstrap is made
	// of idempotent steps, not one transaction), so each that did prints
	// a link of its own; what they set up exists once.
	if a.Login == "" && b.Login == "" {
		t.Error("neither replica printed a first-start login link")
	}
	for _, q := range []string{"SELECT count(*) FROM orgs", "SELECT count(*) FROM users", "SELECT count(*) FROM agents", "SELECT count(*) FROM deployment"} {
		var n int
		if err := conn.QueryRow(t.Context(), q).Scan(&n); err != nil || n != 1 {
			t.Errorf("%s = %d (%v), want 1", q, n, err)
		}
	}
	admin := c.Admin(a)
	for _, r := range []*replicatest.Replica{a, b} {
		if code, body := admin.At(r).Do(http.MethodGet, "/api/conversations", nil); code != http.StatusOK {
			t.Errorf("%s: %d %s", r.Name, code, body)
		}
	}
}

// waitForLockWaiters returns once every replica has a session waiting
// for an advisory lock (the one the test holds). A replica that serves or
// exits first fails the test: it did not wait for the lock.
func waitForLockWaiters(t *testing.T, conn *pgx.Conn, rs ...*replicatest.Replica) {
	t.Helper()
	const q = `SELECT count(DISTINCT application_name) FROM pg_stat_activity
		WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'
			AND application_name LIKE 'quiver-replica-%'`
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		var waiting int
		if err := conn.QueryRow(t.Context(), q).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting == len(rs) {
			return
		}
		for _, r := range rs {
			if !r.Running() || r.Serving() {
				t.Fatalf("%s started without waiting for the migration lock (did store/postgres change its key?):\n%s", r.Name, r.Log())
			}
		}
		select {
		case <-tick.C:
		case <-t.Context().Done():
			t.Fatalf("%d of %d replicas waiting for the migration lock when the test ended", waiting, len(rs))
		}
	}
}

// TestSchemaTooNewRefusesReplica: a replica on a database that a newer
// build migrated stops at start, exit status 1, saying so, and writes
// nothing.
func TestSchemaTooNewRefusesReplica(t *testing.T) {
	t.Parallel()
	c := replicatest.New(t, replicatest.Options{DatabaseURL: pgtest.URL(t)})
	if res := c.Run("migrate", "up"); res.Code != 0 {
		t.Fatalf("migrate up: exit %d: %s", res.Code, res.Stderr)
	}
	conn := c.Conn()
	if _, err := conn.Exec(t.Context(), `INSERT INTO schema_migrations (version, name) VALUES (999, '0999_future.sql')`); err != nil {
		t.Fatal(err)
	}
	before := replicatest.Digest(t, conn)
	r := c.Launch(replicatest.ReplicaOptions{})
	if code := r.Wait(); code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	for _, want := range []string{"newer than this build of quiver knows", "the database is at migration 999", "upgrade quiver"} {
		if !strings.Contains(r.Log(), want) {
			t.Errorf("it printed %q, which does not say %q", r.Log(), want)
		}
	}
	if diff := cmp.Diff(before, replicatest.Digest(t, conn)); diff != "" {
		t.Errorf("the refused replica changed the database (-before +after):\n%s", diff)
	}
}

// TestSecondSQLiteServerRefused: a second quiver serve process on the
// SQLite data folder of a running one exits with status 1 saying that
// several replicas need PostgreSQL, and the first keeps serving; once
// the first stopped, the folder serves again.
func TestSecondSQLiteServerRefused(t *testing.T) {
	t.Parallel()
	c := replicatest.New(t, replicatest.Options{})
	first := c.Start()
	if want := "sqlite " + c.Data + "/quiver.db"; first.Store != want {
		t.Errorf("store %q, want %q", first.Store, want)
	}
	second := c.Launch(replicatest.ReplicaOptions{})
	if code := second.Wait(); code != 1 || !strings.Contains(second.Log(), "another quiver server is running") || !strings.Contains(second.Log(), "PostgreSQL") {
		t.Errorf("second server: exit %d, printed %q", code, second.Log())
	}
	admin := c.Admin(first)
	if code, body := admin.Do(http.MethodGet, "/api/me", nil); code != http.StatusOK {
		t.Errorf("the first server after the refusal: %d %s", code, body)
	}
	if code := first.Stop(); code != 0 {
		t.Errorf("the first server stopped with status %d", code)
	}
	second.Restart()
	if code, body := admin.At(second).Do(http.MethodGet, "/api/me", nil); code != http.StatusOK {
		t.Errorf("the folder's next server: %d %s", code, body)
	}
}

// readFile is a file's content.
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
