package sqlite

import (
	"context"
	"fmt"

	"github.com/quiverhq/quiver/store"
)

// PutBudget validates b (store.CheckBudget) and replaces the budget of
// its organisation and UserID in one statement; an unlimited b deletes
// it.
func (s *Store) PutBudget(ctx context.Context, b store.Budget) error {
	b, err := store.CheckBudget(b)
	if err != nil {
		return fmt.Errorf("sqlite: put budget: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sqlite: put budget: %w", err)
	}
	if b.Unlimited() {
		_, err = s.writer.ExecContext(ctx, `DELETE FROM budgets WHERE org_id = ? AND user_id = ?`, b.OrgID, b.UserID)
	} else {
		_, err = s.writer.ExecContext(ctx, `INSERT INTO budgets (org_id, user_id, cost_micros, tokens, updated_at)
			VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (org_id, user_id) DO UPDATE SET cost_micros = excluded.cost_micros,
				tokens = excluded.tokens, updated_at = excluded.updated_at`,
			b.OrgID, b.UserID, b.CostMicros, b.Tokens, encodeTime(b.UpdatedAt))
	}
	if err != nil {
		return fmt.Errorf("sqlite: put budget: %w", err)
	}
	return nil
}

// ListBudgets returns the organisation's budgets by UserID.
func (s *Store) ListBudgets(ctx context.Context, orgID string) ([]store.Budget, error) {
	bs, err := s.budgets(ctx, `SELECT user_id, cost_micros, tokens, updated_at FROM budgets
		WHERE org_id = ? ORDER BY user_id`, orgID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list budgets: %w", err)
	}
	return bs, nil
}

// BudgetLimits returns the organisation's budget and the person's (their
// own, else the default) in one query.
func (s *Store) BudgetLimits(ctx context.Context, orgID, userID string) (store.BudgetLimits, error) {
	bs, err := s.budgets(ctx, `SELECT user_id, cost_micros, tokens, updated_at FROM budgets
		WHERE org_id = ? AND user_id IN ('', '*', ?)`, orgID, userID)
	if err != nil {
		return store.BudgetLimits{}, fmt.Errorf("sqlite: budget limits: %w", err)
	}
	return store.PickBudgetLimits(orgID, userID, bs), nil
}

// budgets runs q, a query of the columns ListBudgets reads with orgID
// its first parameter.
func (s *Store) budgets(ctx context.Context, q string, orgID string, args ...any) ([]store.Budget, error) {
	rows, err := s.reader.QueryContext(ctx, q, append([]any{orgID}, args...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Budget
	for rows.Next() {
		b := store.Budget{OrgID: orgID}
		var updated string
		if err := rows.Scan(&b.UserID, &b.CostMicros, &b.Tokens, &updated); err != nil {
			return nil, err
		}
		if b.UpdatedAt, err = decodeTime(updated); err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, rows.Err()
}
