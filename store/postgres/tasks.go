package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quiverhq/quiver/store"
)

// taskLockClass is the first key of the transaction-scoped advisory lock
// CreateTask (and an UpdateTask that revives a finished task) takes (the
// ASCII of "task"); the second is a hash of the organisation. Under it
// the bounds are checked and the row written before another replica
// counts.
const taskLockClass int32 = 0x7461736b

// taskColumns is the column list every task read selects, in scanTask's
// order.
const taskColumns = `org_id, id, user_id, agent, conversation_id, channel_id, title, instruction, kind, spec,
	every_seconds, timezone, tools, state, next_run_at, version, lease_owner, lease_until, attempts, runs,
	last_due_at, last_run_at, last_status, last_error, last_turn_id, last_late_ms, created_turn_id,
	created_at, updated_at`

// scanTask reads one row of taskColumns.
func scanTask(r pgx.Row) (store.Task, error) {
	var t store.Task
	var every, lateMS int64
	var next, lease, lastDue, lastRun *time.Time
	err := r.Scan(&t.OrgID, &t.ID, &t.UserID, &t.Agent, &t.ConversationID, &t.ChannelID, &t.Title, &t.Instruction,
		&t.Kind, &t.Spec, &every, &t.Timezone, &t.Tools, &t.State, &next, &t.Version, &t.LeaseOwner, &lease,
		&t.Attempts, &t.Runs, &lastDue, &lastRun, &t.LastStatus, &t.LastError, &t.LastTurnID, &lateMS,
		&t.CreatedTurnID, &t.CreatedAt, &t.UpdatedAt)
	if err != nil {
		return store.Task{}, err
	}
	t.Every, t.LastLate = time.Duration(every)*time.Second, time.Duration(lateMS)*time.Millisecond
	if t.Tools == nil {
		t.Tools = []string{}
	}
	t.NextRunAt, t.LeaseUntil = fromOptionalTime(next), fromOptionalTime(lease)
	t.LastDueAt, t.LastRunAt = fromOptionalTime(lastDue), fromOptionalTime(lastRun)
	t.CreatedAt, t.UpdatedAt = utc(t.CreatedAt), utc(t.UpdatedAt)
	return t, nil
}

// lockTasks takes the organisation's task lock for the transaction.
func lockTasks(ctx context.Context, tx pgx.Tx, orgID string) error {
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1::integer, hashtext($2::text))`, taskLockClass, orgID)
	return err
}

// taskCounts is the person's and the organisation's active and paused
// tasks.
func taskCounts(ctx context.Context, tx pgx.Tx, orgID, userID string) (perUser, perOrg int64, err error) {
	err = tx.QueryRow(ctx, `SELECT count(*) FILTER (WHERE user_id = $2), count(*)
		FROM scheduled_tasks WHERE org_id = $1 AND state IN ('active', 'paused')`, orgID, userID).Scan(&perUser, &perOrg)
	return perUser, perOrg, err
}

// CreateTask validates t and, under the organisation's task lock,
// checks the bounds, prunes the person's oldest finished tasks and
// inserts it.
func (s *Store) CreateTask(ctx context.Context, t store.Task) (store.Task, error) {
	t, err := store.CheckTask(t)
	if err != nil {
		return store.Task{}, fmt.Errorf("postgres: create task: %w", err)
	}
	err = s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		if err := lockTasks(ctx, tx, t.OrgID); err != nil {
			return err
		}
		var taken bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM scheduled_tasks WHERE org_id = $1 AND id = $2)`, t.OrgID, t.ID).Scan(&taken); err != nil {
			return err
		}
		if taken {
			return fmt.Errorf("task %q: %w", t.ID, store.ErrExists)
		}
		if t.State != store.TaskDone {
			perUser, perOrg, err := taskCounts(ctx, tx, t.OrgID, t.UserID)
			if err != nil {
				return err
			}
			if err := store.CheckTaskCounts(perUser, perOrg); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `DELETE FROM scheduled_tasks WHERE org_id = $1 AND id IN (
				SELECT id FROM scheduled_tasks WHERE org_id = $1 AND user_id = $2 AND state = 'done'
				ORDER BY updated_at DESC, id DESC OFFSET $3)`, t.OrgID, t.UserID, store.MaxDoneTasksPerUser-1); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO scheduled_tasks (`+taskColumns+`, claimable_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20,
				$21, $22, $23, $24, $25, $26, $27, $28, $29, $30)`,
			t.OrgID, t.ID, t.UserID, t.Agent, t.ConversationID, t.ChannelID, t.Title, t.Instruction, t.Kind, t.Spec,
			int64(t.Every/time.Second), t.Timezone, textArray(t.Tools), t.State, optionalTime(t.NextRunAt), t.Version,
			t.LeaseOwner, optionalTime(t.LeaseUntil), t.Attempts, t.Runs, optionalTime(t.LastDueAt),
			optionalTime(t.LastRunAt), t.LastStatus, t.LastError, t.LastTurnID, t.LastLate.Milliseconds(),
			t.CreatedTurnID, t.CreatedAt, t.UpdatedAt, optionalTime(store.ClaimableAt(t)))
		return err
	})
	if err != nil {
		return store.Task{}, wrapErr("create task", err)
	}
	return t, nil
}

// GetTask reads one task.
func (s *Store) GetTask(ctx context.Context, orgID, id string) (store.Task, error) {
	if !validSkillKeys(orgID, id) {
		return store.Task{}, fmt.Errorf("postgres: get task: %w", store.ErrNotFound)
	}
	t, err := scanTask(s.pool.QueryRow(ctx, `SELECT `+taskColumns+` FROM scheduled_tasks WHERE org_id = $1 AND id = $2`, orgID, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Task{}, fmt.Errorf("postgres: get task %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.Task{}, wrapErr("get task", err)
	}
	return t, nil
}

// ListTasks lists the organisation's tasks f keeps.
func (s *Store) ListTasks(ctx context.Context, orgID string, f store.TaskFilter) ([]store.Task, error) {
	out := []store.Task{}
	if !validSkillKeys(orgID, f.UserID, f.ConversationID) {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT `+taskColumns+` FROM scheduled_tasks
		WHERE org_id = $1 AND ($2 = '' OR user_id = $2) AND ($3 = '' OR conversation_id = $3)
		ORDER BY next_run_at IS NULL, next_run_at, id LIMIT $4`, orgID, f.UserID, f.ConversationID, store.MaxTaskList)
	if err != nil {
		return nil, wrapErr("list tasks", err)
	}
	defer rows.Close()
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			return nil, wrapErr("list tasks", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, wrapErr("list tasks", err)
	}
	return out, nil
}

