package httpapi

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/quiverhq/quiver/budget"
	"github.com/quiverhq/quiver/store"
)

// Budgets: what a person, and their organisation, may spend on model
// calls in a calendar month (UTC). Everyone reads their own; admins set
// the organisation's, the default for each person, and a person's own.
// The engine and the loop enforce them (402 budget_exceeded on
// send-message).
func (s *server) budgetRoutes() {
	tags := []string{"budgets"}
	register(s, huma.Operation{
		OperationID: "get-my-budget", Method: http.MethodGet, Path: "/api/budget", Tags: tags,
		Summary: "The caller's spend this month and what is left of their budgets",
		Description: "The month is the calendar month in UTC. you is the caller's own budget, or the organisation's default " +
			"for each person (source says which; none: no limit); organisation is the whole organisation's. A limit of 0 is none " +
			"in that unit. Money is in millionths of the prices' currency unit and counts models with configured prices; tokens " +
			"(input and output) count every call.",
	}, signedIn, s.getMyBudget)
	register(s, huma.Operation{
		OperationID: "list-budgets", Method: http.MethodGet, Path: "/api/budgets", Tags: tags,
		Summary: "The organisation's budgets, with this month's spend (admins)",
		Description: "who is organisation, default (each person without their own) or a user's ID. spent is this month's " +
			"(UTC) spend of that person, or of the whole organisation; none for default.",
	}, adminOnly, s.listBudgets)
	register(s, huma.Operation{
		OperationID: "put-budget", Method: http.MethodPut, Path: "/api/budgets/{who}", Tags: tags,
		Summary: "Set a monthly budget (admins)",
		Description: "who is organisation, default or a user's ID (404 for a user not in the organisation). Both limits 0 " +
			"removes the budget. Takes effect from the next model call of every turn.",
		Errors: []int{http.StatusBadRequest, http.StatusNotFound},
	}, adminOnly, s.putBudget)
	register(s, huma.Operation{
		OperationID: "delete-budget", Method: http.MethodDelete, Path: "/api/budgets/{who}", Tags: tags,
		Summary:       "Remove a monthly budget (admins)",
		Description:   "No error when there is none; 404 for a user not in the organisation.",
		DefaultStatus: http.StatusNoContent,
		Errors:        []int{http.StatusNotFound},
	}, adminOnly, s.deleteBudget)
}

// Who a budget is for, in the API's words (Budget.Who).
const (
	whoOrganisation = "organisation"
	whoDefault      = "default"
)

// Limit is a budget's limits; 0 is none in that unit.
type Limit struct {
	CostMicros int64 `json:"cost_micros,omitempty" minimum:"0" maximum:"1000000000000000" doc:"Millionths of the prices' currency unit; 0: no limit in money."`
	Tokens     int64 `json:"tokens,omitempty" minimum:"0" maximum:"1000000000000000" doc:"Input and output tokens of every call; 0: no limit in tokens."`
}

// Spent is a month's spend.
type Spent struct {
	Calls      int64 `json:"calls"`
	Tokens     int64 `json:"tokens"`
	CostMicros int64 `json:"cost_micros"`
}

func spentView(t store.UsageTotal) Spent {
	return Spent{Calls: t.Calls, Tokens: t.Tokens(), CostMicros: t.CostMicros}
}

// Budget is one stored budget.
type Budget struct {
	Who string `json:"who" doc:"organisation, default, or a user's ID."`
	Limit
	UpdatedAt time.Time `json:"updated_at"`
	Spent     *Spent    `json:"spent,omitempty" doc:"This month's spend it counts; none for default."`
}

// BudgetStatus is one budget's limit and what it counts this month.
type BudgetStatus struct {
	Limit  Limit  `json:"limit"`
	Spent  Spent  `json:"spent"`
	Source string `json:"source,omitempty" enum:"own,default,none" doc:"you only: the caller's own budget, the organisation's default, or none."`
}

type myBudgetOutput struct {
	Body struct {
		MonthStart   time.Time    `json:"month_start"`
		MonthEnd     time.Time    `json:"month_end" doc:"When it resets (exclusive)."`
		You          BudgetStatus `json:"you"`
		Organisation BudgetStatus `json:"organisation"`
		Exceeded     string       `json:"exceeded,omitempty" doc:"Set when a budget is used up: the message a turn would stop with."`
	}
}

