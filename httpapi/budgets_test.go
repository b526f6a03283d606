package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/store"
)

type myBudget struct {
	MonthStart   time.Time `json:"month_start"`
	MonthEnd     time.Time `json:"month_end"`
	You          httpapi.BudgetStatus
	Organisation httpapi.BudgetStatus
	Exceeded     string
}

type budgetList struct {
	Budgets []httpapi.Budget
}

// TestBudgets: an admin sets the organisation's budget, the default and
// a person's own; each person reads theirs with this month's spend; a
// member cannot set or list them; another organisation's user is 404;
// bad limits are 400 and change nothing.
func TestBudgets(t *testing.T) {
	f := newFixture(t, nil)
	f.must(f.st.PutUsage(f.ctx, store.Usage{OrgID: "org_a", UserID: "bob", TurnID: "t1", Step: 1, Model: "m",
		InputTokens: 900, OutputTokens: 100, CostMicros: 2_000_000, CreatedAt: start}))
	f.must(f.st.PutUsage(f.ctx, store.Usage{OrgID: "org_a", UserID: "carol", TurnID: "t2", Step: 1, Model: "m",
		InputTokens: 500, CreatedAt: start}))
	f.must(f.st.PutUsage(f.ctx, store.Usage{OrgID: "org_a", UserID: "bob", TurnID: "t0", Step: 1, Model: "m",
		InputTokens: 7777, CreatedAt: start.AddDate(0, -1, 0)})) // last month

	var b httpapi.Budget
	f.ok(f.do(f.alice, "PUT", "/api/budgets/organisation", map[string]any{"tokens": 1000}), http.StatusOK, &b)
	if b.Who != "organisation" || b.Tokens != 1000 {
		t.Errorf("put organisation = %+v", b)
	}
	f.ok(f.do(f.alice, "PUT", "/api/budgets/default", map[string]any{"cost_micros": 5_000_000}), http.StatusOK, &b)
	f.ok(f.do(f.alice, "PUT", "/api/budgets/carol", map[string]any{"tokens": 400}), http.StatusOK, &b)

	var me myBudget
	f.ok(f.do(f.bob, "GET", "/api/budget", nil), http.StatusOK, &me)
	if me.You.Source != "default" || me.You.Limit.CostMicros != 5_000_000 || me.You.Spent.Tokens != 1000 || me.You.Spent.CostMicros != 2_000_000 {
		t.Errorf("bob's budget = %+v", me.You)
	}
	if me.Organisation.Limit.Tokens != 1000 || me.Organisation.Spent.Tokens != 1500 || !strings.Contains(me.Exceeded, "organisation's spend is 1,500 tokens of 1,000") {
		t.Errorf("bob's organisation = %+v, exceeded %q", me.Organisation, me.Exceeded)
	}
	f.ok(f.do(f.carol, "GET", "/api/budget", nil), http.StatusOK, &me)
	if me.You.Source != "own" || me.You.Limit.Tokens != 400 || me.You.Spent.Tokens != 500 || !strings.Contains(me.Exceeded, "your spend is 500 tokens of 400") {
		t.Errorf("carol's budget = %+v, exceeded %q", me.You, me.Exceeded)
	}
	if !me.MonthStart.Equal(time.Date(start.Year(), start.Month(), 1, 0, 0, 0, 0, time.UTC)) || !me.MonthEnd.Equal(me.MonthStart.AddDate(0, 1, 0)) {
		t.Errorf("month = [%v, %v)", me.MonthStart, me.MonthEnd)
	}

	var l budgetList
	f.ok(f.do(f.alice, "GET", "/api/budgets", nil), http.StatusOK, &l)
	var whos []string
	for _, b := range l.Budgets {
		whos = append(whos, b.Who)
	}
	if strings.Join(whos, ",") != "organisation,default,carol" || l.Budgets[0].Spent == nil || l.Budgets[0].Spent.Tokens != 1500 || l.Budgets[1].Spent != nil {
		t.Errorf("list = %+v", l.Budgets)
	}

	wantError(t, f.do(f.bob, "PUT", "/api/budgets/bob", map[string]any{"tokens": 1}), http.StatusForbidden, "forbidden")
	wantError(t, f.do(f.bob, "GET", "/api/budgets", nil), http.StatusForbidden, "forbidden")
	wantError(t, f.do(f.alice, "PUT", "/api/budgets/dave", map[string]any{"tokens": 1}), http.StatusNotFound, "not_found")
	wantError(t, f.do(f.alice, "PUT", "/api/budgets/carol", map[string]any{"tokens": -1}), http.StatusBadRequest, "invalid_request")
	wantError(t, f.do(f.alice, "PUT", "/api/budgets/carol", map[string]any{"tokens": int64(store.MaxBudget) + 1}), http.StatusBadRequest, "invalid_request")
	f.ok(f.do(f.carol, "GET", "/api/budget", nil), http.StatusOK, &me)
	if me.You.Limit.Tokens != 400 {
		t.Errorf("a refused put changed carol's budget: %+v", me.You.Limit)
	}
	// dave, an admin of another organisation, sees none of these.
	f.ok(f.do(f.dave, "GET", "/api/budgets", nil), http.StatusOK, &l)
	if len(l.Budgets) != 0 {
		t.Errorf("another organisation lists %+v", l.Budgets)
	}

	if r := f.do(f.alice, "DELETE", "/api/budgets/carol", nil); r.StatusCode != http.StatusNoContent {
		t.Errorf("delete = %d", r.StatusCode)
	}
	f.ok(f.do(f.carol, "GET", "/api/budget", nil), http.StatusOK, &me)
	if me.You.Source != "default" {
		t.Errorf("after delete carol's budget is %+v, want the default", me.You)
	}
}

// TestSendOverBudget: a turn refused for its budget is 402
// budget_exceeded with the message, before any event.
func TestSendOverBudget(t *testing.T) {
	f := newFixture(t, nil)
	f.conversation("org_a", "bob", "conv_bob")
	r := f.do(f.bob, "POST", "/api/conversations/conv_bob/messages", map[string]any{"message": "over-budget"})
	wantError(t, r, http.StatusPaymentRequired, "budget_exceeded")
	if !strings.Contains(string(r.body), "This month's budget is used up") {
		t.Errorf("body %s: want the budget's message", r.body)
	}
}
