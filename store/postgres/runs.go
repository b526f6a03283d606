package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quiverhq/quiver/store"
)

// Runs under concurrent writers from several replicas. Every statement
// below runs at READ COMMITTED; what keeps a run's invariants is the row
// lock of its runs row, which every writer of that conversation takes
// (an UPDATE or DELETE locks the row, and on finding it changed by a
// transaction that committed meanwhile re-evaluates its WHERE on the new
// version). Statements that lock several runs rows lock them in key order
// or skip locked ones, so they never deadlock with each other. A writer
// that also changes a run's turn (EndRun, ClaimRun's takeover, ReapRuns)
// locks the runs row before the turns row, and the writers of turns
// alone (PutTurn, InterruptTurns) lock no runs row, so the two tables
// never deadlock either.

// runColumns are the columns scanRun reads, in its order.
const runColumns = `org_id, conversation_id, turn_id, user_id, replica,
	started_at, expires_at, cancel_requested`

// claimAttempts bounds ClaimRun's insert-or-lock loop: each further round
// means another claim inserted the conversation's run and something
// deleted it again before this one could lock it.
const claimAttempts = 4

// ClaimRun makes r the conversation's running turn. In one transaction at
// READ COMMITTED: an INSERT … ON CONFLICT DO NOTHING (it waits for a
// concurrent insert of the same key to commit or abort), and when the
// conversation has a run already, SELECT … FOR UPDATE locks it so that no
// other claim, renewal or reaper changes it before the commit; an expired
// one is replaced and its turn interrupted under that lock. Two claims of
// one conversation queue on the row: the second sees the first's run,
// unexpired, and gets store.ErrExists.
func (s *Store) ClaimRun(ctx context.Context, r store.Run) (*store.Run, error) {
	if err := store.CheckClaim(r); err != nil {
		return nil, wrapErr("claim run", err)
	}
	var expired *store.Run
	err := s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		expired = nil // inTx may run this again
		for range claimAttempts {
			ok, err := insertRun(ctx, tx, r)
			if err != nil || ok {
				return err
			}
			old, err := lockRun(ctx, tx, r.OrgID, r.ConversationID)
			switch {
			case errors.Is(err, pgx.ErrNoRows):
				continue // ended or reaped since the insert saw it: insert again
			case err != nil:
				return err
			case !old.ExpiresAt.Before(instant(r.StartedAt)):
				// Both at the stored precision (microseconds), as
				// ReapRuns compares them in SQL.
				return store.ErrExists
			}
			if err := takeOver(ctx, tx, old, r); err != nil {
				return err
			}
			expired = &old
			return nil
		}
		return store.ErrExists // the conversation is claimed and released as we look
	})
	if err != nil {
		return nil, wrapErr("claim run", err)
	}
	return expired, nil
}

// insertRun inserts r unless its conversation has a run, and reports
// whether it did.
func insertRun(ctx context.Context, tx pgx.Tx, r store.Run) (bool, error) {
	const q = `INSERT INTO runs (` + runColumns + `)
		VALUES ($1, $2, $3, $4, $5, $6, $7, false)
		ON CONFLICT (org_id, conversation_id) DO NOTHING`
	tag, err := tx.Exec(ctx, q, r.OrgID, r.ConversationID, r.TurnID, r.UserID,
		r.Replica, r.StartedAt, r.ExpiresAt)
	return tag.RowsAffected() == 1, err
}

// lockRun reads the conversation's run and locks its row until the
// transaction ends; no row is pgx.ErrNoRows.
func lockRun(ctx context.Context, tx pgx.Tx, orgID, conversationID string) (store.Run, error) {
	const q = `SELECT ` + runColumns + ` FROM runs
		WHERE org_id = $1 AND conversation_id = $2 FOR UPDATE`
	return scanRun(tx.QueryRow(ctx, q, orgID, conversationID))
}

