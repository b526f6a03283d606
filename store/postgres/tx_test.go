package postgres

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/quiverhq/quiver/internal/pgtest"
	"github.com/quiverhq/quiver/store"
)

// TestInTxRetries checks which failures inTx runs again, and that it
// stops after maxTxAttempts.
func TestInTxRetries(t *testing.T) {
	s := openTest(t, pgtest.URL(t))
	conflict := &pgconn.PgError{Code: codeSerializationFailure, Message: "could not serialize access"}
	deadlock := &pgconn.PgError{Code: codeDeadlockDetected, Message: "deadlock detected"}
	other := &pgconn.PgError{Code: codeUniqueViolation, Message: "duplicate key"}
	tests := []struct {
		name         string
		failures     int   // attempts that fail before one succeeds
		fail         error // how they fail
		wantAttempts int
		wantErr      error
	}{
		{"Succeeds", 0, nil, 1, nil},
		{"SerializationOnce", 1, conflict, 2, nil},
		{"DeadlockTwice", 2, fmt.Errorf("wrapped: %w", deadlock), 3, nil},
		{"ConflictUntilTheBound", maxTxAttempts - 1, conflict, maxTxAttempts, nil},
		{"ConflictPastTheBound", maxTxAttempts + 5, conflict, maxTxAttempts, conflict},
		{"OtherErrorNotRetried", 3, other, 1, other},
		{"PlainErrorNotRetried", 3, store.ErrNotFound, 1, store.ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			attempts := 0
			err := s.inTx(t.Context(), readCommitted, func(tx pgx.Tx) error {
				attempts++
				if attempts <= tc.failures {
					return tc.fail
				}
				return nil
			})
			if attempts != tc.wantAttempts {
				t.Errorf("fn ran %d times, want %d", attempts, tc.wantAttempts)
			}
			if (tc.wantErr == nil) != (err == nil) || (tc.wantErr != nil && !errors.Is(err, tc.wantErr)) {
				t.Errorf("inTx = %v, want %v", err, tc.wantErr)
			}
		})
	}
}

// TestInTxRetriesARealConflict: a REPEATABLE READ transaction whose row
// another transaction updates after its snapshot fails with a
// serialization failure at its own update; inTx runs it again on a new
// snapshot, which sees the other update, so neither write is lost.
func TestInTxRetriesARealConflict(t *testing.T) {
	s := openTest(t, pgtest.URL(t))
	ctx := t.Context()
	if _, err := s.pool.Exec(ctx, "CREATE TABLE probe (id integer PRIMARY KEY, v integer NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.pool.Exec(ctx, "INSERT INTO probe VALUES (1, 0)"); err != nil {
		t.Fatal(err)
	}
	attempts := 0
	err := s.inTx(ctx, repeatableRead, func(tx pgx.Tx) error {
		attempts++
		var v int
		if err := tx.QueryRow(ctx, "SELECT v FROM probe WHERE id = 1").Scan(&v); err != nil {
			return err
		}
		if attempts == 1 { // another writer, on another connection, commits in between
			if _, err := s.pool.Exec(ctx, "UPDATE probe SET v = v + 1 WHERE id = 1"); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, "UPDATE probe SET v = $1 WHERE id = 1", v+10)
		return err
	})
	if err != nil {
		t.Fatalf("inTx: %v", err)
	}
	var v int
	if err := s.pool.QueryRow(ctx, "SELECT v FROM probe WHERE id = 1").Scan(&v); err != nil {
		t.Fatal(err)
	}
	if attempts != 2 || v != 11 {
		t.Errorf("attempts %d, v = %d; want 2 attempts and v = 11 (both writes kept)", attempts, v)
	}
}
