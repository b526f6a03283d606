package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/quiverhq/quiver/store"
)

// blockLockClass is the first key of the advisory lock BlockUser takes
// (the ASCII of "blok"); the second a hash of the organisation and
// agent. Under it the agent's count cannot change before the insert.
const blockLockClass int32 = 0x626c6f6b

// BlockUser stores the block under the agent's block lock.
func (s *Store) BlockUser(ctx context.Context, b store.Block) error {
	b, err := store.CheckBlock(b)
	if err != nil {
		return fmt.Errorf("postgres: block user: %w", err)
	}
	err = s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1::integer, hashtext($2::text))`, blockLockClass, b.OrgID+"/"+b.Agent); err != nil {
			return err
		}
		var n, mine int64
		if err := tx.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE user_id = $3) FROM blocks WHERE org_id = $1 AND agent = $2`,
			b.OrgID, b.Agent, b.UserID).Scan(&n, &mine); err != nil {
			return err
		}
		if mine == 0 && n >= store.MaxBlocksPerAgent {
			return fmt.Errorf("%w: the agent has %d people blocked", store.ErrBlockQuota, n)
		}
		_, err := tx.Exec(ctx, `INSERT INTO blocks (org_id, agent, user_id, reason, blocked_by, created_at) VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (org_id, agent, user_id) DO UPDATE SET reason = excluded.reason, blocked_by = excluded.blocked_by`,
			b.OrgID, b.Agent, b.UserID, b.Reason, b.By, b.CreatedAt)
		return err
	})
	if err != nil {
		return wrapErr("block user", err)
	}
	return nil
}

// UnblockUser deletes the block.
func (s *Store) UnblockUser(ctx context.Context, orgID, agent, userID string) error {
	if !validSkillKeys(orgID, agent, userID) {
		return nil
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM blocks WHERE org_id = $1 AND agent = $2 AND user_id = $3`, orgID, agent, userID); err != nil {
		return wrapErr("unblock user", err)
	}
	return nil
}

// UserBlocked reads whether the block exists.
func (s *Store) UserBlocked(ctx context.Context, orgID, agent, userID string) (bool, error) {
	if !validSkillKeys(orgID, agent, userID) {
		return false, nil
	}
	var found bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM blocks WHERE org_id = $1 AND agent = $2 AND user_id = $3)`,
		orgID, agent, userID).Scan(&found); err != nil {
		return false, wrapErr("user blocked", err)
	}
	return found, nil
}

// ListBlocks lists the agent's blocks, newest first.
func (s *Store) ListBlocks(ctx context.Context, orgID, agent string) ([]store.Block, error) {
	out := []store.Block{}
	if !validSkillKeys(orgID, agent) {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT user_id, reason, blocked_by, created_at FROM blocks
		WHERE org_id = $1 AND agent = $2 ORDER BY created_at DESC, user_id`, orgID, agent)
	if err != nil {
		return nil, wrapErr("list blocks", err)
	}
	defer rows.Close()
	for rows.Next() {
		b := store.Block{OrgID: orgID, Agent: agent}
		if err := rows.Scan(&b.UserID, &b.Reason, &b.By, &b.CreatedAt); err != nil {
			return nil, wrapErr("list blocks", err)
		}
		b.CreatedAt = utc(b.CreatedAt)
		out = append(out, b)
	}
	return out, rows.Err()
}
