package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/quiverhq/quiver/store"
)

// EraseUser deletes the user and everything of theirs (the tables
// store.UserErasure lists) in one write transaction, which holds
// SQLite's write lock from BEGIN: no turn can claim a run of theirs, and
// no admin change the admins, between the checks and the deletes.
func (s *Store) EraseUser(ctx context.Context, orgID, userID string) error {
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		if err := checkErase(ctx, tx, orgID, userID); err != nil {
			return err
		}
		if err := eraseConversations(ctx, tx, orgID, userID); err != nil {
			return err
		}
		if _, err := deleteMemoryRows(ctx, tx, `org_id = ? AND owner_id = ?`, orgID, userID); err != nil {
			return fmt.Errorf("memories: %w", err)
		}
		if err := detachUsage(ctx, tx, orgID, userID); err != nil {
			return err
		}
		return eraseUserRows(ctx, tx, orgID, userID)
	})
	if err != nil {
		return fmt.Errorf("sqlite: erase user: %w", err)
	}
	return nil
}

// checkErase refuses an unknown user, the organisation's last enabled
// admin and a user with a run held, in tx.
func checkErase(ctx context.Context, tx *sql.Tx, orgID, userID string) error {
	st, err := readAdminState(ctx, tx, orgID, userID)
	if err != nil {
		return fmt.Errorf("user %q: %w", userID, err)
	}
	if st.lastAdmin() {
		return fmt.Errorf("erase %q: %w", userID, store.ErrLastAdmin)
	}
	const q = `SELECT count(*) FROM runs WHERE org_id = ?1 AND (user_id = ?2
		OR conversation_id IN (SELECT id FROM conversations WHERE org_id = ?1 AND user_id = ?2))`
	var running int
	if err := tx.QueryRowContext(ctx, q, orgID, userID).Scan(&running); err != nil {
		return err
	}
	if running > 0 {
		return fmt.Errorf("erase %q: %w", userID, store.ErrTurnRunning)
	}
	return nil
}

// eraseConversations deletes each of the user's conversations as
// DeleteConversation does, then the turns (with their events) and
// results of theirs left outside them.
func eraseConversations(ctx context.Context, tx *sql.Tx, orgID, userID string) error {
	rows, err := tx.QueryContext(ctx, `SELECT id FROM conversations WHERE org_id = ? AND user_id = ?`, orgID, userID)
	if err != nil {
		return err
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, id := range ids {
		if err := deleteConversationRows(ctx, tx, orgID, id); err != nil {
			return fmt.Errorf("conversation %q: %w", id, err)
		}
	}
	for _, q := range []string{
		`DELETE FROM turn_events WHERE org_id = ?1 AND turn_id IN (SELECT id FROM turns WHERE org_id = ?1 AND user_id = ?2)`,
		`DELETE FROM turns WHERE org_id = ?1 AND user_id = ?2`,
		`DELETE FROM results WHERE org_id = ?1 AND user_id = ?2`,
	} {
		if _, err := tx.ExecContext(ctx, q, orgID, userID); err != nil {
			return err
		}
	}
	return nil
}

// usageMonthColumns are usage_months' sums.
var usageMonthColumns = []string{"calls", "input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens", "cost_micros"}

// detachUsage keeps the user's usage records for the organisation: their
// user_id (and a payer that was theirs) becomes "", and their monthly
// totals are added to the organisation's "" row of each month,
// saturating as the usage_months_add trigger does.
func detachUsage(ctx context.Context, tx *sql.Tx, orgID, userID string) error {
	cols := strings.Join(usageMonthColumns, ", ")
	sums := make([]string, len(usageMonthColumns))
	for i, c := range usageMonthColumns {
		sums[i] = fmt.Sprintf("%[1]s = CASE WHEN %[1]s > 9223372036854775807 - excluded.%[1]s THEN 9223372036854775807 ELSE %[1]s + excluded.%[1]s END", c)
	}
	move := `INSERT INTO usage_months (org_id, user_id, month, ` + cols + `)
		SELECT org_id, '', month, ` + cols + ` FROM usage_months WHERE org_id = ?1 AND user_id = ?2
		ON CONFLICT (org_id, month, user_id) DO UPDATE SET ` + strings.Join(sums, ", ")
	for _, q := range []string{
		move,
		`DELETE FROM usage_months WHERE org_id = ?1 AND user_id = ?2`,
		`UPDATE usage SET user_id = CASE WHEN user_id = ?2 THEN '' ELSE user_id END,
			payer = CASE WHEN payer = ?2 THEN '' ELSE payer END
			WHERE org_id = ?1 AND (user_id = ?2 OR payer = ?2)`,
	} {
		if _, err := tx.ExecContext(ctx, q, orgID, userID); err != nil {
			return fmt.Errorf("usage: %w", err)
		}
	}
	return nil
}

// eraseUserRows deletes the rows keyed by the user: their memories'
// generation, blobs, credentials, Deliberate Tool Mode, own budget and
// the user.
func eraseUserRows(ctx context.Context, tx *sql.Tx, orgID, userID string) error {
	for _, q := range []string{
		`DELETE FROM memory_generations WHERE org_id = ?1 AND owner_id = ?2`,
		`DELETE FROM blobs WHERE org_id = ?1 AND owner_id = ?2`,
		`DELETE FROM credentials WHERE org_id = ?1 AND user_id = ?2`,
		`DELETE FROM intent_user_modes WHERE org_id = ?1 AND user_id = ?2`,
		`DELETE FROM scheduled_tasks WHERE org_id = ?1 AND user_id = ?2`,
		`DELETE FROM blocks WHERE org_id = ?1 AND user_id = ?2`,
		// A user whose ID is the each-person default's keeps it.
		`DELETE FROM budgets WHERE org_id = ?1 AND user_id = ?2 AND user_id <> '` + store.BudgetEachPerson + `'`,
		`DELETE FROM users WHERE org_id = ?1 AND id = ?2`,
	} {
		if _, err := tx.ExecContext(ctx, q, orgID, userID); err != nil {
			return err
		}
	}
	return nil
}
