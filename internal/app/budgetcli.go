package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/quiverhq/quiver/budget"
	"github.com/quiverhq/quiver/store"
)

// BudgetOptions is what "quiver budget show|set|clear" run with.
type BudgetOptions struct {
	MCPAdmin
	// User names the person whose budget it is; Default the default of
	// each person without their own; neither, the organisation's.
	User    string
	Default bool
	// Tokens and Cost are set's limits ("" leaves that unit as it is;
	// "0" removes it); Cost is an amount like "5.50".
	Tokens, Cost string
	// JSON prints show as JSON.
	JSON bool
}

// target is the stored UserID o names.
func (o BudgetOptions) target() (string, error) {
	switch {
	case o.User != "" && o.Default:
		return "", usagef("budget: give --user or --default, not both")
	case o.Default:
		return store.BudgetEachPerson, nil
	}
	return o.User, nil
}

// budgetRow is a budget as show prints it in JSON.
type budgetRow struct {
	Who        string       `json:"who"`
	CostMicros int64        `json:"cost_micros"`
	Tokens     int64        `json:"tokens"`
	Spent      *budgetSpent `json:"spent,omitempty"`
}

// budgetSpent is a month's spend as show prints it in JSON.
type budgetSpent struct {
	Calls      int64 `json:"calls"`
	Tokens     int64 `json:"tokens"`
	CostMicros int64 `json:"cost_micros"`
}

// BudgetShow prints the organisation's budgets with this month's spend.
func BudgetShow(ctx context.Context, o BudgetOptions, env Env) error {
	env.defaults()
	rt, org, err := o.open(ctx, env)
	if err != nil {
		return err
	}
	defer rt.close()
	bs, err := rt.st.ListBudgets(ctx, org)
	if err != nil {
		return err
	}
	from, to := budget.Month(env.Now())
	rows := make([]budgetRow, 0, len(bs))
	for _, b := range bs {
		r := budgetRow{Who: budgetWho(b.UserID), CostMicros: b.CostMicros, Tokens: b.Tokens}
		if b.UserID != store.BudgetEachPerson {
			t, err := rt.st.MonthSpend(ctx, org, b.UserID, from)
			if err != nil {
				return err
			}
			r.Spent = &budgetSpent{t.Calls, t.Tokens(), t.CostMicros}
		}
		rows = append(rows, r)
	}
	if o.JSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	fmt.Fprintf(env.Stdout, "budgets of %s for %s (UTC; resets %s)\n", org, from.Format("January 2006"), to.Format("2 January 2006"))
	if len(rows) == 0 {
		fmt.Fprintln(env.Stdout, "no budgets: nothing limits model spend")
		return nil
	}
	w := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "WHO\tMONEY\tTOKENS\tSPENT")
	for _, r := range rows {
		spent := "-"
		if r.Spent != nil {
			spent = budget.Money(r.Spent.CostMicros) + ", " + budget.Tokens(r.Spent.Tokens)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", r.Who, limitText(r.CostMicros, budget.Money), limitText(r.Tokens, budget.Tokens), spent)
	}
	return w.Flush()
}

// limitText is n written by f, or "no limit" for 0.
func limitText(n int64, f func(int64) string) string {
	if n == 0 {
		return "no limit"
	}
	return f(n)
}

// budgetWho is a stored UserID in show's words.
func budgetWho(userID string) string {
	switch userID {
	case store.BudgetOrganisation:
		return "organisation"
	case store.BudgetEachPerson:
		return "default"
	}
	return userID
}

// BudgetSet sets the limits o gives on the budget it names, keeping a
// unit it does not give; both limits 0 removes the budget.
func BudgetSet(ctx context.Context, o BudgetOptions, env Env) error {
	return budgetWrite(ctx, o, env, false)
}

// BudgetClear removes the budget o names.
func BudgetClear(ctx context.Context, o BudgetOptions, env Env) error {
	return budgetWrite(ctx, o, env, true)
}

func budgetWrite(ctx context.Context, o BudgetOptions, env Env, clear bool) error {
	env.defaults()
	user, err := o.target()
	if err != nil {
		return err
	}
	if !clear && o.Tokens == "" && o.Cost == "" {
		return usagef("budget set: give --tokens N, --cost AMOUNT or both")
	}
	rt, org, err := o.open(ctx, env)
	if err != nil {
		return err
	}
	defer rt.close()
	if user != store.BudgetOrganisation && user != store.BudgetEachPerson {
		if _, err := rt.st.GetUser(ctx, org, user); errors.Is(err, store.ErrNotFound) {
			return usagef("budget: --user %q: no such user in organisation %s", user, org)
		} else if err != nil {
			return err
		}
	}
	b, err := currentBudget(ctx, rt.st, org, user)
	if err != nil {
		return err
	}
	if clear {
		b.CostMicros, b.Tokens = 0, 0
	} else if err := o.apply(&b); err != nil {
		return err
	}
	b.UpdatedAt = env.Now().UTC()
	if err := rt.st.PutBudget(ctx, b); err != nil {
		return err
	}
	if b.Unlimited() {
		fmt.Fprintf(env.Stdout, "budget of %s removed\n", budgetWho(user))
		return nil
	}
	fmt.Fprintf(env.Stdout, "budget of %s: %s, %s a month\n", budgetWho(user), limitText(b.CostMicros, budget.Money), limitText(b.Tokens, budget.Tokens))
	return nil
}

// apply puts o's --tokens and --cost on b, each checked.
func (o BudgetOptions) apply(b *store.Budget) error {
	if o.Cost != "" {
		n, err := budget.ParseMoney(o.Cost)
		if err != nil {
			return usagef("budget set: --cost: %v", err)
		}
		b.CostMicros = n
	}
	if o.Tokens != "" {
		var n int64
		if _, err := fmt.Sscan(o.Tokens, &n); err != nil || n < 0 || n > store.MaxBudget || fmt.Sprint(n) != o.Tokens {
			return usagef("budget set: --tokens %q: give a whole number from 0 to %d", o.Tokens, int64(store.MaxBudget))
		}
		b.Tokens = n
	}
	return nil
}

// currentBudget is the stored budget of user, or an unlimited one.
func currentBudget(ctx context.Context, st store.Budgets, org, user string) (store.Budget, error) {
	bs, err := st.ListBudgets(ctx, org)
	if err != nil {
		return store.Budget{}, err
	}
	for _, b := range bs {
		if b.UserID == user {
			return b, nil
		}
	}
	return store.Budget{OrgID: org, UserID: user}, nil
}
