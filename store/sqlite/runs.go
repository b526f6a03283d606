package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/quiverhq/quiver/store"
)

// SQLite has one replica, but the runs behave as on PostgreSQL: every
// write below runs on the one writer connection, in a transaction that
// takes the write lock at BEGIN (_txlock=immediate), so a rule read before
// a write (the conversation's run, its lease) holds until the commit, here
// and against another process on the same file.

// runColumns are the columns scanRun reads, in its order.
const runColumns = `org_id, conversation_id, turn_id, user_id, replica,
	started_at, expires_at, cancel_requested`

// ClaimRun makes r the conversation's running turn, replacing an expired
// run (whose turn it marks interrupted) in the same transaction.
func (s *Store) ClaimRun(ctx context.Context, r store.Run) (*store.Run, error) {
	if err := store.CheckClaim(r); err != nil {
		return nil, fmt.Errorf("sqlite: claim run: %w", err)
	}
	var expired *store.Run
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		old, err := getRun(ctx, tx, r.OrgID, r.ConversationID)
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			return err
		case !old.ExpiresAt.Before(r.StartedAt):
			return store.ErrExists
		default:
			if err := interruptRunTurns(ctx, tx, []store.Run{old}, r.StartedAt); err != nil {
				return err
			}
			expired = &old
		}
		return putRun(ctx, tx, r)
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: claim run: %w", err)
	}
	return expired, nil
}

// putRun stores r as its conversation's run, replacing the stored one.
func putRun(ctx context.Context, tx *sql.Tx, r store.Run) error {
	const q = `INSERT OR REPLACE INTO runs (` + runColumns + `)
		VALUES (?, ?, ?, ?, ?, ?, ?, 0)`
	_, err := tx.ExecContext(ctx, q, r.OrgID, r.ConversationID, r.TurnID, r.UserID,
		r.Replica, encodeTime(r.StartedAt), encodeTime(r.ExpiresAt))
	return err
}

// interruptRunTurns marks the turns of runs that are still running as
// interrupted, ended at `at`.
func interruptRunTurns(ctx context.Context, tx *sql.Tx, runs []store.Run, at time.Time) error {
	const q = `UPDATE turns SET status = ?, ended_at = ?
		WHERE org_id = ? AND id = ? AND status = ?`
	for _, r := range runs {
		if _, err := tx.ExecContext(ctx, q, store.TurnInterrupted, encodeTime(at),
			r.OrgID, r.TurnID, store.TurnRunning); err != nil {
			return fmt.Errorf("interrupt turn: %w", err)
		}
	}
	return nil
}

// RenewRuns extends the unexpired leases of replica's runs to expires, in
// one statement, and returns the runs renewed.
func (s *Store) RenewRuns(ctx context.Context, replica string, now, expires time.Time) ([]store.Run, error) {
	if err := store.CheckRenew(replica, now, expires); err != nil {
		return nil, fmt.Errorf("sqlite: renew runs: %w", err)
	}
	const q = `UPDATE runs SET expires_at = ? WHERE replica = ? AND expires_at >= ?
		RETURNING ` + runColumns
	rows, err := s.writer.QueryContext(ctx, q, encodeTime(expires), replica, encodeTime(now))
	if err != nil {
		return nil, fmt.Errorf("sqlite: renew runs: %w", err)
	}
	runs, err := scanRuns(rows)
	if err != nil {
		return nil, fmt.Errorf("sqlite: renew runs: %w", err)
	}
	return runs, nil
}

// EndRun deletes the conversation's run when turnID holds it and
// interrupts the turn when it is still running, in one transaction.
func (s *Store) EndRun(ctx context.Context, orgID, conversationID, turnID string, at time.Time) error {
	if err := store.CheckEnd(at); err != nil {
		return fmt.Errorf("sqlite: end run: %w", err)
	}
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		const q = `DELETE FROM runs WHERE org_id = ? AND conversation_id = ? AND turn_id = ?`
		res, err := tx.ExecContext(ctx, q, orgID, conversationID, turnID)
		if err == nil {
			err = changedOr(res, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		return interruptRunTurns(ctx, tx, []store.Run{{OrgID: orgID, TurnID: turnID}}, at)
	})
	if err != nil {
		return fmt.Errorf("sqlite: end run: %w", err)
	}
	return nil
}

