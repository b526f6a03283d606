package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/quiverhq/quiver/store"
)

// eraseReplica marks the placeholder runs EraseUser holds while it
// deletes.
const eraseReplica = "erasing"

// EraseUser deletes the user and everything of theirs (the tables
// store.UserErasure lists) in one transaction, at READ COMMITTED with
// locks: the user's row first (a concurrent erase, disable or edit of
// them waits), then for an enabled admin the organisation's admins
// (checkNotLastAdmin), then the run key of each of their conversations,
// held by a placeholder run as DeleteConversation holds one: a run
// already there is ErrTurnRunning, and a claim made meanwhile waits for
// the commit.
func (s *Store) EraseUser(ctx context.Context, orgID, userID string) error {
	err := s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		ids, err := holdErase(ctx, tx, orgID, userID)
		if err != nil {
			return err
		}
		for _, id := range ids {
			if err := deleteConversationRows(ctx, tx, orgID, id); err != nil {
				return fmt.Errorf("conversation %q: %w", id, err)
			}
		}
		return eraseUserRows(ctx, tx, orgID, userID)
	})
	if err != nil {
		return wrapErr("erase user", err)
	}
	return nil
}

// holdErase locks the user, refuses the organisation's last enabled
// admin and a user with a run held, and holds the run key of each of
// their conversations, whose IDs it returns.
func holdErase(ctx context.Context, tx pgx.Tx, orgID, userID string) ([]string, error) {
	var admin bool
	const lock = `SELECT role = $3 AND disabled_at IS NULL FROM users WHERE org_id = $1 AND id = $2 FOR UPDATE`
	err := tx.QueryRow(ctx, lock, orgID, userID, store.RoleAdmin).Scan(&admin)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("user %q: %w", userID, store.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	if admin {
		if err := checkNotLastAdmin(ctx, tx, orgID, userID); err != nil {
			return nil, fmt.Errorf("erase %q: %w", userID, err)
		}
	}
	rows, err := tx.Query(ctx, `SELECT id FROM conversations WHERE org_id = $1 AND user_id = $2 FOR UPDATE`, orgID, userID)
	if err != nil {
		return nil, err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	const hold = `INSERT INTO runs (` + runColumns + `)
		SELECT $1, id, '', $2, $4, now(), now() + interval '1 minute', false FROM unnest($3::text[]) AS id
		ON CONFLICT (org_id, conversation_id) DO NOTHING`
	tag, err := tx.Exec(ctx, hold, orgID, userID, ids, eraseReplica)
	if err != nil {
		return nil, err
	}
	var others int
	const running = `SELECT count(*) FROM runs WHERE org_id = $1 AND user_id = $2 AND replica <> $3`
	if err := tx.QueryRow(ctx, running, orgID, userID, eraseReplica).Scan(&others); err != nil {
		return nil, err
	}
	if tag.RowsAffected() != int64(len(ids)) || others > 0 {
		return nil, fmt.Errorf("erase %q: %w", userID, store.ErrTurnRunning)
	}
	return ids, nil
}

// eraseUserRows deletes, in one batch, the user's turns and results left
// outside their conversations, their personal memories (full-text rows
// and generation with them), blobs, credentials, Deliberate Tool Mode
// and own budget, detaches their usage (detachUsage), releases the
// placeholder runs and deletes the user.
func eraseUserRows(ctx context.Context, tx pgx.Tx, orgID, userID string) error {
	b := &pgx.Batch{}
	for _, q := range []string{
		`DELETE FROM turn_events WHERE org_id = $1 AND turn_id IN (SELECT id FROM turns WHERE org_id = $1 AND user_id = $2)`,
		`DELETE FROM turns WHERE org_id = $1 AND user_id = $2`,
		`DELETE FROM results WHERE org_id = $1 AND user_id = $2`,
		`WITH gone AS (DELETE FROM memories WHERE org_id = $1 AND owner_id = $2 RETURNING org_id, id)
			DELETE FROM memory_search t USING gone WHERE t.org_id = gone.org_id AND t.memory_id = gone.id`,
		`DELETE FROM memory_generations WHERE org_id = $1 AND owner_id = $2`,
		`DELETE FROM blobs WHERE org_id = $1 AND owner_id = $2`,
		`DELETE FROM credentials WHERE org_id = $1 AND user_id = $2`,
		`DELETE FROM intent_user_modes WHERE org_id = $1 AND user_id = $2`,
		`DELETE FROM scheduled_tasks WHERE org_id = $1 AND user_id = $2`,
		`DELETE FROM blocks WHERE org_id = $1 AND user_id = $2`,
		// A user whose ID is the each-person default's keeps it.
		`DELETE FROM budgets WHERE org_id = $1 AND user_id = $2 AND user_id <> '` + store.BudgetEachPerson + `'`,
	} {
		b.Queue(q, orgID, userID)
	}
	detachUsage(b, orgID, userID)
	b.Queue(`DELETE FROM runs WHERE org_id = $1 AND user_id = $2 AND replica = $3`, orgID, userID, eraseReplica)
	b.Queue(`DELETE FROM users WHERE org_id = $1 AND id = $2`, orgID, userID)
	return tx.SendBatch(ctx, b).Close()
}

// usageMonthColumns are usage_months' sums.
var usageMonthColumns = []string{"calls", "input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens", "cost_micros"}

// detachUsage queues what keeps the user's usage records for the
// organisation: their monthly totals added to the organisation's "" row
// of each month (saturating as usage_months_add does), their rows of
// usage_months deleted, and user_id (and a payer that was theirs) set to
// "" on their records.
func detachUsage(b *pgx.Batch, orgID, userID string) {
	cols := strings.Join(usageMonthColumns, ", ")
	sums := make([]string, len(usageMonthColumns))
	for i, c := range usageMonthColumns {
		sums[i] = fmt.Sprintf("%[1]s = CASE WHEN usage_months.%[1]s > 9223372036854775807 - excluded.%[1]s "+
			"THEN 9223372036854775807 ELSE usage_months.%[1]s + excluded.%[1]s END", c)
	}
	// One statement: the rows deleted are the rows added, so an insert
	// of theirs racing the erase cannot slip between a copy and a delete.
	b.Queue(`WITH gone AS (DELETE FROM usage_months WHERE org_id = $1 AND user_id = $2
			RETURNING org_id, month, `+cols+`)
		INSERT INTO usage_months (org_id, user_id, month, `+cols+`)
		SELECT org_id, '', month, `+cols+` FROM gone
		ON CONFLICT (org_id, month, user_id) DO UPDATE SET `+strings.Join(sums, ", "), orgID, userID)
	b.Queue(`UPDATE usage SET user_id = CASE WHEN user_id = $2 THEN '' ELSE user_id END,
			payer = CASE WHEN payer = $2 THEN '' ELSE payer END
		WHERE org_id = $1 AND (user_id = $2 OR payer = $2)`, orgID, userID)
}
