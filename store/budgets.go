package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Who a budget is for (Budget.UserID), besides a person's own user ID.
const (
	// BudgetOrganisation is the budget of the whole organisation: every
	// person's spend counts against it.
	BudgetOrganisation = ""
	// BudgetEachPerson is the default budget of each person in the
	// organisation who has none of their own.
	BudgetEachPerson = "*"
)

// MaxBudget bounds each limit of a budget (in tokens, and in millionths
// of the currency unit: a thousand million units), far above any real
// month and far below where sums could overflow.
const MaxBudget = 1_000_000_000_000_000

// ErrBudgetInvalid reports a budget that breaks a rule of CheckBudget;
// nothing is written.
var ErrBudgetInvalid = errors.New("invalid budget")

// Budget is a monthly limit on what an organisation, or a person in it,
// may spend on model calls: in money (CostMicros, millionths of the
// configured currency unit, from the configured prices) and in tokens
// (input and output of every call, priced or not). Zero in a unit means
// no limit in it; where both are set, both apply.
type Budget struct {
	OrgID string
	// UserID is the person's, or BudgetOrganisation, or
	// BudgetEachPerson.
	UserID     string
	CostMicros int64
	Tokens     int64
	UpdatedAt  time.Time
}

// Unlimited reports whether b limits nothing.
func (b Budget) Unlimited() bool { return b.CostMicros == 0 && b.Tokens == 0 }

// BudgetLimits are the budgets a person's turn is held to.
type BudgetLimits struct {
	// Org is the organisation's budget; unlimited when it has none.
	Org Budget
	// User is the person's own budget, or else the organisation's
	// BudgetEachPerson default (its UserID says which); unlimited when
	// there is neither.
	User Budget
}

// Unlimited reports whether l limits nothing.
func (l BudgetLimits) Unlimited() bool { return l.Org.Unlimited() && l.User.Unlimited() }

// Budgets stores budgets, one per (organisation, UserID). Every method is
// scoped to one organisation.
type Budgets interface {
	// PutBudget validates b with CheckBudget and replaces the budget of
	// its (OrgID, UserID); an unlimited b deletes it (no error when there
	// is none). An invalid b gives an error wrapping ErrBudgetInvalid
	// before anything is written.
	PutBudget(ctx context.Context, b Budget) error
	// ListBudgets returns the organisation's budgets by UserID (the
	// organisation's first, then the default, then people's).
	ListBudgets(ctx context.Context, orgID string) ([]Budget, error)
	// BudgetLimits returns the budgets userID's turns are held to, in one
	// read.
	BudgetLimits(ctx context.Context, orgID, userID string) (BudgetLimits, error)
}

// CheckBudget validates b for PutBudget and returns it with UpdatedAt in
// UTC. It refuses, with an error wrapping ErrBudgetInvalid: an empty
// OrgID; keys that are not ValidBlobKey; a negative limit or one over
// MaxBudget; a zero UpdatedAt.
func CheckBudget(b Budget) (Budget, error) {
	if err := checkBudget(b); err != nil {
		return Budget{}, fmt.Errorf("%w: %w", ErrBudgetInvalid, err)
	}
	b.UpdatedAt = b.UpdatedAt.UTC()
	return b, nil
}

func checkBudget(b Budget) error {
	switch {
	case b.OrgID == "":
		return errors.New("OrgID is empty")
	case !ValidBlobKey(b.OrgID) || !ValidBlobKey(b.UserID):
		return fmt.Errorf("OrgID or UserID is over %d bytes, not UTF-8 or holds a NUL", MaxBlobKeyBytes)
	case b.CostMicros < 0 || b.Tokens < 0:
		return errors.New("a limit is negative")
	case b.CostMicros > MaxBudget || b.Tokens > MaxBudget:
		return fmt.Errorf("a limit is over %d", int64(MaxBudget))
	case b.UpdatedAt.IsZero():
		return errors.New("UpdatedAt is zero")
	}
	return nil
}

// PickBudgetLimits is BudgetLimits of userID from the organisation's
// budgets bs, for backends that read them all at once: the
// organisation's, and the person's own or else the default.
func PickBudgetLimits(orgID, userID string, bs []Budget) BudgetLimits {
	l := BudgetLimits{Org: Budget{OrgID: orgID}, User: Budget{OrgID: orgID, UserID: userID}}
	var def *Budget
	own := false
	for i, b := range bs {
		switch {
		case b.UserID == BudgetOrganisation:
			l.Org = b
		case b.UserID == BudgetEachPerson:
			def = &bs[i]
		case b.UserID == userID:
			l.User, own = b, true
		}
	}
	if !own && def != nil && userID != BudgetEachPerson && userID != BudgetOrganisation {
		l.User = *def
	}
	return l
}