// RequestCancel marks the conversation's run, in one statement.
func (s *Store) RequestCancel(ctx context.Context, orgID, conversationID string) (store.Run, error) {
	const q = `UPDATE runs SET cancel_requested = 1
		WHERE org_id = ? AND conversation_id = ? RETURNING ` + runColumns
	r, err := scanRun(s.writer.QueryRowContext(ctx, q, orgID, conversationID))
	if err != nil {
		return store.Run{}, fmt.Errorf("sqlite: request cancel: %w", err)
	}
	return r, nil
}

// RequestCancelUser marks the user's runs, in one statement.
func (s *Store) RequestCancelUser(ctx context.Context, orgID, userID string) (int, error) {
	const q = `UPDATE runs SET cancel_requested = 1 WHERE org_id = ? AND user_id = ?`
	res, err := s.writer.ExecContext(ctx, q, orgID, userID)
	if err != nil {
		return 0, fmt.Errorf("sqlite: request cancel of user: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("sqlite: request cancel of user: %w", err)
	}
	return int(n), nil
}

// ReapRuns deletes the runs that expired before expiredBefore and
// interrupts their turns, ended at `at`, in one transaction.
func (s *Store) ReapRuns(ctx context.Context, expiredBefore, at time.Time) ([]store.Run, error) {
	if err := store.CheckReap(expiredBefore, at); err != nil {
		return nil, fmt.Errorf("sqlite: reap runs: %w", err)
	}
	var reaped []store.Run
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		const q = `DELETE FROM runs WHERE expires_at < ? RETURNING ` + runColumns
		rows, err := tx.QueryContext(ctx, q, encodeTime(expiredBefore))
		if err != nil {
			return err
		}
		if reaped, err = scanRuns(rows); err != nil {
			return err
		}
		return interruptRunTurns(ctx, tx, reaped, at)
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: reap runs: %w", err)
	}
	return reaped, nil
}

// GetRun returns the conversation's run.
func (s *Store) GetRun(ctx context.Context, orgID, conversationID string) (store.Run, error) {
	r, err := getRun(ctx, s.reader, orgID, conversationID)
	if err != nil {
		return store.Run{}, fmt.Errorf("sqlite: get run: %w", err)
	}
	return r, nil
}

// getRun reads the conversation's run through db, or store.ErrNotFound.
func getRun(ctx context.Context, db queryRower, orgID, conversationID string) (store.Run, error) {
	const q = `SELECT ` + runColumns + ` FROM runs WHERE org_id = ? AND conversation_id = ?`
	return scanRun(db.QueryRowContext(ctx, q, orgID, conversationID))
}

// scanRun reads one row of runColumns; no row is store.ErrNotFound.
func scanRun(row scanner) (store.Run, error) {
	var r store.Run
	var started, expires string
	err := row.Scan(&r.OrgID, &r.ConversationID, &r.TurnID, &r.UserID, &r.Replica,
		&started, &expires, &r.CancelRequested)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Run{}, store.ErrNotFound
	}
	if err != nil {
		return store.Run{}, err
	}
	if r.StartedAt, err = decodeTime(started); err != nil {
		return store.Run{}, err
	}
	if r.ExpiresAt, err = decodeTime(expires); err != nil {
		return store.Run{}, err
	}
	return r, nil
}

// scanRuns reads every row of runColumns and closes rows.
func scanRuns(rows *sql.Rows) ([]store.Run, error) {
	defer rows.Close()
	var runs []store.Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	return runs, rows.Err()
}