// UpdateTask applies u, the row locked, when the stored version is
// version.
func (s *Store) UpdateTask(ctx context.Context, orgID, id string, version int64, u store.TaskUpdate) (store.Task, error) {
	if !validSkillKeys(orgID, id) {
		return store.Task{}, fmt.Errorf("postgres: update task: %w", store.ErrNotFound)
	}
	var out store.Task
	err := s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		t, err := scanTask(tx.QueryRow(ctx, `SELECT `+taskColumns+` FROM scheduled_tasks WHERE org_id = $1 AND id = $2 FOR UPDATE`, orgID, id))
		if errors.Is(err, pgx.ErrNoRows) {
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
			if err := lockTasks(ctx, tx, orgID); err != nil {
				return err
			}
			perUser, perOrg, err := taskCounts(ctx, tx, orgID, out.UserID)
			if err != nil {
				return err
			}
			if err := store.CheckTaskCounts(perUser, perOrg); err != nil {
				return err
			}
		}
		_, err = tx.Exec(ctx, `UPDATE scheduled_tasks SET title = $3, instruction = $4, conversation_id = $5, channel_id = $6,
				kind = $7, spec = $8, every_seconds = $9, timezone = $10, tools = $11, state = $12, next_run_at = $13,
				version = $14, updated_at = $15, claimable_at = $16
			WHERE org_id = $1 AND id = $2`,
			orgID, id, out.Title, out.Instruction, out.ConversationID, out.ChannelID, out.Kind, out.Spec,
			int64(out.Every/time.Second), out.Timezone, textArray(out.Tools), out.State, optionalTime(out.NextRunAt),
			out.Version, out.UpdatedAt, optionalTime(store.ClaimableAt(out)))
		return err
	})
	if err != nil {
		return store.Task{}, wrapErr("update task", err)
	}
	return out, nil
}

