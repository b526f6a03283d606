package postgres

import (
	"context"
	"time"

	"github.com/quiverhq/quiver/store"
)

// PutTurn inserts t or replaces the turn with the same ID in t's
// organisation, in one statement, keeping t.Excluded and t.Declared as
// store.BoundExclusions returns them. A turn with that ID in another
// organisation is a different record and is left alone.
func (s *Store) PutTurn(ctx context.Context, t store.Turn) error {
	args, err := turnArgs(t)
	if err != nil {
		return wrapErr("put turn", err)
	}
	if _, err = s.pool.Exec(ctx, putTurnSQL(unguarded), args...); err != nil {
		return wrapErr("put turn", err)
	}
	return nil
}

// putTurnSQL is PutTurn's upsert, inserting only when guard (a WHERE
// clause over parameters after the turn's 19) holds. A turn stored again
// keeps the parent it was first stored with.
func putTurnSQL(guard string) string {
	return `INSERT INTO turns (org_id, id, user_id, conversation_id, agent,
			model, timezone, payer, tools, exclusions, declarations, selected, status,
			question, suggested, steps, started_at, ended_at, parent_turn_id)
		SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, NULLIF($19, '')
		` + guard + `
		ON CONFLICT (org_id, id) DO UPDATE SET
			user_id = excluded.user_id,
			conversation_id = excluded.conversation_id,
			agent = excluded.agent,
			model = excluded.model,
			timezone = excluded.timezone,
			payer = excluded.payer,
			tools = excluded.tools,
			exclusions = excluded.exclusions,
			declarations = excluded.declarations,
			selected = excluded.selected,
			status = excluded.status,
			question = excluded.question,
			suggested = excluded.suggested,
			steps = excluded.steps,
			started_at = excluded.started_at,
			ended_at = excluded.ended_at`
}

// turnArgs are putTurnSQL's 19 parameters for t.
func turnArgs(t store.Turn) ([]any, error) {
	excluded, err := encodeExclusions(t.Excluded)
	if err != nil {
		return nil, err
	}
	declared, err := encodeExclusions(t.Declared)
	if err != nil {
		return nil, err
	}
	return []any{t.OrgID, t.ID, t.UserID, t.ConversationID, t.Agent,
		t.Model, t.Timezone, t.Payer, textArray(t.Tools), excluded, declared, t.Selected, t.Status,
		t.Question, t.Suggested, t.Steps, t.StartedAt, optionalTime(t.EndedAt), t.ParentID}, nil
}

// GetTurn returns the turn with that ID in that organisation, or an error
// wrapping store.ErrNotFound when there is none there.
func (s *Store) GetTurn(ctx context.Context, orgID, id string) (store.Turn, error) {
	const q = `SELECT user_id, conversation_id, agent, model, timezone, payer,
			tools, exclusions, declarations, selected, status, question,
			suggested, steps, started_at, ended_at, COALESCE(parent_turn_id, '')
		FROM turns WHERE org_id = $1 AND id = $2`
	t := store.Turn{ID: id, OrgID: orgID}
	var excluded, declared []byte
	var endedAt *time.Time
	err := s.pool.QueryRow(ctx, q, orgID, id).Scan(&t.UserID, &t.ConversationID, &t.Agent,
		&t.Model, &t.Timezone, &t.Payer, &t.Tools, &excluded, &declared, &t.Selected, &t.Status,
		&t.Question, &t.Suggested, &t.Steps, &t.StartedAt, &endedAt, &t.ParentID)
	if err != nil {
		return store.Turn{}, wrapErr("get turn", err)
	}
	t.Tools = fromTextArray(t.Tools)
	t.StartedAt, t.EndedAt = utc(t.StartedAt), fromOptionalTime(endedAt)
	if t.Excluded, err = decodeExclusions(excluded); err != nil {
		return store.Turn{}, wrapErr("get turn", err)
	}
	if t.Declared, err = decodeExclusions(declared); err != nil {
		return store.Turn{}, wrapErr("get turn", err)
	}
	return t, nil
}

// InterruptTurns marks running turns, in every organisation, started
// before startedBefore and that are no conversation's run, as
// interrupted, in one statement, and returns how many it marked. It
// locks the turns rows in key order (the subquery's FOR UPDATE), as
// ReapRuns does, and no runs row: a run is read from the statement's
// snapshot, so a turn whose run a reaper is deleting meanwhile still
// has one here and is not waited for. A turn that stops running while
// the statement waits for its row (a replica finishing it) is re-checked
// on the row's new version and left alone.
func (s *Store) InterruptTurns(ctx context.Context, startedBefore, at time.Time) (int, error) {
	// 'running' is spelled out (store.TurnRunning) so that the planner
	// matches the partial index turns_running.
	const q = `UPDATE turns SET status = $1, ended_at = $2
		WHERE (org_id, id) IN (
			SELECT t.org_id, t.id FROM turns t
			WHERE t.status = 'running' AND t.started_at < $3
				AND NOT EXISTS (SELECT 1 FROM runs r
					WHERE r.org_id = t.org_id AND r.turn_id = t.id)
			ORDER BY t.org_id, t.id FOR UPDATE OF t)`
	tag, err := s.pool.Exec(ctx, q, store.TurnInterrupted, at, startedBefore)
	if err != nil {
		return 0, wrapErr("interrupt turns", err)
	}
	return int(tag.RowsAffected()), nil
}
