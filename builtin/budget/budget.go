// Package budget provides check_budget: this month's spend, and what is
// left of the budgets, for the turn's person and their organisation,
// from the usage the loop records (package budget at the root holds the
// rules; this is the tool over them). Declared under its own switch,
// "budget": what people spend is not every agent's business.
package budget

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/quiverhq/quiver/budget"
	"github.com/quiverhq/quiver/internal/clock"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// Switch is the switch that declares check_budget, and its family.
const Switch = "budget"

//go:embed check_budget.md
var description string

// Input is check_budget's arguments: none. Whose budget it reads comes
// from the turn.
type Input struct{}

// Tool returns check_budget over st, with now as its clock (nil means
// clock.Now). A nil st keeps the declaration; its calls fail with an
// infrastructure error wrapping store.ErrNoStore.
func Tool(st budget.Store, now func() time.Time) *tool.Tool {
	if now == nil {
		now = clock.Now
	}
	return tool.New(tool.Spec{
		Name: "check_budget", Family: Switch, Macros: []string{"budget_tool"},
		Description: strings.TrimSpace(description), Access: tool.Read, Requires: Requires,
	}, func(ctx context.Context, sc tool.Scope, _ Input) (string, error) {
		if st == nil {
			return "", tool.Infra(fmt.Errorf("check_budget: %w", store.ErrNoStore))
		}
		return check(ctx, st, sc, now())
	})
}

// Requires is check_budget's condition: the budget switch on.
func Requires(s turn.Selection) string {
	if !s.Switches[Switch] {
		return "budget switch off"
	}
	return ""
}

func check(ctx context.Context, st budget.Store, sc tool.Scope, now time.Time) (string, error) {
	if sc.OrgID == "" || sc.UserID == "" {
		return "", errors.New("this turn has no person to read a budget for")
	}
	l, err := st.BudgetLimits(ctx, sc.OrgID, sc.UserID)
	if err != nil {
		return "", tool.Infra(fmt.Errorf("check_budget: %w", err))
	}
	s, err := budget.Read(ctx, st, sc.OrgID, sc.UserID, budget.Limits(l), now, true)
	if err != nil {
		return "", tool.Infra(fmt.Errorf("check_budget: %w", err))
	}
	return Report(s, l.User.UserID == store.BudgetEachPerson), nil
}

// Report writes s for the model: the month, then the person's and the
// organisation's spend, each limit and what is left of it. byDefault
// says the person's budget is the organisation's default for each person.
func Report(s budget.Status, byDefault bool) string {
	var b strings.Builder
	last := s.To.AddDate(0, 0, -1)
	fmt.Fprintf(&b, "Budget month: %s (UTC), 1–%d %s; it resets on %s.\n",
		s.From.Format("January 2006"), last.Day(), last.Format("January"), s.To.Format("2 January 2006"))
	whose := "your own budget"
	if byDefault {
		whose = "the organisation's budget for each person"
	}
	section(&b, "You", whose, s.User, s.Limits.User)
	section(&b, "Your organisation", "the organisation's budget", s.Org, s.Limits.Org)
	if e := s.Exceeded(); e != nil {
		b.WriteString("A budget is used up: no model call is made until it resets or an administrator raises it.\n")
	}
	b.WriteString("Money counts models with configured prices; tokens (input and output) count every call.")
	return b.String()
}

// section writes one "who: spent …" paragraph with its limits.
func section(b *strings.Builder, who, whose string, spent store.UsageTotal, l turn.Limit) {
	fmt.Fprintf(b, "%s: spent %s and %s in %d model %s this month.\n", who,
		budget.Money(spent.CostMicros), budget.Tokens(spent.Tokens()), spent.Calls, plural(spent.Calls, "call", "calls"))
	if l.Unlimited() {
		b.WriteString("  No budget limits this.\n")
		return
	}
	if l.CostMicros > 0 {
		fmt.Fprintf(b, "  Money (%s): %s, %s left.\n", whose, budget.Money(l.CostMicros), budget.Money(max(l.CostMicros-spent.CostMicros, 0)))
	}
	if l.Tokens > 0 {
		fmt.Fprintf(b, "  Tokens (%s): %s, %s left.\n", whose, budget.Tokens(l.Tokens), budget.Tokens(max(l.Tokens-spent.Tokens(), 0)))
	}
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