// takeOver replaces old, locked and expired, by r, and marks old's turn
// interrupted at r.StartedAt, in the caller's transaction.
func takeOver(ctx context.Context, tx pgx.Tx, old, r store.Run) error {
	const replace = `UPDATE runs SET turn_id = $3, user_id = $4, replica = $5,
			started_at = $6, expires_at = $7, cancel_requested = false
		WHERE org_id = $1 AND conversation_id = $2`
	if _, err := tx.Exec(ctx, replace, r.OrgID, r.ConversationID, r.TurnID, r.UserID,
		r.Replica, r.StartedAt, r.ExpiresAt); err != nil {
		return err
	}
	const interrupt = `UPDATE turns SET status = $3, ended_at = $4
		WHERE org_id = $1 AND id = $2 AND status = $5`
	_, err := tx.Exec(ctx, interrupt, old.OrgID, old.TurnID, store.TurnInterrupted,
		r.StartedAt, store.TurnRunning)
	return err
}

// RenewRuns extends the replica's unexpired leases in one statement. It
// locks the rows in key order (the subquery's FOR UPDATE, which
// re-evaluates expires_at on a row changed meanwhile): a run a claim took
// over or a reaper deleted first is not renewed, and renewals never
// deadlock with RequestCancelUser, which locks in the same order.
func (s *Store) RenewRuns(ctx context.Context, replica string, now, expires time.Time) ([]store.Run, error) {
	if err := store.CheckRenew(replica, now, expires); err != nil {
		return nil, wrapErr("renew runs", err)
	}
	const q = `UPDATE runs SET expires_at = $3
		WHERE (org_id, conversation_id) IN (
			SELECT org_id, conversation_id FROM runs
			WHERE replica = $1 AND expires_at >= $2
			ORDER BY org_id, conversation_id FOR UPDATE)
		RETURNING ` + runColumns
	rows, err := s.pool.Query(ctx, q, replica, now, expires)
	if err != nil {
		return nil, wrapErr("renew runs", err)
	}
	runs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.Run, error) { return scanRun(row) })
	if err != nil {
		return nil, wrapErr("renew runs", err)
	}
	return runs, nil
}

// EndRun deletes the conversation's run when turnID holds it and
// interrupts the turn when it is still running, in one statement at READ
// COMMITTED. The DELETE locks the runs row first (a concurrent takeover
// committed first makes its WHERE false, and nothing else is done); only
// a row it deleted feeds the turns UPDATE, which then locks the turn's
// row: the runs row before the turns row, as in ClaimRun's takeover and
// ReapRuns. A turn whose status changed meanwhile (its engine wrote it
// last) is re-checked on its new version and left alone when it is no
// longer running. inTx retries a deadlock, should a writer outside this
// file lock turns otherwise.
func (s *Store) EndRun(ctx context.Context, orgID, conversationID, turnID string, at time.Time) error {
	if err := store.CheckEnd(at); err != nil {
		return wrapErr("end run", err)
	}
	// A data-modifying WITH runs to completion whether or not the main
	// query reads it.
	const q = `WITH ended AS (
			DELETE FROM runs
			WHERE org_id = $1 AND conversation_id = $2 AND turn_id = $3
			RETURNING org_id, turn_id
		), interrupted AS (
			UPDATE turns t SET status = $4, ended_at = $5 FROM ended e
			WHERE t.org_id = e.org_id AND t.id = e.turn_id AND t.status = $6
		)
		SELECT count(*) FROM ended`
	err := s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		var n int
		err := tx.QueryRow(ctx, q, orgID, conversationID, turnID,
			store.TurnInterrupted, at, store.TurnRunning).Scan(&n)
		if err == nil && n == 0 {
			err = pgx.ErrNoRows
		}
		return err
	})
	if err != nil {
		return wrapErr("end run", err)
	}
	return nil
}

// RequestCancel marks the conversation's run in one statement.
func (s *Store) RequestCancel(ctx context.Context, orgID, conversationID string) (store.Run, error) {
	const q = `UPDATE runs SET cancel_requested = true
		WHERE org_id = $1 AND conversation_id = $2 RETURNING ` + runColumns
	r, err := scanRun(s.pool.QueryRow(ctx, q, orgID, conversationID))
	if err != nil {
		return store.Run{}, wrapErr("request cancel", err)
	}
	return r, nil
}

