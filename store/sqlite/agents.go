package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/quiverhq/quiver/store"
)

// agentColumns are the columns scanAgent reads, in its order.
const agentColumns = `org_id, name, definition, created_at, updated_at`

// PutAgent inserts a, or replaces the definition of the agent stored under
// a.Name in a.OrgID: then UpdatedAt becomes a.UpdatedAt and the stored
// CreatedAt stays, whatever a.CreatedAt holds. The definition is stored
// byte for byte. An empty name is an error.
func (s *Store) PutAgent(ctx context.Context, a store.StoredAgent) error {
	if a.Name == "" {
		return errors.New("sqlite: put agent: empty name")
	}
	def := a.Definition
	if def == nil {
		def = []byte{} // a nil []byte is NULL to the driver
	}
	const q = `INSERT INTO agents (` + agentColumns + `) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (org_id, name) DO UPDATE SET
			definition = excluded.definition,
			updated_at = excluded.updated_at`
	_, err := s.writer.ExecContext(ctx, q, a.OrgID, a.Name, def,
		encodeTime(a.CreatedAt), encodeTime(a.UpdatedAt))
	if err != nil {
		return fmt.Errorf("sqlite: put agent: %w", err)
	}
	return nil
}

// GetAgent returns the agent with that name in that organisation, or an
// error wrapping store.ErrNotFound when there is none there.
func (s *Store) GetAgent(ctx context.Context, orgID, name string) (store.StoredAgent, error) {
	const q = `SELECT ` + agentColumns + ` FROM agents WHERE org_id = ? AND name = ?`
	a, err := scanAgent(s.reader.QueryRowContext(ctx, q, orgID, name))
	if errors.Is(err, sql.ErrNoRows) {
		err = store.ErrNotFound
	}
	if err != nil {
		return store.StoredAgent{}, fmt.Errorf("sqlite: get agent: %w", err)
	}
	return a, nil
}

// ListAgents returns the organisation's agents ordered by name, byte by
// byte, definitions included; none and no error for an organisation
// without agents.
func (s *Store) ListAgents(ctx context.Context, orgID string) ([]store.StoredAgent, error) {
	as, err := s.listAgents(ctx, orgID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list agents: %w", err)
	}
	return as, nil
}

// listAgents reads the organisation's agents on the readers.
func (s *Store) listAgents(ctx context.Context, orgID string) ([]store.StoredAgent, error) {
	const q = `SELECT ` + agentColumns + ` FROM agents WHERE org_id = ? ORDER BY name`
	rows, err := s.reader.QueryContext(ctx, q, orgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var as []store.StoredAgent
	for rows.Next() {
		a, err := scanAgent(rows)
		if err != nil {
			return nil, err
		}
		as = append(as, a)
	}
	return as, rows.Err()
}

// DeleteAgent removes the agent with that name in that organisation, with
// its knowledge and its skill attachments, in one write transaction, or returns an error wrapping
// store.ErrNotFound.
func (s *Store) DeleteAgent(ctx context.Context, orgID, name string) error {
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM agents WHERE org_id = ? AND name = ?`, orgID, name)
		if err != nil {
			return err
		}
		if err := changedOr(res, store.ErrNotFound); err != nil {
			return err
		}
		if _, err := deleteAgentSkills(ctx, tx, orgID, name); err != nil {
			return err
		}
		_, err = deleteKnowledge(ctx, tx, `org_id = ? AND agent = ?`, orgID, name)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: delete agent: %w", err)
	}
	return nil
}

// scanAgent reads one row of agentColumns. The definition is a copy the
// caller owns.
func scanAgent(row scanner) (store.StoredAgent, error) {
	var a store.StoredAgent
	var createdAt, updatedAt string
	err := row.Scan(&a.OrgID, &a.Name, &a.Definition, &createdAt, &updatedAt)
	if err != nil {
		return store.StoredAgent{}, err
	}
	if a.CreatedAt, err = decodeTime(createdAt); err != nil {
		return store.StoredAgent{}, err
	}
	if a.UpdatedAt, err = decodeTime(updatedAt); err != nil {
		return store.StoredAgent{}, err
	}
	return a, nil
}
