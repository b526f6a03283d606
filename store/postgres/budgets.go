package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/quiverhq/quiver/store"
)

// PutBudget validates b (store.CheckBudget) and replaces the budget of
// its organisation and UserID in one statement; an unlimited b deletes
// it.
func (s *Store) PutBudget(ctx context.Context, b store.Budget) error {
	b, err := store.CheckBudget(b)
	if err != nil {
		return fmt.Errorf("postgres: put budget: %w", err)
	}
	if b.Unlimited() {
		_, err = s.pool.Exec(ctx, `DELETE FROM budgets WHERE org_id = $1 AND user_id = $2`, b.OrgID, b.UserID)
	} else {
		_, err = s.pool.Exec(ctx, `INSERT INTO budgets (org_id, user_id, cost_micros, tokens, updated_at)
			VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (org_id, user_id) DO UPDATE SET cost_micros = excluded.cost_micros,
				tokens = excluded.tokens, updated_at = excluded.updated_at`,
			b.OrgID, b.UserID, b.CostMicros, b.Tokens, b.UpdatedAt)
	}
	if err != nil {
		return wrapErr("put budget", err)
	}
	return nil
}

// ListBudgets returns the organisation's budgets by UserID.
func (s *Store) ListBudgets(ctx context.Context, orgID string) ([]store.Budget, error) {
	bs, err := s.budgets(ctx, `SELECT user_id, cost_micros, tokens, updated_at FROM budgets
		WHERE org_id = $1 ORDER BY user_id`, orgID)
	if err != nil {
		return nil, wrapErr("list budgets", err)
	}
	return bs, nil
}

// BudgetLimits returns the organisation's budget and the person's (their
// own, else the default) in one query.
func (s *Store) BudgetLimits(ctx context.Context, orgID, userID string) (store.BudgetLimits, error) {
	if !validKeys(orgID, userID) {
		return store.PickBudgetLimits(orgID, userID, nil), nil
	}
	bs, err := s.budgets(ctx, `SELECT user_id, cost_micros, tokens, updated_at FROM budgets
		WHERE org_id = $1 AND user_id IN ('', '*', $2)`, orgID, userID)
	if err != nil {
		return store.BudgetLimits{}, wrapErr("budget limits", err)
	}
	return store.PickBudgetLimits(orgID, userID, bs), nil
}

// budgets runs q, a query of the columns ListBudgets reads with orgID
// its first parameter.
func (s *Store) budgets(ctx context.Context, q string, orgID string, args ...any) ([]store.Budget, error) {
	if !validKeys(orgID) {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, q, append([]any{orgID}, args...)...)
	if err != nil {
		return nil, err
	}
	var out []store.Budget
	b := store.Budget{OrgID: orgID}
	_, err = pgx.ForEachRow(rows, []any{&b.UserID, &b.CostMicros, &b.Tokens, &b.UpdatedAt}, func() error {
		b.UpdatedAt = utc(b.UpdatedAt)
		out = append(out, b)
		return nil
	})
	return out, err
}
