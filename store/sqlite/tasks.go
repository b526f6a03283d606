package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/quiverhq/quiver/store"
)

// taskColumns is the column list every task read selects, in scanTask's
// order.
const taskColumns = `org_id, id, user_id, agent, conversation_id, channel_id, title, instruction, kind, spec,
	every_seconds, timezone, tools, state, next_run_at, version, lease_owner, lease_until, attempts, runs,
	last_due_at, last_run_at, last_status, last_error, last_turn_id, last_late_ms, created_turn_id,
	created_at, updated_at`

// rowScanner is a *sql.Row or *sql.Rows.
type rowScanner interface{ Scan(dest ...any) error }

// scanTask reads one row of taskColumns.
func scanTask(r rowScanner) (store.Task, error) {
	var t store.Task
	var every, lateMS int64
	var tools, created, updated string
	var next, lease, lastDue, lastRun sql.NullString
	err := r.Scan(&t.OrgID, &t.ID, &t.UserID, &t.Agent, &t.ConversationID, &t.ChannelID, &t.Title, &t.Instruction,
		&t.Kind, &t.Spec, &every, &t.Timezone, &tools, &t.State, &next, &t.Version, &t.LeaseOwner, &lease,
		&t.Attempts, &t.Runs, &lastDue, &lastRun, &t.LastStatus, &t.LastError, &t.LastTurnID, &lateMS,
		&t.CreatedTurnID, &created, &updated)
	if err != nil {
		return store.Task{}, err
	}
	t.Every, t.LastLate = time.Duration(every)*time.Second, time.Duration(lateMS)*time.Millisecond
	if t.Tools, err = decodeTools(tools); err != nil {
		return store.Task{}, err
	}
	if t.Tools == nil {
		t.Tools = []string{}
	}
	for _, f := range []struct {
		dst *time.Time
		src sql.NullString
	}{{&t.NextRunAt, next}, {&t.LeaseUntil, lease}, {&t.LastDueAt, lastDue}, {&t.LastRunAt, lastRun}} {
		if *f.dst, err = decodeOptionalTime(f.src); err != nil {
			return store.Task{}, err
		}
	}
	if t.CreatedAt, err = decodeTime(created); err != nil {
		return store.Task{}, err
	}
	if t.UpdatedAt, err = decodeTime(updated); err != nil {
		return store.Task{}, err
	}
	return t, nil
}

// CreateTask validates t and, in one write transaction (the write lock
// held from BEGIN, so the counts cannot change before the insert),
// checks the bounds, prunes the person's oldest finished tasks and
// inserts it.
func (s *Store) CreateTask(ctx context.Context, t store.Task) (store.Task, error) {
	t, err := store.CheckTask(t)
	if err != nil {
		return store.Task{}, fmt.Errorf("sqlite: create task: %w", err)
	}
	err = s.inWriteTx(ctx, func(tx *sql.Tx) error {
		var taken int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM scheduled_tasks WHERE org_id = ? AND id = ?`, t.OrgID, t.ID).Scan(&taken); err != nil {
			return err
		}
		if taken > 0 {
			return fmt.Errorf("task %q: %w", t.ID, store.ErrExists)
		}
		var perUser, perOrg int64
		if err := tx.QueryRowContext(ctx, `SELECT
				count(*) FILTER (WHERE user_id = ?), count(*)
			FROM scheduled_tasks WHERE org_id = ? AND state IN ('active', 'paused')`, t.UserID, t.OrgID).Scan(&perUser, &perOrg); err != nil {
			return err
		}
		if t.State != store.TaskDone {
			if err := store.CheckTaskCounts(perUser, perOrg); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM scheduled_tasks WHERE org_id = ? AND id IN (
				SELECT id FROM scheduled_tasks WHERE org_id = ? AND user_id = ? AND state = 'done'
				ORDER BY updated_at DESC, id DESC LIMIT -1 OFFSET ?)`, t.OrgID, t.OrgID, t.UserID, store.MaxDoneTasksPerUser-1); err != nil {
			return err
		}
		return insertTask(ctx, tx, t)
	})
	if err != nil {
		return store.Task{}, fmt.Errorf("sqlite: create task: %w", err)
	}
	return t, nil
}

