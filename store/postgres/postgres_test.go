package postgres

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/internal/pgtest"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/storetest"
)

// openTest opens a store on the database url names and closes it when
// the test ends.
func openTest(t testing.TB, url string) *Store {
	t.Helper()
	s, err := Open(t.Context(), url)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// TestConformance runs the shared suite on one database: the suite's
// identifiers are unique to the run and subtest, so its checks share it.
func TestConformance(t *testing.T) {
	s := openTest(t, pgtest.URL(t))
	storetest.Run(t, func(t *testing.T) store.Store { return s })
}

// TestOpenErrorsHideThePassword opens URLs that fail at each stage and
// checks that no error quotes the password.
func TestOpenErrorsHideThePassword(t *testing.T) {
	const password = "s3cr3t-Pa55"
	good, err := url.Parse(pgtest.ServerURL(t))
	if err != nil {
		t.Fatalf("parse %s: %v", pgtest.EnvURL, err)
	}
	wrongPassword := *good
	wrongPassword.User = url.UserPassword(good.User.Username(), password)
	tests := []struct{ name, url string }{
		{"WrongPassword", wrongPassword.String()},
		{"UnknownDatabase", strings.Replace(wrongPassword.String(), good.Path, "/no_such_db", 1)},
		{"DoesNotParse", "postgres://user:" + password + "@host:notaport/db"},
		{"KeywordForm", "host=127.0.0.1 port=1 password=" + password + " connect_timeout=5"},
		{"BadOption", "postgres://u:" + password + "@127.0.0.1/db?pool_max_conns=many"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Open(t.Context(), tc.url)
			if err == nil {
				s.Close()
				t.Fatalf("Open succeeded, want an error")
			}
			if strings.Contains(err.Error(), password) {
				t.Errorf("Open error quotes the password: %v", err)
			}
		})
	}
}

func TestOpenCancelled(t *testing.T) {
	server := pgtest.URL(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	s, err := Open(ctx, server)
	if err == nil {
		s.Close()
		t.Fatalf("Open with a cancelled context succeeded")
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Open with a cancelled context: %v, want context.Canceled", err)
	}
	st, err := Status(t.Context(), server)
	if err != nil {
		t.Fatalf("Status: %v", err)
	}
	if st.Current != 0 {
		t.Errorf("a cancelled Open migrated the database to %d", st.Current)
	}
}

// TestUnsupportedSaysSo: a method not implemented yet returns an error
// wrapping errors.ErrUnsupported, not a silent zero value.
func TestUnsupportedSaysSo(t *testing.T) {
	err := unsupported("example")
	if !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), "postgres: example") {
		t.Errorf("unsupported = %v, want the operation and errors.ErrUnsupported", err)
	}
}
