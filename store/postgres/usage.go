package postgres

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quiverhq/quiver/store"
)

// PutUsage appends u, unless a record of its turn and step is stored
// already: that one is kept (usage_step is the step's key).
func (s *Store) PutUsage(ctx context.Context, u store.Usage) error {
	if _, err := s.pool.Exec(ctx, putUsageSQL(1, unguarded), usageArgs(u)...); err != nil {
		return wrapErr("put usage", err)
	}
	return nil
}

// putUsageSQL is PutUsage's insert of the record in parameters $n to
// $n+12, inserting only when guard (a WHERE clause over parameters after
// them) holds and no record of the turn's step is there: it affects no
// row then. ON CONFLICT takes only that key's conflict, so a CHECK still
// refuses a bad record.
func putUsageSQL(n int, guard string) string {
	ps := make([]string, 13)
	for i := range ps {
		ps[i] = "$" + strconv.Itoa(n+i)
	}
	return `INSERT INTO usage (org_id, conversation_id, turn_id, payer, model,
			step, input_tokens, cached_input_tokens, cache_write_tokens,
			output_tokens, cost_micros, created_at, user_id)
		SELECT ` + strings.Join(ps, ", ") + ` ` + guard + `
		ON CONFLICT (org_id, turn_id, step) DO NOTHING`
}

// usageArgs are putUsageSQL's 13 parameters for u.
func usageArgs(u store.Usage) []any {
	return []any{u.OrgID, u.ConversationID, u.TurnID, u.Payer, u.Model,
		u.Step, u.InputTokens, u.CachedInputTokens, u.CacheWriteTokens, u.OutputTokens,
		u.CostMicros, u.CreatedAt, u.UserID}
}

// ListUsage returns the turn's records in that organisation by Step. A
// turn with none there yields none and no error.
func (s *Store) ListUsage(ctx context.Context, orgID, turnID string) ([]store.Usage, error) {
	const q = `SELECT conversation_id, payer, model, step, input_tokens,
			cached_input_tokens, cache_write_tokens, output_tokens, cost_micros,
			created_at, user_id
		FROM usage WHERE org_id = $1 AND turn_id = $2
		ORDER BY step`
	rows, err := s.pool.Query(ctx, q, orgID, turnID)
	if err != nil {
		return nil, wrapErr("list usage", err)
	}
	var out []store.Usage
	u := store.Usage{OrgID: orgID, TurnID: turnID}
	_, err = pgx.ForEachRow(rows, []any{&u.ConversationID, &u.Payer, &u.Model, &u.Step,
		&u.InputTokens, &u.CachedInputTokens, &u.CacheWriteTokens, &u.OutputTokens,
		&u.CostMicros, &u.CreatedAt, &u.UserID}, func() error {
		u.CreatedAt = utc(u.CreatedAt)
		out = append(out, u)
		return nil
	})
	if err != nil {
		return nil, wrapErr("list usage", err)
	}
	return out, nil
}

// SumUsage totals the payer's records in that organisation with CreatedAt
// in [from, to). No such record, or to not after from, is a zero total. A
// sum beyond int64 is an error (PostgreSQL's sum of bigints is numeric,
// cast back to bigint), not a wrapped-around total.
func (s *Store) SumUsage(ctx context.Context, orgID, payer string, from, to time.Time) (store.UsageTotal, error) {
	const q = `SELECT count(*), COALESCE(SUM(input_tokens), 0)::bigint,
			COALESCE(SUM(cached_input_tokens), 0)::bigint, COALESCE(SUM(cache_write_tokens), 0)::bigint,
			COALESCE(SUM(output_tokens), 0)::bigint, COALESCE(SUM(cost_micros), 0)::bigint
		FROM usage
		WHERE org_id = $1 AND payer = $2 AND created_at >= $3 AND created_at < $4`
	var t store.UsageTotal
	err := s.pool.QueryRow(ctx, q, orgID, payer, from, to).Scan(&t.Calls, &t.InputTokens,
		&t.CachedInputTokens, &t.CacheWriteTokens, &t.OutputTokens, &t.CostMicros)
	if err != nil {
		return store.UsageTotal{}, wrapErr("sum usage", err)
	}
	return t, nil
}

// MonthSpend totals the month's records from usage_months (kept by the
// usage_months_add trigger): one row for a person, one per person for
// the organisation. Sums beyond int64 are an error, as in SumUsage.
func (s *Store) MonthSpend(ctx context.Context, orgID, userID string, month time.Time) (store.UsageTotal, error) {
	q := `SELECT COALESCE(SUM(calls), 0)::bigint, COALESCE(SUM(input_tokens), 0)::bigint,
			COALESCE(SUM(cached_input_tokens), 0)::bigint, COALESCE(SUM(cache_write_tokens), 0)::bigint,
			COALESCE(SUM(output_tokens), 0)::bigint, COALESCE(SUM(cost_micros), 0)::bigint
		FROM usage_months
		WHERE org_id = $1 AND month = $2::date`
	args := []any{orgID, month.UTC().Format("2006-01") + "-01"}
	if userID != "" {
		q += ` AND user_id = $3`
		args = append(args, userID)
	}
	var t store.UsageTotal
	err := s.pool.QueryRow(ctx, q, args...).Scan(&t.Calls, &t.InputTokens,
		&t.CachedInputTokens, &t.CacheWriteTokens, &t.OutputTokens, &t.CostMicros)
	if err != nil {
		return store.UsageTotal{}, wrapErr("month spend", err)
	}
	return t, nil
}