// insertTask writes t, checked, as a new row.
func insertTask(ctx context.Context, tx *sql.Tx, t store.Task) error {
	tools, err := encodeTools(t.Tools)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO scheduled_tasks (claimable_at, `+taskColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, encodeOptionalTime(store.ClaimableAt(t)),
		t.OrgID, t.ID, t.UserID, t.Agent, t.ConversationID, t.ChannelID, t.Title, t.Instruction, t.Kind, t.Spec,
		int64(t.Every/time.Second), t.Timezone, tools, t.State, encodeOptionalTime(t.NextRunAt), t.Version,
		t.LeaseOwner, encodeOptionalTime(t.LeaseUntil), t.Attempts, t.Runs, encodeOptionalTime(t.LastDueAt),
		encodeOptionalTime(t.LastRunAt), t.LastStatus, t.LastError, t.LastTurnID, t.LastLate.Milliseconds(),
		t.CreatedTurnID, encodeTime(t.CreatedAt), encodeTime(t.UpdatedAt))
	return err
}

// GetTask reads one task.
func (s *Store) GetTask(ctx context.Context, orgID, id string) (store.Task, error) {
	if !validKeys(orgID, id) {
		return store.Task{}, fmt.Errorf("sqlite: get task: %w", store.ErrNotFound)
	}
	t, err := scanTask(s.reader.QueryRowContext(ctx, `SELECT `+taskColumns+` FROM scheduled_tasks WHERE org_id = ? AND id = ?`, orgID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Task{}, fmt.Errorf("sqlite: get task %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.Task{}, fmt.Errorf("sqlite: get task: %w", err)
	}
	return t, nil
}

// ListTasks lists the organisation's tasks f keeps.
func (s *Store) ListTasks(ctx context.Context, orgID string, f store.TaskFilter) ([]store.Task, error) {
	out := []store.Task{}
	if !validKeys(orgID, f.UserID, f.ConversationID) {
		return out, nil
	}
	q := `SELECT ` + taskColumns + ` FROM scheduled_tasks WHERE org_id = ?`
	args := []any{orgID}
	if f.UserID != "" {
		q += ` AND user_id = ?`
		args = append(args, f.UserID)
	}
	if f.ConversationID != "" {
		q += ` AND conversation_id = ?`
		args = append(args, f.ConversationID)
	}
	q += ` ORDER BY next_run_at IS NULL, next_run_at, id LIMIT ?`
	rows, err := s.reader.QueryContext(ctx, q, append(args, store.MaxTaskList)...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list tasks: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: list tasks: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list tasks: %w", err)
	}
	return out, nil
}

// UpdateTask applies u under the write lock when the stored version is
// version.
func (s *Store) UpdateTask(ctx context.Context, orgID, id string, version int64, u store.TaskUpdate) (store.Task, error) {
	if !validKeys(orgID, id) {
		return store.Task{}, fmt.Errorf("sqlite: update task: %w", store.ErrNotFound)
	}
	var out store.Task
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		t, err := scanTask(tx.QueryRowContext(ctx, `SELECT `+taskColumns+` FROM scheduled_tasks WHERE org_id = ? AND id = ?`, orgID, id))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("task %q: %w", id, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		if t.Version != version {
			return fmt.Errorf("task %q is at version %d, not %d: %w", id, t.Version, version, store.ErrConflict)
		}
		wasLive := t.State != store.TaskDone
		if out, err = store.ApplyTaskUpdate(t, u); err != nil {
			return err
		}
		if !wasLive && out.State != store.TaskDone {
			// A finished task made to run again counts again.
			var perUser, perOrg int64
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FILTER (WHERE user_id = ?), count(*)
				FROM scheduled_tasks WHERE org_id = ? AND state IN ('active', 'paused')`, out.UserID, orgID).Scan(&perUser, &perOrg); err != nil {
				return err
			}
			if err := store.CheckTaskCounts(perUser, perOrg); err != nil {
				return err
			}
		}
		tools, err := encodeTools(out.Tools)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE scheduled_tasks SET title = ?, instruction = ?, conversation_id = ?, channel_id = ?,
				kind = ?, spec = ?, every_seconds = ?, timezone = ?, tools = ?, state = ?, next_run_at = ?, claimable_at = ?,
				version = ?, updated_at = ?
			WHERE org_id = ? AND id = ?`,
			out.Title, out.Instruction, out.ConversationID, out.ChannelID, out.Kind, out.Spec, int64(out.Every/time.Second),
			out.Timezone, tools, out.State, encodeOptionalTime(out.NextRunAt), encodeOptionalTime(store.ClaimableAt(out)),
			out.Version, encodeTime(out.UpdatedAt), orgID, id)
		return err
	})
	if err != nil {
		return store.Task{}, fmt.Errorf("sqlite: update task: %w", err)
	}
	return out, nil
}

// DeleteTask deletes the task.
func (s *Store) DeleteTask(ctx context.Context, orgID, id string) error {
	if !validKeys(orgID, id) {
		return fmt.Errorf("sqlite: delete task: %w", store.ErrNotFound)
	}
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM scheduled_tasks WHERE org_id = ? AND id = ?`, orgID, id)
		if err != nil {
			return err
		}
		return changedOr(res, fmt.Errorf("task %q: %w", id, store.ErrNotFound))
	})
	if err != nil {
		return fmt.Errorf("sqlite: delete task: %w", err)
	}
	return nil
}

