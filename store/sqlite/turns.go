package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/quiverhq/quiver/store"
)

// PutTurn inserts t or replaces the turn with the same ID in t's
// organisation, keeping the parent it was first stored with. A turn with that ID in another organisation is a different
// record and is left alone.
func (s *Store) PutTurn(ctx context.Context, t store.Turn) error {
	if err := putTurn(ctx, s.writer, t); err != nil {
		return fmt.Errorf("sqlite: put turn: %w", err)
	}
	return nil
}

// execer is a *sql.DB or a *sql.Tx.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// putTurn upserts t through db.
func putTurn(ctx context.Context, db execer, t store.Turn) error {
	tools, err := encodeTools(t.Tools)
	if err != nil {
		return err
	}
	excluded, err := encodeExclusions(t.Excluded)
	if err != nil {
		return err
	}
	declared, err := encodeExclusions(t.Declared)
	if err != nil {
		return err
	}
	const q = `INSERT INTO turns (org_id, id, user_id, conversation_id, agent,
			model, timezone, payer, tools, exclusions, declarations, selected, status,
			question, suggested, steps, started_at, ended_at, parent_turn_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULLIF(?, ''))
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
	_, err = db.ExecContext(ctx, q, t.OrgID, t.ID, t.UserID, t.ConversationID,
		t.Agent, t.Model, t.Timezone, t.Payer, tools, excluded, declared, t.Selected, t.Status, t.Question,
		t.Suggested, t.Steps, encodeTime(t.StartedAt), encodeOptionalTime(t.EndedAt), t.ParentID)
	return err
}

// GetTurn returns the turn with that ID in that organisation, or an error
// wrapping store.ErrNotFound when there is none there.
func (s *Store) GetTurn(ctx context.Context, orgID, id string) (store.Turn, error) {
	const q = `SELECT user_id, conversation_id, agent, model, timezone, payer,
			tools, exclusions, declarations, COALESCE(selected, 0), status, question,
			suggested, steps, started_at, ended_at, COALESCE(parent_turn_id, '')
		FROM turns WHERE org_id = ? AND id = ?`
	t := store.Turn{ID: id, OrgID: orgID}
	var tools, startedAt string
	var excluded, declared, endedAt sql.NullString
	err := s.reader.QueryRowContext(ctx, q, orgID, id).Scan(&t.UserID,
		&t.ConversationID, &t.Agent, &t.Model, &t.Timezone, &t.Payer, &tools,
		&excluded, &declared, &t.Selected, &t.Status, &t.Question, &t.Suggested, &t.Steps, &startedAt, &endedAt, &t.ParentID)
	if errors.Is(err, sql.ErrNoRows) {
		err = store.ErrNotFound
	}
	if err == nil {
		t, err = decodeTurn(t, tools, excluded, startedAt, endedAt)
	}
	if err == nil {
		t.Declared, err = decodeExclusions(declared)
	}
	if err != nil {
		return store.Turn{}, fmt.Errorf("sqlite: get turn: %w", err)
	}
	return t, nil
}

// decodeTurn fills t's encoded columns.
func decodeTurn(t store.Turn, tools string, excluded sql.NullString, startedAt string, endedAt sql.NullString) (store.Turn, error) {
	var err error
	if t.Tools, err = decodeTools(tools); err != nil {
		return store.Turn{}, err
	}
	if t.Excluded, err = decodeExclusions(excluded); err != nil {
		return store.Turn{}, err
	}
	if t.StartedAt, err = decodeTime(startedAt); err != nil {
		return store.Turn{}, err
	}
	if t.EndedAt, err = decodeOptionalTime(endedAt); err != nil {
		return store.Turn{}, err
	}
	return t, nil
}

// InterruptTurns marks running turns started before startedBefore that
// are no conversation's run as interrupted, in one statement.
func (s *Store) InterruptTurns(ctx context.Context, startedBefore, at time.Time) (int, error) {
	const q = `UPDATE turns SET status = ?, ended_at = ?
		WHERE status = ? AND started_at < ?
			AND NOT EXISTS (SELECT 1 FROM runs r
				WHERE r.org_id = turns.org_id AND r.turn_id = turns.id)`
	res, err := s.writer.ExecContext(ctx, q, store.TurnInterrupted, encodeTime(at),
		store.TurnRunning, encodeTime(startedBefore))
	if err != nil {
		return 0, fmt.Errorf("sqlite: interrupt turns: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("sqlite: interrupt turns: %w", err)
	}
	return int(n), nil
}
