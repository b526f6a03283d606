package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/quiverhq/quiver/store"
)

// PutTurn inserts t or replaces the turn with the same ID in t's
// organisation. A turn with that ID in another organisation is a different
// record and is left alone.
func (s *Store) PutTurn(ctx context.Context, t store.Turn) error {
	tools, err := encodeTools(t.Tools)
	if err != nil {
		return fmt.Errorf("sqlite: put turn: %w", err)
	}
	const q = `INSERT INTO turns (org_id, id, user_id, conversation_id, agent,
			timezone, payer, tools, status, started_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (org_id, id) DO UPDATE SET
			user_id = excluded.user_id,
			conversation_id = excluded.conversation_id,
			agent = excluded.agent,
			timezone = excluded.timezone,
			payer = excluded.payer,
			tools = excluded.tools,
			status = excluded.status,
			started_at = excluded.started_at`
	_, err = s.writer.ExecContext(ctx, q, t.OrgID, t.ID, t.UserID, t.ConversationID,
		t.Agent, t.Timezone, t.Payer, tools, t.Status, encodeTime(t.StartedAt))
	if err != nil {
		return fmt.Errorf("sqlite: put turn: %w", err)
	}
	return nil
}

// GetTurn returns the turn with that ID in that organisation, or an error
// wrapping store.ErrNotFound when there is none there.
func (s *Store) GetTurn(ctx context.Context, orgID, id string) (store.Turn, error) {
	const q = `SELECT user_id, conversation_id, agent, timezone, payer, tools,
			status, started_at
		FROM turns WHERE org_id = ? AND id = ?`
	t := store.Turn{ID: id, OrgID: orgID}
	var tools, startedAt string
	err := s.reader.QueryRowContext(ctx, q, orgID, id).Scan(&t.UserID,
		&t.ConversationID, &t.Agent, &t.Timezone, &t.Payer, &tools, &t.Status, &startedAt)
	if errors.Is(err, sql.ErrNoRows) {
		err = store.ErrNotFound
	}
	if err == nil {
		t, err = decodeTurn(t, tools, startedAt)
	}
	if err != nil {
		return store.Turn{}, fmt.Errorf("sqlite: get turn: %w", err)
	}
	return t, nil
}

// decodeTurn fills t's encoded columns.
func decodeTurn(t store.Turn, tools, startedAt string) (store.Turn, error) {
	var err error
	if t.Tools, err = decodeTools(tools); err != nil {
		return store.Turn{}, err
	}
	if t.StartedAt, err = decodeTime(startedAt); err != nil {
		return store.Turn{}, err
	}
	return t, nil
}