// ClaimDueTasks leases the earliest due tasks in one write transaction:
// SQLite has one writer, so two claims never see the same task free.
func (s *Store) ClaimDueTasks(ctx context.Context, c store.TaskClaim) ([]store.Task, error) {
	if err := store.CheckTaskClaim(c); err != nil {
		return nil, fmt.Errorf("sqlite: claim tasks: %w", err)
	}
	now, until := encodeTime(c.Now), encodeTime(c.Now.Add(c.Lease))
	var out []store.Task
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		out = out[:0]
		rows, err := tx.QueryContext(ctx, `UPDATE scheduled_tasks SET lease_owner = ?2, lease_until = ?1, claimable_at = ?1,
				attempts = attempts + 1
			WHERE (org_id, id) IN (
				SELECT org_id, id FROM scheduled_tasks
				WHERE state = 'active' AND claimable_at <= ?3
				ORDER BY claimable_at, org_id, id LIMIT ?4)
			RETURNING `+taskColumns, until, c.Owner, now, c.Limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			t, err := scanTask(rows)
			if err != nil {
				return err
			}
			out = append(out, t)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: claim tasks: %w", err)
	}
	store.SortClaimed(out)
	return out, nil
}

// leased runs write, an UPDATE of the task held by owner, and answers
// ErrLeaseLost when it changed no row.
func (s *Store) leased(ctx context.Context, op, orgID, id, owner, write string, args ...any) error {
	if !validKeys(orgID, id, owner) {
		return fmt.Errorf("sqlite: %s: %w", op, store.ErrLeaseLost)
	}
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, write+` WHERE org_id = ? AND id = ? AND lease_owner = ?`, append(args, orgID, id, owner)...)
		if err != nil {
			return err
		}
		return changedOr(res, store.ErrLeaseLost)
	})
	if err != nil {
		return fmt.Errorf("sqlite: %s: %w", op, err)
	}
	return nil
}

// RenewTaskLease extends owner's lease.
func (s *Store) RenewTaskLease(ctx context.Context, orgID, id, owner string, until time.Time) error {
	return s.leased(ctx, "renew task lease", orgID, id, owner,
		`UPDATE scheduled_tasks SET lease_until = ?1, claimable_at = max(next_run_at, ?1)`, encodeTime(until))
}

// RetryTask hands the run back until at, the attempt not counted.
func (s *Store) RetryTask(ctx context.Context, orgID, id, owner string, at time.Time) error {
	return s.leased(ctx, "retry task", orgID, id, owner,
		`UPDATE scheduled_tasks SET lease_owner = '', lease_until = ?1, claimable_at = max(next_run_at, ?1),
			attempts = max(attempts - 1, 0)`, encodeTime(at))
}

// FinishTaskRun records owner's run and releases the lease.
func (s *Store) FinishTaskRun(ctx context.Context, orgID, id, owner string, f store.TaskFinish) error {
	f, err := store.CheckTaskFinish(f)
	if err != nil {
		return fmt.Errorf("sqlite: finish task run: %w", err)
	}
	started := 0
	if f.Started {
		started = 1
	}
	// ?1 the due time claimed, ?2 the next: a task still due then moves
	// on; one a person gave a new time keeps it.
	return s.leased(ctx, "finish task run", orgID, id, owner, strings.Join([]string{
		`UPDATE scheduled_tasks SET lease_owner = '', lease_until = NULL, attempts = 0, runs = runs + ?3,`,
		`last_due_at = ?1, last_run_at = ?4, last_status = ?5, last_error = ?6, last_turn_id = ?7, last_late_ms = ?8,`,
		`next_run_at = CASE WHEN next_run_at = ?1 THEN ?2 ELSE next_run_at END,`,
		`claimable_at = CASE WHEN next_run_at = ?1 THEN ?2 ELSE next_run_at END,`,
		`state = CASE WHEN next_run_at = ?1 AND ?2 IS NULL THEN 'done' ELSE state END`,
	}, " "), encodeOptionalTime(f.DueAt), encodeOptionalTime(f.Next), started, encodeOptionalTime(f.RanAt), f.Status, f.Error,
		f.TurnID, f.Late.Milliseconds())
}

// NextTaskDue returns the earliest time an active task may be claimed.
func (s *Store) NextTaskDue(ctx context.Context) (time.Time, bool, error) {
	var next sql.NullString
	err := s.reader.QueryRowContext(ctx, `SELECT min(claimable_at) FROM scheduled_tasks WHERE state = 'active'`).Scan(&next)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("sqlite: next task due: %w", err)
	}
	t, err := decodeOptionalTime(next)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("sqlite: next task due: %w", err)
	}
	return t, next.Valid, nil
}
