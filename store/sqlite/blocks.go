package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/quiverhq/quiver/store"
)

// BlockUser stores the block under the write lock, the agent's count
// checked first.
func (s *Store) BlockUser(ctx context.Context, b store.Block) error {
	b, err := store.CheckBlock(b)
	if err != nil {
		return fmt.Errorf("sqlite: block user: %w", err)
	}
	err = s.inWriteTx(ctx, func(tx *sql.Tx) error {
		var n, mine int64
		if err := tx.QueryRowContext(ctx, `SELECT count(*), count(*) FILTER (WHERE user_id = ?3) FROM blocks WHERE org_id = ?1 AND agent = ?2`,
			b.OrgID, b.Agent, b.UserID).Scan(&n, &mine); err != nil {
			return err
		}
		if mine == 0 && n >= store.MaxBlocksPerAgent {
			return fmt.Errorf("%w: the agent has %d people blocked", store.ErrBlockQuota, n)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO blocks (org_id, agent, user_id, reason, blocked_by, created_at) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (org_id, agent, user_id) DO UPDATE SET reason = excluded.reason, blocked_by = excluded.blocked_by`,
			b.OrgID, b.Agent, b.UserID, b.Reason, b.By, encodeTime(b.CreatedAt))
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: block user: %w", err)
	}
	return nil
}

// UnblockUser deletes the block.
func (s *Store) UnblockUser(ctx context.Context, orgID, agent, userID string) error {
	if !validKeys(orgID, agent, userID) {
		return nil
	}
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM blocks WHERE org_id = ? AND agent = ? AND user_id = ?`, orgID, agent, userID)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: unblock user: %w", err)
	}
	return nil
}

// UserBlocked reads whether the block exists.
func (s *Store) UserBlocked(ctx context.Context, orgID, agent, userID string) (bool, error) {
	if !validKeys(orgID, agent, userID) {
		return false, nil
	}
	var n int
	if err := s.reader.QueryRowContext(ctx, `SELECT count(*) FROM blocks WHERE org_id = ? AND agent = ? AND user_id = ?`,
		orgID, agent, userID).Scan(&n); err != nil {
		return false, fmt.Errorf("sqlite: user blocked: %w", err)
	}
	return n > 0, nil
}

// ListBlocks lists the agent's blocks, newest first.
func (s *Store) ListBlocks(ctx context.Context, orgID, agent string) ([]store.Block, error) {
	out := []store.Block{}
	if !validKeys(orgID, agent) {
		return out, nil
	}
	rows, err := s.reader.QueryContext(ctx, `SELECT user_id, reason, blocked_by, created_at FROM blocks
		WHERE org_id = ? AND agent = ? ORDER BY created_at DESC, user_id`, orgID, agent)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list blocks: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		b := store.Block{OrgID: orgID, Agent: agent}
		var at string
		if err := rows.Scan(&b.UserID, &b.Reason, &b.By, &at); err != nil {
			return nil, fmt.Errorf("sqlite: list blocks: %w", err)
		}
		if b.CreatedAt, err = decodeTime(at); err != nil {
			return nil, fmt.Errorf("sqlite: list blocks: %w", err)
		}
		out = append(out, b)
	}
	return out, rows.Err()
}
