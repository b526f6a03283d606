package backend_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/internal/pgtest"
	"github.com/quiverhq/quiver/store/backend"
)

// TestSQLite: without a URL the store is SQLite in the data folder; it
// does not exist until opened; a second server on it is refused, saying
// that several replicas need PostgreSQL.
func TestSQLite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	c := backend.Config{Dir: dir}
	if c.Name() != backend.SQLite || c.String() != "sqlite "+filepath.Join(dir, "quiver.db") {
		t.Errorf("Name %q, String %q", c.Name(), c.String())
	}
	if ok, why := backend.Exists(c); ok || !strings.Contains(why, dir) {
		t.Errorf("Exists before opening = %v, %q", ok, why)
	}
	st, err := backend.MigrationStatus(t.Context(), c)
	if err != nil || st.Current != 0 || len(st.Pending) == 0 || st.Applied == nil {
		t.Fatalf("Status of no database = %+v, %v", st, err)
	}
	s, err := backend.Open(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if ok, _ := backend.Exists(c); !ok {
		t.Error("Exists after opening = false")
	}
	release, err := backend.LockServer(c)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if _, err := backend.LockServer(c); err == nil || !strings.Contains(err.Error(), "PostgreSQL") {
		t.Errorf("second server lock = %v, want a refusal pointing at PostgreSQL", err)
	}
}

// TestPostgresWhereHidesPassword: the name a start-up line shows keeps
// the server and database and hides the password.
func TestPostgresWhereHidesPassword(t *testing.T) {
	c := backend.Config{URL: "postgres://quiver:s3cret@db.internal:5432/quiver?sslmode=require", Dir: t.TempDir()}
	got := c.String()
	if strings.Contains(got, "s3cret") || !strings.HasPrefix(got, "postgres postgres://quiver:") || !strings.Contains(got, "db.internal:5432/quiver") {
		t.Errorf("String = %q", got)
	}
	if ok, _ := backend.Exists(c); !ok {
		t.Error("a PostgreSQL store should always be there to ask")
	}
	var logged strings.Builder
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("store", "db", c)
	js, _ := json.Marshal(c)
	for what, out := range map[string]string{"%#v": fmt.Sprintf("%#v", c), "%+v": fmt.Sprintf("%+v", c), "log": logged.String(), "json": string(js)} {
		if strings.Contains(out, "s3cret") || !strings.Contains(out, "db.internal") {
			t.Errorf("%s shows %q", what, out)
		}
	}
	release, err := backend.LockServer(c)
	if err != nil {
		t.Fatalf("LockServer on PostgreSQL = %v, want no lock", err)
	}
	release()
}

// TestPostgres: with a URL the store is PostgreSQL, migrated by Open and
// reported up to date by Status.
func TestPostgres(t *testing.T) {
	c := backend.Config{URL: pgtest.URL(t), Dir: t.TempDir()}
	st, err := backend.MigrationStatus(t.Context(), c)
	if err != nil || st.Current != 0 || len(st.Pending) != st.Known {
		t.Fatalf("Status of a new database = %+v, %v", st, err)
	}
	s, err := backend.Open(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st, err = backend.MigrationStatus(t.Context(), c)
	if err != nil || st.Current != st.Known || len(st.Pending) != 0 {
		t.Fatalf("Status after Open = %+v, %v", st, err)
	}
	if applied, err := backend.Migrate(t.Context(), c); err != nil || len(applied) != 0 {
		t.Errorf("Migrate of an up-to-date database = %v, %v", applied, err)
	}
}