func (s *server) getMyBudget(ctx context.Context, _ *struct{}) (*myBudgetOutput, error) {
	a := authFrom(ctx)
	l, err := s.st.BudgetLimits(ctx, a.OrgID, a.UserID)
	if err != nil {
		return nil, err
	}
	st, err := budget.Read(ctx, s.st, a.OrgID, a.UserID, budget.Limits(l), s.now(), true)
	if err != nil {
		return nil, err
	}
	out := &myBudgetOutput{}
	b := &out.Body
	b.MonthStart, b.MonthEnd = st.From, st.To
	source := "own"
	switch {
	case l.User.Unlimited():
		source = "none"
	case l.User.UserID == store.BudgetEachPerson:
		source = "default"
	}
	b.You = BudgetStatus{Limit: limitView(l.User), Spent: spentView(st.User), Source: source}
	b.Organisation = BudgetStatus{Limit: limitView(l.Org), Spent: spentView(st.Org)}
	if e := st.Exceeded(); e != nil {
		b.Exceeded = e.Error()
	}
	return out, nil
}

func limitView(b store.Budget) Limit { return Limit{CostMicros: b.CostMicros, Tokens: b.Tokens} }

type budgetsOutput struct {
	Body struct {
		MonthStart time.Time `json:"month_start"`
		MonthEnd   time.Time `json:"month_end"`
		Budgets    []Budget  `json:"budgets"`
	}
}

func (s *server) listBudgets(ctx context.Context, _ *struct{}) (*budgetsOutput, error) {
	a := authFrom(ctx)
	bs, err := s.st.ListBudgets(ctx, a.OrgID)
	if err != nil {
		return nil, err
	}
	out := &budgetsOutput{}
	out.Body.MonthStart, out.Body.MonthEnd = budget.Month(s.now())
	out.Body.Budgets = make([]Budget, 0, len(bs))
	for _, b := range bs {
		v := Budget{Who: whoOf(b.UserID), Limit: limitView(b), UpdatedAt: b.UpdatedAt}
		if b.UserID != store.BudgetEachPerson {
			t, err := s.st.MonthSpend(ctx, a.OrgID, b.UserID, out.Body.MonthStart)
			if err != nil {
				return nil, err
			}
			sp := spentView(t)
			v.Spent = &sp
		}
		out.Body.Budgets = append(out.Body.Budgets, v)
	}
	return out, nil
}

// whoOf is a stored UserID in the API's words.
func whoOf(userID string) string {
	switch userID {
	case store.BudgetOrganisation:
		return whoOrganisation
	case store.BudgetEachPerson:
		return whoDefault
	}
	return userID
}

// budgetUser is the stored UserID of who: a user's only when they are in
// the organisation (404 otherwise).
func (s *server) budgetUser(ctx context.Context, orgID, who string) (string, error) {
	switch who {
	case whoOrganisation:
		return store.BudgetOrganisation, nil
	case whoDefault:
		return store.BudgetEachPerson, nil
	}
	if _, err := s.st.GetUser(ctx, orgID, who); errors.Is(err, store.ErrNotFound) {
		return "", notFound("no such user in this organisation; who is organisation, default or a user's ID")
	} else if err != nil {
		return "", err
	}
	return who, nil
}

type whoInput struct {
	Who string `path:"who" minLength:"1" maxLength:"200"`
}

type putBudgetInput struct {
	Who  string `path:"who" minLength:"1" maxLength:"200"`
	Body Limit
}

type budgetOutput struct {
	Body Budget
}

func (s *server) putBudget(ctx context.Context, in *putBudgetInput) (*budgetOutput, error) {
	a := authFrom(ctx)
	user, err := s.budgetUser(ctx, a.OrgID, in.Who)
	if err != nil {
		return nil, err
	}
	b := store.Budget{OrgID: a.OrgID, UserID: user, CostMicros: in.Body.CostMicros, Tokens: in.Body.Tokens, UpdatedAt: s.now().UTC()}
	if err := s.st.PutBudget(ctx, b); errors.Is(err, store.ErrBudgetInvalid) {
		return nil, badRequest(err.Error())
	} else if err != nil {
		return nil, err
	}
	return &budgetOutput{Body: Budget{Who: whoOf(user), Limit: in.Body, UpdatedAt: b.UpdatedAt}}, nil
}

func (s *server) deleteBudget(ctx context.Context, in *whoInput) (*struct{}, error) {
	a := authFrom(ctx)
	user, err := s.budgetUser(ctx, a.OrgID, in.Who)
	if err != nil {
		return nil, err
	}
	if err := s.st.PutBudget(ctx, store.Budget{OrgID: a.OrgID, UserID: user, UpdatedAt: s.now().UTC()}); err != nil {
		return nil, err
	}
	return nil, nil
}