// DeleteTask deletes the task.
func (s *Store) DeleteTask(ctx context.Context, orgID, id string) error {
	if !validSkillKeys(orgID, id) {
		return fmt.Errorf("postgres: delete task: %w", store.ErrNotFound)
	}
	tag, err := s.pool.Exec(ctx, `DELETE FROM scheduled_tasks WHERE org_id = $1 AND id = $2`, orgID, id)
	if err != nil {
		return wrapErr("delete task", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("postgres: delete task %q: %w", id, store.ErrNotFound)
	}
	return nil
}

// ClaimDueTasks leases the earliest due tasks in one statement: the
// rows it picks are locked FOR UPDATE SKIP LOCKED, so a concurrent claim
// from another replica passes over them instead of waiting, and the
// lease it writes keeps every later claim off them while it holds.
func (s *Store) ClaimDueTasks(ctx context.Context, c store.TaskClaim) ([]store.Task, error) {
	if err := store.CheckTaskClaim(c); err != nil {
		return nil, fmt.Errorf("postgres: claim tasks: %w", err)
	}
	var out []store.Task
	err := s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		out = out[:0]
		rows, err := tx.Query(ctx, `UPDATE scheduled_tasks t SET lease_owner = $1, lease_until = $2, claimable_at = $2,
				attempts = t.attempts + 1
			FROM (SELECT org_id, id FROM scheduled_tasks
				WHERE state = 'active' AND claimable_at <= $3
				ORDER BY claimable_at, org_id, id LIMIT $4
				FOR UPDATE SKIP LOCKED) due
			WHERE t.org_id = due.org_id AND t.id = due.id
			RETURNING `+prefixed("t.", taskColumns), c.Owner, c.Now.Add(c.Lease), c.Now, c.Limit)
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
		return nil, wrapErr("claim tasks", err)
	}
	store.SortClaimed(out)
	return out, nil
}

// leased runs write, an UPDATE of the task held by owner ($1 org, $2
// id, $3 owner, the rest args), and answers ErrLeaseLost when it changed
// no row.
func (s *Store) leased(ctx context.Context, op, orgID, id, owner, write string, args ...any) error {
	if !validSkillKeys(orgID, id, owner) {
		return fmt.Errorf("postgres: %s: %w", op, store.ErrLeaseLost)
	}
	tag, err := s.pool.Exec(ctx, write+` WHERE org_id = $1 AND id = $2 AND lease_owner = $3`, append([]any{orgID, id, owner}, args...)...)
	if err != nil {
		return wrapErr(op, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("postgres: %s: %w", op, store.ErrLeaseLost)
	}
	return nil
}

// RenewTaskLease extends owner's lease.
func (s *Store) RenewTaskLease(ctx context.Context, orgID, id, owner string, until time.Time) error {
	return s.leased(ctx, "renew task lease", orgID, id, owner, `UPDATE scheduled_tasks SET lease_until = $4, claimable_at = greatest(next_run_at, $4)`, until)
}

// RetryTask hands the run back until at, the attempt not counted.
func (s *Store) RetryTask(ctx context.Context, orgID, id, owner string, at time.Time) error {
	return s.leased(ctx, "retry task", orgID, id, owner,
		`UPDATE scheduled_tasks SET lease_owner = '', lease_until = $4,
			claimable_at = greatest(next_run_at, $4), attempts = greatest(attempts - 1, 0)`, at)
}

// FinishTaskRun records owner's run and releases the lease.
func (s *Store) FinishTaskRun(ctx context.Context, orgID, id, owner string, f store.TaskFinish) error {
	f, err := store.CheckTaskFinish(f)
	if err != nil {
		return fmt.Errorf("postgres: finish task run: %w", err)
	}
	started := 0
	if f.Started {
		started = 1
	}
	// $4 the due time claimed, $5 the next: a task still due then moves
	// on; one a person gave a new time keeps it.
	return s.leased(ctx, "finish task run", orgID, id, owner, `UPDATE scheduled_tasks SET lease_owner = '', lease_until = NULL,
			attempts = 0, runs = runs + $6, last_due_at = $4, last_run_at = $7, last_status = $8, last_error = $9,
			last_turn_id = $10, last_late_ms = $11,
			next_run_at = CASE WHEN next_run_at = $4 THEN $5::timestamptz ELSE next_run_at END,
			claimable_at = CASE WHEN next_run_at = $4 THEN $5::timestamptz ELSE next_run_at END,
			state = CASE WHEN next_run_at = $4 AND $5::timestamptz IS NULL THEN 'done' ELSE state END`,
		optionalTime(f.DueAt), optionalTime(f.Next), started, optionalTime(f.RanAt), f.Status, f.Error, f.TurnID, f.Late.Milliseconds())
}

// NextTaskDue returns the earliest time an active task may be claimed.
func (s *Store) NextTaskDue(ctx context.Context) (time.Time, bool, error) {
	var next *time.Time
	err := s.pool.QueryRow(ctx, `SELECT min(claimable_at) FROM scheduled_tasks WHERE state = 'active'`).Scan(&next)
	if err != nil {
		return time.Time{}, false, wrapErr("next task due", err)
	}
	return fromOptionalTime(next), next != nil, nil
}

// prefixed is a comma-separated column list with each column qualified
// by prefix ("t.").
func prefixed(prefix, columns string) string {
	parts := strings.Split(columns, ",")
	for i, p := range parts {
		parts[i] = prefix + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}
