// Package budget holds turns to their monthly budgets: what a person, and
// their organisation, may spend on model calls in the current calendar
// month in UTC, in money where prices are configured and in tokens
// everywhere (store.Budget). The engine reads the limits once per turn
// into its facts (turn.Budget) and refuses a turn already over them; the
// agent loop checks the committed spend again before every model call, so
// concurrent turns overshoot by at most the one call each has in flight.
package budget

import (
	"context"
	"fmt"
	"time"

	"github.com/quiverhq/quiver/internal/clock"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/turn"
)

// Month is the UTC calendar month holding t, as [from, to).
func Month(t time.Time) (from, to time.Time) {
	t = t.UTC()
	from = time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	return from, from.AddDate(0, 1, 0)
}

// Store is what budgets are read from.
type Store interface {
	BudgetLimits(ctx context.Context, orgID, userID string) (store.BudgetLimits, error)
	MonthSpend(ctx context.Context, orgID, userID string, month time.Time) (store.UsageTotal, error)
}

// Limits is the turn's budgets from the stored ones.
func Limits(l store.BudgetLimits) turn.Budget {
	return turn.Budget{
		User: turn.Limit{CostMicros: l.User.CostMicros, Tokens: l.User.Tokens},
		Org:  turn.Limit{CostMicros: l.Org.CostMicros, Tokens: l.Org.Tokens},
	}
}

// Status is a person's spend this month against their budgets.
type Status struct {
	// From and To bound the month, [From, To), in UTC.
	From, To time.Time
	Limits   turn.Budget
	// User and Org are what the person and the whole organisation spent
	// in the month.
	User, Org store.UsageTotal
}

// Read is the person's status at now under limits. It reads a spend only
// when a limit needs it, unless all is set (check_budget shows both).
func Read(ctx context.Context, st Store, orgID, userID string, limits turn.Budget, now time.Time, all bool) (Status, error) {
	s := Status{Limits: limits}
	s.From, s.To = Month(now)
	var err error
	if all || !limits.User.Unlimited() {
		if s.User, err = st.MonthSpend(ctx, orgID, userID, s.From); err != nil {
			return Status{}, fmt.Errorf("budget: read spend: %w", err)
		}
	}
	if all || !limits.Org.Unlimited() {
		if s.Org, err = st.MonthSpend(ctx, orgID, "", s.From); err != nil {
			return Status{}, fmt.Errorf("budget: read spend: %w", err)
		}
	}
	return s, nil
}

// Exceeded is the first budget s has used up (the person's before the
// organisation's, money before tokens), or nil when none is.
func (s Status) Exceeded() *ExceededError {
	for _, c := range []struct {
		org   bool
		limit turn.Limit
		spent store.UsageTotal
	}{{false, s.Limits.User, s.User}, {true, s.Limits.Org, s.Org}} {
		if c.limit.CostMicros > 0 && c.spent.CostMicros >= c.limit.CostMicros {
			return &ExceededError{Org: c.org, Money: true, Spent: c.spent.CostMicros, Limit: c.limit.CostMicros, Resets: s.To}
		}
		if c.limit.Tokens > 0 && c.spent.Tokens() >= c.limit.Tokens {
			return &ExceededError{Org: c.org, Spent: c.spent.Tokens(), Limit: c.limit.Tokens, Resets: s.To}
		}
	}
	return nil
}

// ExceededError is a budget used up: no model call is made past it. Its
// message is written for the person.
type ExceededError struct {
	// Org is true for the organisation's budget, false for the person's.
	Org bool
	// Money is true for a budget in money (Spent and Limit in millionths
	// of the currency unit), false for one in tokens.
	Money        bool
	Spent, Limit int64
	// Resets is when the month ends (UTC).
	Resets time.Time
}

func (e *ExceededError) Error() string {
	whose := "your"
	if e.Org {
		whose = "your organisation's"
	}
	return fmt.Sprintf("This month's budget is used up: %s spend is %s of %s. It resets on %s (UTC); an administrator can raise it.",
		whose, e.amount(e.Spent), e.amount(e.Limit), e.Resets.Format("2 January 2006"))
}

func (e *ExceededError) amount(n int64) string {
	if e.Money {
		return Money(n)
	}
	return Tokens(n)
}

// Guard checks a turn's budgets before each model call.
type Guard struct {
	Store Store
	// Now is the clock; nil means clock.Now.
	Now func() time.Time
}

// Check returns an *ExceededError when the turn's person or organisation
// has used up a budget of f.Budget this month, counting the usage
// committed so far; nil when none is (and without reading anything for
// a turn with no budget).
func (g Guard) Check(ctx context.Context, f turn.Facts) error {
	if f.Budget.Unlimited() || g.Store == nil {
		return nil
	}
	now := clock.Now
	if g.Now != nil {
		now = g.Now
	}
	s, err := Read(ctx, g.Store, f.Place.OrgID, f.Caller.UserID, f.Budget, now(), false)
	if err != nil {
		return err
	}
	if e := s.Exceeded(); e != nil {
		return e
	}
	return nil
}
