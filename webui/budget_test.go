package webui_test

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/budget"
	"github.com/quiverhq/quiver/internal/clock"
	"github.com/quiverhq/quiver/store"
)

// budgetRows are the rows of the People page's budget table: who to
// [limit, spent].
func (b *browser) budgetRows() map[string][2]string {
	b.t.Helper()
	return eval[map[string][2]string](b, `Object.fromEntries(Array.from(document.querySelectorAll('#budgets tr[data-who]'),
		(r) => [r.dataset.who, [r.querySelector('[data-label="Limit"]').textContent, r.querySelector('[data-label="Spent this month"]').textContent]]))`)
}

// storedBudgets are org_a's budgets in the store: UserID to [cost, tokens].
func storedBudgets(t *testing.T, st store.Store) map[string][2]int64 {
	t.Helper()
	bs, err := st.ListBudgets(context.Background(), "org_a")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][2]int64{}
	for _, b := range bs {
		out[b.UserID] = [2]int64{b.CostMicros, b.Tokens}
	}
	return out
}

// TestBudgetsAgainstHTTPAPI: over the real API, Ana (an admin) is refused
// a bad amount before anything is sent, sees the API's error for a user
// not in the organisation, sets the default for each person and Bruno's
// own budget and sees them listed with Bruno's spend; Bruno sees his own
// month on Preferences (spend, what is left, the reset day, then the
// message once a budget is used up) and no budget controls on People;
// Ana removes his budget.
func TestBudgetsAgainstHTTPAPI(t *testing.T) {
	st, _, b := realAPI(t)
	ctx := context.Background()
	now := clock.Now().UTC()
	if err := st.CreateUser(ctx, store.User{ID: "bruno", OrgID: "org_a", DisplayName: "Bruno Costa", Role: store.RoleMember, CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := st.PutUsage(ctx, store.Usage{OrgID: "org_a", UserID: "bruno", ConversationID: "c1", TurnID: "t1", Step: 1, Model: "openai:gpt-4.1-mini",
		InputTokens: 1000, OutputTokens: 234, CostMicros: 1_500_000, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}

	// clear empties an input (chromedp's SetValue refuses "").
	clear := func(id string) chromedp.Action[chromedp.Void] {
		return chromedp.Evaluate[chromedp.Void](`document.getElementById('` + id + `').value = ''`)
	}

	b.open("#/people", `#budgets tr[data-who="default"]`)
	if d := cmp.Diff(map[string][2]string{
		"organisation": {"No limit", "$1.50 · 1,234 tokens · 1 model call this month"},
		"default":      {"No limit", "Each person's own spend"},
	}, b.budgetRows()); d != "" {
		t.Errorf("before any budget (-want +got):\n%s", d)
	}

	// The form's parsing: money as micros without floating point, tokens
	// whole; null is refused.
	parsed := eval[[]*int64](b, `import('/assets/js/budget.js').then((m) => [
		m.parseMoney('12.50'), m.parseMoney('0.000001'), m.parseMoney('.5'), m.parseMoney('999999999.999999'),
		m.parseMoney('1.0000001'), m.parseMoney('1e3'), m.parseMoney('-1'), m.parseMoney('1,5'), m.parseMoney('1000000000'),
		m.parseTokens('10000'), m.parseTokens('1000000000000000'), m.parseTokens('1000000000000001'), m.parseTokens('10.5'), m.parseTokens('-3')])`,
		chromedp.EvalAwaitPromise)
	i64 := func(n int64) *int64 { return &n }
	if d := cmp.Diff([]*int64{i64(12_500_000), i64(1), i64(500_000), i64(999_999_999_999_999), nil, nil, nil, nil, nil,
		i64(10_000), i64(1_000_000_000_000_000), nil, nil, nil}, parsed); d != "" {
		t.Errorf("parsed (-want +got):\n%s", d)
	}

	// Bad input: one line, nothing sent.
	b.Do("a bad amount", chromedp.SetValue(chromedp.CSS(`#budget-cost`), "5.5.5"), chromedp.Click(chromedp.CSS(`#budget-save`)))
	b.WaitText(`#budget-invalid`, "The money limit must be an amount such as 5 or 12.50")
	b.Do("a fractional token count", clear(`budget-cost`),
		chromedp.SetValue(chromedp.CSS(`#budget-tokens`), "10.5"), chromedp.Click(chromedp.CSS(`#budget-save`)))
	b.WaitText(`#budget-invalid`, "The token limit must be a whole number")
	b.Do("no limit at all", chromedp.SetValue(chromedp.CSS(`#budget-tokens`), "0"), chromedp.Click(chromedp.CSS(`#budget-save`)))
	b.WaitText(`#budget-invalid`, "Set a money limit or a token limit")
	for _, r := range b.rec.recorded() {
		if r.Method == "PUT" {
			t.Fatalf("the form sent %s %s for bad input", r.Method, r.Path)
		}
	}
	// The API's error: someone not in the organisation.
	b.Do("a stranger", chromedp.Evaluate[chromedp.Void](`document.getElementById('budget-who').append(new Option('Ghost', 'ghost'));
		document.getElementById('budget-who').value = 'ghost'`),
		chromedp.SetValue(chromedp.CSS(`#budget-cost`), "1"), chromedp.Click(chromedp.CSS(`#budget-save`)))
	b.WaitText(`#budget-form-status .alert`, "The budget was not saved: no such user in this organisation")

	// The default, then Bruno's own.
	b.Do("the default", chromedp.SetValue(chromedp.CSS(`#budget-who`), "default"), chromedp.SetValue(chromedp.CSS(`#budget-cost`), "5"),
		clear(`budget-tokens`), chromedp.Click(chromedp.CSS(`#budget-save`)))
	b.WaitText(`#budgets-status`, "The budget of Each person (default) is saved.")
	b.Do("Bruno's", chromedp.SetValue(chromedp.CSS(`#budget-who`), "bruno"), chromedp.SetValue(chromedp.CSS(`#budget-cost`), "2.50"),
		chromedp.SetValue(chromedp.CSS(`#budget-tokens`), "10000"), chromedp.Click(chromedp.CSS(`#budget-save`)))
	b.WaitText(`#budgets-status`, "The budget of Bruno Costa is saved.")
	if d := cmp.Diff(map[string][2]string{
		"organisation": {"No limit", "$1.50 · 1,234 tokens · 1 model call this month"},
		"default":      {"$5.00", "Each person's own spend"},
		"bruno":        {"$2.50 · 10,000 tokens", "$1.50 · 1,234 tokens · 1 model call this month"},
	}, b.budgetRows()); d != "" {
		t.Errorf("after setting two (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string][2]int64{store.BudgetEachPerson: {5_000_000, 0}, "bruno": {2_500_000, 10_000}}, storedBudgets(t, st)); d != "" {
		t.Errorf("stored (-want +got):\n%s", d)
	}
	// Change fills the form with what is set.
	b.Do("change Bruno's", chromedp.Click(chromedp.CSS(`tr[data-who="bruno"] button.change-budget`)))
	if got := eval[[]string](b, `['budget-who', 'budget-cost', 'budget-tokens'].map((id) => document.getElementById(id).value)`); !cmp.Equal(got, []string{"bruno", "2.5", "10000"}) {
		t.Errorf("the form after Change: %q", got)
	}
	b.Shot("admin")

	// Bruno: his month, then no controls on People.
	b.signInAs(st, "bruno")
	b.open("#/preferences", `#my-budget-you`)
	_, end := budget.Month(now)
	b.WaitText(`#my-budget-reset`, "it resets on "+end.Format("January 2, 2006")+" (UTC)")
	b.WaitText(`#my-budget-you`, "Your own budget, set by an administrator.")
	b.WaitText(`#my-budget-you`, "$1.50 of $2.50 spent, $1.00 left")
	b.WaitText(`#my-budget-you`, "1,234 tokens of 10,000 tokens spent, 8,766 tokens left")
	b.WaitText(`#my-budget-org`, "$1.50 spent, no limit")
	if n := eval[int](b, `document.querySelectorAll('#my-budget-exceeded').length`); n != 0 {
		t.Errorf("%d exceeded messages within the budget", n)
	}
	b.Shot("member")
	listed := len(b.requests("GET", "/api/budgets"))
	b.open("#/people", `main h1`)
	b.WaitText(`main`, "admins")
	if n := eval[int](b, `document.querySelectorAll('#budgets, #budget-form').length`); n != 0 {
		t.Errorf("Bruno sees %d budget controls", n)
	}
	if n := len(b.requests("GET", "/api/budgets")) - listed; n != 0 {
		t.Errorf("Bruno's People page asked for the budgets %d times", n)
	}
	// Used up: the message.
	if err := st.PutBudget(ctx, store.Budget{OrgID: "org_a", UserID: "bruno", Tokens: 1000, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	b.open("#/preferences", `#my-budget-exceeded`)
	b.WaitText(`#my-budget-exceeded`, "This month's budget is used up")
	b.WaitText(`#my-budget-you`, "1,234 tokens of 1,000 tokens spent: used up")
	b.Shot("exceeded")

	// Ana removes it.
	b.signInAs(st, "ana")
	b.open("#/people", `#budgets tr[data-who="bruno"]`)
	b.Do("remove", chromedp.Click(chromedp.CSS(`tr[data-who="bruno"] button.remove-budget`)))
	b.confirmDialog("Remove the budget of Bruno Costa?", "yes")
	b.Do("gone", chromedp.WaitNotPresent(chromedp.CSS(`#budgets tr[data-who="bruno"]`)))
	b.WaitText(`#budgets-status`, "The budget of Bruno Costa is removed.")
	if d := cmp.Diff(map[string][2]int64{store.BudgetEachPerson: {5_000_000, 0}}, storedBudgets(t, st)); d != "" {
		t.Errorf("stored after the removal (-want +got):\n%s", d)
	}
}