// RequestCancelUser marks the user's runs in one statement, locking them
// in key order as RenewRuns does.
func (s *Store) RequestCancelUser(ctx context.Context, orgID, userID string) (int, error) {
	const q = `UPDATE runs SET cancel_requested = true
		WHERE (org_id, conversation_id) IN (
			SELECT org_id, conversation_id FROM runs
			WHERE org_id = $1 AND user_id = $2
			ORDER BY org_id, conversation_id FOR UPDATE)`
	tag, err := s.pool.Exec(ctx, q, orgID, userID)
	if err != nil {
		return 0, wrapErr("request cancel of user", err)
	}
	return int(tag.RowsAffected()), nil
}

// ReapRuns deletes the runs that expired before expiredBefore and
// interrupts their turns in one statement. Its FOR UPDATE SKIP LOCKED
// takes only runs rows no one else holds: a concurrent reaper's are
// skipped (so no run is reaped twice, and reapers never wait for each
// other), as are rows a claim, renewal or cancel is changing (the next
// reap looks again); a row changed and committed meanwhile is
// re-evaluated, so a renewed lease is not reaped. It then locks the turns
// rows in key order, as InterruptTurns does: a runs row is always locked
// before a turns row (here, in ClaimRun's takeover and in EndRun, each of
// which locks one runs row and then its one turns row), InterruptTurns
// locks no runs row, and turns rows are locked in one order, so none of
// them deadlock. inTx still retries one, should a writer outside this
// file lock turns otherwise.
func (s *Store) ReapRuns(ctx context.Context, expiredBefore, at time.Time) ([]store.Run, error) {
	if err := store.CheckReap(expiredBefore, at); err != nil {
		return nil, wrapErr("reap runs", err)
	}
	const q = `WITH expired AS (
			SELECT org_id, conversation_id FROM runs WHERE expires_at < $1
			ORDER BY org_id, conversation_id FOR UPDATE SKIP LOCKED
		), reaped AS (
			DELETE FROM runs r USING expired e
			WHERE r.org_id = e.org_id AND r.conversation_id = e.conversation_id
			RETURNING r.org_id, r.conversation_id, r.turn_id, r.user_id, r.replica,
				r.started_at, r.expires_at, r.cancel_requested
		), running AS (
			SELECT t.org_id, t.id FROM turns t JOIN reaped r
				ON t.org_id = r.org_id AND t.id = r.turn_id
			WHERE t.status = $4
			ORDER BY t.org_id, t.id FOR UPDATE OF t
		), interrupted AS (
			UPDATE turns t SET status = $3, ended_at = $2 FROM running g
			WHERE t.org_id = g.org_id AND t.id = g.id
		)
		SELECT ` + runColumns + ` FROM reaped`
	var reaped []store.Run
	err := s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, q, expiredBefore, at, store.TurnInterrupted, store.TurnRunning)
		if err != nil {
			return err
		}
		reaped, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.Run, error) { return scanRun(row) })
		return err
	})
	if err != nil {
		return nil, wrapErr("reap runs", err)
	}
	return reaped, nil
}

// GetRun returns the conversation's run.
func (s *Store) GetRun(ctx context.Context, orgID, conversationID string) (store.Run, error) {
	const q = `SELECT ` + runColumns + ` FROM runs WHERE org_id = $1 AND conversation_id = $2`
	r, err := scanRun(s.pool.QueryRow(ctx, q, orgID, conversationID))
	if err != nil {
		return store.Run{}, wrapErr("get run", err)
	}
	return r, nil
}

// scanRun reads one row of runColumns, its instants in UTC.
func scanRun(row pgx.Row) (store.Run, error) {
	var r store.Run
	err := row.Scan(&r.OrgID, &r.ConversationID, &r.TurnID, &r.UserID, &r.Replica,
		&r.StartedAt, &r.ExpiresAt, &r.CancelRequested)
	if err != nil {
		return store.Run{}, err
	}
	r.StartedAt, r.ExpiresAt = utc(r.StartedAt), utc(r.ExpiresAt)
	return r, nil
}
