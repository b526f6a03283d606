package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/quiverhq/quiver/store"
)

// PutUsage appends u, unless a record of its turn and step is stored
// already: that one is kept (usage_step is the step's key).
func (s *Store) PutUsage(ctx context.Context, u store.Usage) error {
	if _, err := putUsage(ctx, s.writer, u); err != nil {
		return fmt.Errorf("sqlite: put usage: %w", err)
	}
	return nil
}

// putUsage inserts u through db and reports whether it did: false when a
// record of its turn and step is there already. ON CONFLICT, not OR
// IGNORE, so that a CHECK still refuses a bad record.
func putUsage(ctx context.Context, db execer, u store.Usage) (bool, error) {
	const q = `INSERT INTO usage (org_id, conversation_id, turn_id, payer, model,
			step, input_tokens, cached_input_tokens, cache_write_tokens,
			output_tokens, cost_micros, created_at, user_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (org_id, turn_id, step) DO NOTHING`
	res, err := db.ExecContext(ctx, q, u.OrgID, u.ConversationID, u.TurnID,
		u.Payer, u.Model, u.Step, u.InputTokens, u.CachedInputTokens,
		u.CacheWriteTokens, u.OutputTokens, u.CostMicros, encodeTime(u.CreatedAt), u.UserID)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// ListUsage returns the turn's records in that organisation by Step. A
// turn with none there yields none and no error.
func (s *Store) ListUsage(ctx context.Context, orgID, turnID string) ([]store.Usage, error) {
	const q = `SELECT conversation_id, payer, model, step, input_tokens,
			cached_input_tokens, cache_write_tokens, output_tokens, cost_micros,
			created_at, user_id
		FROM usage WHERE org_id = ? AND turn_id = ?
		ORDER BY step`
	rows, err := s.reader.QueryContext(ctx, q, orgID, turnID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list usage: %w", err)
	}
	defer rows.Close()
	us, err := scanUsages(rows, orgID, turnID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list usage: %w", err)
	}
	return us, nil
}

// scanUsages reads every row of a ListUsage query.
func scanUsages(rows *sql.Rows, orgID, turnID string) ([]store.Usage, error) {
	var us []store.Usage
	for rows.Next() {
		u := store.Usage{OrgID: orgID, TurnID: turnID}
		var createdAt string
		err := rows.Scan(&u.ConversationID, &u.Payer, &u.Model, &u.Step,
			&u.InputTokens, &u.CachedInputTokens, &u.CacheWriteTokens,
			&u.OutputTokens, &u.CostMicros, &createdAt, &u.UserID)
		if err != nil {
			return nil, err
		}
		if u.CreatedAt, err = decodeTime(createdAt); err != nil {
			return nil, err
		}
		us = append(us, u)
	}
	return us, rows.Err()
}

// SumUsage totals the payer's records in that organisation with CreatedAt
// in [from, to). No such record, or to not after from, is a zero total.
func (s *Store) SumUsage(ctx context.Context, orgID, payer string, from, to time.Time) (store.UsageTotal, error) {
	// Encoded times sort as the instants do, so the window is a text range
	// the usage_by_payer index answers.
	const q = `SELECT count(*), COALESCE(SUM(input_tokens), 0),
			COALESCE(SUM(cached_input_tokens), 0), COALESCE(SUM(cache_write_tokens), 0),
			COALESCE(SUM(output_tokens), 0), COALESCE(SUM(cost_micros), 0)
		FROM usage
		WHERE org_id = ? AND payer = ? AND created_at >= ? AND created_at < ?`
	var t store.UsageTotal
	err := s.reader.QueryRowContext(ctx, q, orgID, payer, encodeTime(from), encodeTime(to)).Scan(
		&t.Calls, &t.InputTokens, &t.CachedInputTokens, &t.CacheWriteTokens,
		&t.OutputTokens, &t.CostMicros)
	if err != nil {
		return store.UsageTotal{}, fmt.Errorf("sqlite: sum usage: %w", err)
	}
	return t, nil
}

// MonthSpend totals the month's records from usage_months (kept by the
// usage_months_add trigger): one row for a person, one per person for
// the organisation.
func (s *Store) MonthSpend(ctx context.Context, orgID, userID string, month time.Time) (store.UsageTotal, error) {
	q := `SELECT COALESCE(SUM(calls), 0), COALESCE(SUM(input_tokens), 0),
			COALESCE(SUM(cached_input_tokens), 0), COALESCE(SUM(cache_write_tokens), 0),
			COALESCE(SUM(output_tokens), 0), COALESCE(SUM(cost_micros), 0)
		FROM usage_months
		WHERE org_id = ? AND month = ?`
	args := []any{orgID, month.UTC().Format("2006-01")}
	if userID != "" {
		q += ` AND user_id = ?`
		args = append(args, userID)
	}
	var t store.UsageTotal
	err := s.reader.QueryRowContext(ctx, q, args...).Scan(
		&t.Calls, &t.InputTokens, &t.CachedInputTokens, &t.CacheWriteTokens,
		&t.OutputTokens, &t.CostMicros)
	if err != nil {
		return store.UsageTotal{}, fmt.Errorf("sqlite: month spend: %w", err)
	}
	return t, nil
}
