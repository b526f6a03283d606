package postgres

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

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

// TestCancelledRecordCalls checks, until the suite's Context group can run
// here (it needs every repository), that each method of the transcript
// and accounting repositories fails on a cancelled context with an error
// wrapping context.Canceled and writes nothing.
func TestCancelledRecordCalls(t *testing.T) {
	s := openTest(t, pgtest.URL(t))
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	at := time.Date(2025, 3, 30, 1, 0, 0, 0, time.UTC)
	conv := store.Conversation{ID: "c", OrgID: "o", UserID: "u", CreatedAt: at, UpdatedAt: at}
	turn := store.Turn{ID: "t", OrgID: "o", Status: store.TurnRunning, StartedAt: at}
	msg := store.Message{ConversationID: "c", Role: "user", Content: "hi", CreatedAt: at}
	res := store.Result{Ref: "r", OrgID: "o", ConversationID: "c", CreatedAt: at}
	use := store.Usage{OrgID: "o", TurnID: "t", Payer: "p", Step: 1, CreatedAt: at}
	calls := map[string]func(context.Context) error{
		"PutConversation":   func(ctx context.Context) error { return s.PutConversation(ctx, conv) },
		"ClaimConversation": func(ctx context.Context) error { _, err := s.ClaimConversation(ctx, conv); return err },
		"GetConversation":   func(ctx context.Context) error { _, err := s.GetConversation(ctx, "o", "c"); return err },
		"ListConversations": func(ctx context.Context) error { _, err := s.ListConversations(ctx, "o", "u", 0); return err },
		"PutTurn":           func(ctx context.Context) error { return s.PutTurn(ctx, turn) },
		"GetTurn":           func(ctx context.Context) error { _, err := s.GetTurn(ctx, "o", "t"); return err },
		"InterruptTurns":    func(ctx context.Context) error { _, err := s.InterruptTurns(ctx, at.Add(time.Hour), at); return err },
		"AppendMessage":     func(ctx context.Context) error { _, err := s.AppendMessage(ctx, "o", msg); return err },
		"AppendMessages": func(ctx context.Context) error {
			_, err := s.AppendMessages(ctx, "o", []store.Message{msg, msg})
			return err
		},
		"AppendNoMessages": func(ctx context.Context) error { _, err := s.AppendMessages(ctx, "o", nil); return err },
		"ListMessages":     func(ctx context.Context) error { _, err := s.ListMessages(ctx, "o", "c", 0); return err },
		"PutResult":        func(ctx context.Context) error { return s.PutResult(ctx, res, store.ResultQuota{}) },
		"GetResult":        func(ctx context.Context) error { _, err := s.GetResult(ctx, "o", "c", "r"); return err },
		"PutUsage":         func(ctx context.Context) error { return s.PutUsage(ctx, use) },
		"ListUsage":        func(ctx context.Context) error { _, err := s.ListUsage(ctx, "o", "t"); return err },
		"SumUsage": func(ctx context.Context) error {
			_, err := s.SumUsage(ctx, "o", "p", at, at.Add(time.Hour))
			return err
		},
	}
	for name, call := range calls {
		if err := call(cancelled); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: err = %v, want context.Canceled", name, err)
		}
	}
	for _, table := range []string{"conversations", "turns", "messages", "message_counters", "results", "usage"} {
		if n := countRows(t, s.pool, table); n != 0 {
			t.Errorf("cancelled calls wrote %d rows to %s", n, table)
		}
	}
}

// TestSessionsReadCommitted: the store's sessions run at READ COMMITTED
// even on a database whose default is SERIALIZABLE, since its single
// statements are not retried.
func TestSessionsReadCommitted(t *testing.T) {
	url := pgtest.URL(t)
	setup := openTest(t, url)
	var db string
	if err := setup.pool.QueryRow(t.Context(), "SELECT current_database()").Scan(&db); err != nil {
		t.Fatal(err)
	}
	_, err := setup.pool.Exec(t.Context(),
		"ALTER DATABASE "+pgx.Identifier{db}.Sanitize()+" SET default_transaction_isolation = 'serializable'")
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{url, url + "&default_transaction_isolation=serializable"} {
		s := openTest(t, u)
		var iso, app string
		if err := s.pool.QueryRow(t.Context(), "SELECT current_setting('transaction_isolation'), current_setting('application_name')").Scan(&iso, &app); err != nil {
			t.Fatal(err)
		}
		if iso != "read committed" || app != "quiver" {
			t.Errorf("session on %s: isolation %q, application %q; want read committed, quiver", RedactURL(u), iso, app)
		}
	}
}
