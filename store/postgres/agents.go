package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/quiverhq/quiver/store"
)

// agentColumns are the columns scanAgent reads, in its order.
const agentColumns = `org_id, name, definition, created_at, updated_at`

// PutAgent inserts a, or replaces the definition of the agent stored under
// a.Name in a.OrgID: then UpdatedAt becomes a.UpdatedAt and the stored
// CreatedAt stays, whatever a.CreatedAt holds. The definition is stored
// byte for byte. An empty name is an error.
//
// One statement, INSERT ... ON CONFLICT DO UPDATE: concurrent puts of one
// name, on any replica, queue on the key, each replacing the last, and
// the first stored CreatedAt is kept by them all.
func (s *Store) PutAgent(ctx context.Context, a store.StoredAgent) error {
	if a.Name == "" {
		return errors.New("postgres: put agent: empty name")
	}
	def := a.Definition
	if def == nil {
		def = []byte{} // pgx sends a nil []byte as NULL
	}
	const q = `INSERT INTO agents (` + agentColumns + `) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (org_id, name) DO UPDATE SET
			definition = excluded.definition,
			updated_at = excluded.updated_at`
	if _, err := s.pool.Exec(ctx, q, a.OrgID, a.Name, def, a.CreatedAt, a.UpdatedAt); err != nil {
		return wrapErr("put agent", err)
	}
	return nil
}

// GetAgent returns the agent with that name in that organisation, or an
// error wrapping store.ErrNotFound when there is none there.
func (s *Store) GetAgent(ctx context.Context, orgID, name string) (store.StoredAgent, error) {
	const q = `SELECT ` + agentColumns + ` FROM agents WHERE org_id = $1 AND name = $2`
	a, err := scanAgent(s.pool.QueryRow(ctx, q, orgID, name))
	if err != nil {
		return store.StoredAgent{}, wrapErr("get agent", err)
	}
	return a, nil
}

// ListAgents returns the organisation's agents ordered by name, byte by
// byte, definitions included; none and no error for an organisation
// without agents.
func (s *Store) ListAgents(ctx context.Context, orgID string) ([]store.StoredAgent, error) {
	const q = `SELECT ` + agentColumns + ` FROM agents WHERE org_id = $1 ORDER BY name`
	rows, err := s.pool.Query(ctx, q, orgID)
	if err != nil {
		return nil, wrapErr("list agents", err)
	}
	as, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.StoredAgent, error) {
		return scanAgent(row)
	})
	if err != nil {
		return nil, wrapErr("list agents", err)
	}
	return as, nil
}

// DeleteAgent removes the agent with that name in that organisation, with
// its knowledge and its skill attachments, in one transaction, or returns an error wrapping
// store.ErrNotFound.
func (s *Store) DeleteAgent(ctx context.Context, orgID, name string) error {
	err := s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM agents WHERE org_id = $1 AND name = $2`, orgID, name)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("agent %q: %w", name, store.ErrNotFound)
		}
		if _, err := deleteAgentSkills(ctx, tx, orgID, name); err != nil {
			return err
		}
		_, err = deleteKnowledge(ctx, tx, `org_id = $1 AND agent = $2`, orgID, name)
		return err
	})
	if err != nil {
		return wrapErr("delete agent", err)
	}
	return nil
}

// scanAgent reads one row of agentColumns, times in UTC. The definition
// is a copy the caller owns (pgx copies a bytea scanned into a []byte).
func scanAgent(row pgx.Row) (store.StoredAgent, error) {
	var a store.StoredAgent
	err := row.Scan(&a.OrgID, &a.Name, &a.Definition, &a.CreatedAt, &a.UpdatedAt)
	if err != nil {
		return store.StoredAgent{}, err
	}
	a.CreatedAt, a.UpdatedAt = utc(a.CreatedAt), utc(a.UpdatedAt)
	return a, nil
}
