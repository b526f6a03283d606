package storetest

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/store"
)

// budgetCases checks the Budgets repository.
func budgetCases() []suiteCase {
	return []suiteCase{
		{"ReplacedAndListed", testBudgetReplaced},
		{"UnlimitedDeletes", testBudgetUnlimitedDeletes},
		{"Invalid", testBudgetInvalid},
		{"LimitsPickOwnElseDefault", testBudgetLimits},
		{"Isolation", testBudgetIsolation},
	}
}

// listBudgets returns ListBudgets' answer, failing the test on error.
func (f *fixture) listBudgets(t *testing.T, org string) []store.Budget {
	t.Helper()
	bs, err := f.ListBudgets(t.Context(), org)
	if err != nil {
		t.Fatalf("ListBudgets: %v", err)
	}
	return bs
}

// putBudgets stores every budget, failing the test on error.
func (f *fixture) putBudgets(t *testing.T, bs ...store.Budget) {
	t.Helper()
	for _, b := range bs {
		if err := f.PutBudget(t.Context(), b); err != nil {
			t.Fatalf("PutBudget(%q): %v", b.UserID, err)
		}
	}
}

func testBudgetReplaced(t *testing.T, f *fixture) {
	org := f.id("org")
	person := store.Budget{OrgID: org, UserID: f.id("user"), CostMicros: 5_000_000, UpdatedAt: at(1)}
	orgWide := store.Budget{OrgID: org, UserID: store.BudgetOrganisation, Tokens: 1_000_000, CostMicros: store.MaxBudget, UpdatedAt: at(2)}
	def := store.Budget{OrgID: org, UserID: store.BudgetEachPerson, Tokens: 50_000, UpdatedAt: at(3)}
	f.putBudgets(t, person, orgWide, def)
	again := person
	again.CostMicros, again.Tokens, again.UpdatedAt = 7_000_000, 9, at(4)
	f.putBudgets(t, again)
	want := []store.Budget{orgWide, def, again}
	for i := range want {
		want[i].UpdatedAt = want[i].UpdatedAt.UTC()
	}
	got := f.listBudgets(t, org)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ListBudgets (-want +got):\n%s", d)
	}
	for _, b := range got {
		wantUTC(t, "UpdatedAt", b.UpdatedAt)
	}
}

func testBudgetUnlimitedDeletes(t *testing.T, f *fixture) {
	org := f.id("org")
	b := store.Budget{OrgID: org, UserID: f.id("user"), Tokens: 10, UpdatedAt: at(1)}
	f.putBudgets(t, b)
	f.putBudgets(t, store.Budget{OrgID: org, UserID: b.UserID, UpdatedAt: at(2)})
	if got := f.listBudgets(t, org); len(got) != 0 {
		t.Errorf("ListBudgets after an unlimited put = %+v, want none", got)
	}
	// Deleting what is not there is no error.
	f.putBudgets(t, store.Budget{OrgID: org, UserID: f.id("nobody"), UpdatedAt: at(3)})
}

// testBudgetInvalid: each invalid budget is refused with
// ErrBudgetInvalid, and the stored one stays.
func testBudgetInvalid(t *testing.T, f *fixture) {
	org := f.id("org")
	kept := store.Budget{OrgID: org, UserID: f.id("user"), Tokens: 10, UpdatedAt: at(1)}
	f.putBudgets(t, kept)
	bad := map[string]store.Budget{
		"NoOrg":         {UserID: kept.UserID, Tokens: 1, UpdatedAt: at(2)},
		"NegativeCost":  {OrgID: org, UserID: kept.UserID, CostMicros: -1, UpdatedAt: at(2)},
		"NegativeToken": {OrgID: org, UserID: kept.UserID, Tokens: -1, CostMicros: 5, UpdatedAt: at(2)},
		"TooLarge":      {OrgID: org, UserID: kept.UserID, Tokens: store.MaxBudget + 1, UpdatedAt: at(2)},
		"NoTime":        {OrgID: org, UserID: kept.UserID, Tokens: 1},
		"NULInUser":     {OrgID: org, UserID: "a\x00b", Tokens: 1, UpdatedAt: at(2)},
	}
	for name, b := range bad {
		t.Run(name, func(t *testing.T) {
			if err := f.PutBudget(t.Context(), b); !errors.Is(err, store.ErrBudgetInvalid) {
				t.Errorf("PutBudget = %v, want ErrBudgetInvalid", err)
			}
		})
	}
	want := kept
	want.UpdatedAt = want.UpdatedAt.UTC()
	if d := cmp.Diff([]store.Budget{want}, f.listBudgets(t, org)); d != "" {
		t.Errorf("ListBudgets after refused puts (-want +got):\n%s", d)
	}
}

// testBudgetLimits: a person is held to the organisation's budget and to
// their own, or else to the default; no budget is unlimited.
func testBudgetLimits(t *testing.T, f *fixture) {
	org := f.id("org")
	limits := func(user string) store.BudgetLimits {
		t.Helper()
		l, err := f.BudgetLimits(t.Context(), org, user)
		if err != nil {
			t.Fatalf("BudgetLimits: %v", err)
		}
		return l
	}
	if l := limits(f.id("user")); !l.Unlimited() {
		t.Errorf("BudgetLimits with no budget = %+v, want unlimited", l)
	}
	orgWide := store.Budget{OrgID: org, Tokens: 1000, UpdatedAt: at(1)}
	def := store.Budget{OrgID: org, UserID: store.BudgetEachPerson, Tokens: 100, UpdatedAt: at(1)}
	own := store.Budget{OrgID: org, UserID: f.id("user"), CostMicros: 42, UpdatedAt: at(1)}
	f.putBudgets(t, orgWide, def, own)
	got := limits(own.UserID)
	if got.Org.Tokens != 1000 || got.User.UserID != own.UserID || got.User.CostMicros != 42 || got.User.Tokens != 0 {
		t.Errorf("BudgetLimits of a person with their own = %+v, want org 1000 tokens and their 42 µ", got)
	}
	got = limits(f.id("other"))
	if got.Org.Tokens != 1000 || got.User.UserID != store.BudgetEachPerson || got.User.Tokens != 100 {
		t.Errorf("BudgetLimits of a person without their own = %+v, want the default's 100 tokens", got)
	}
}

// testBudgetIsolation: another organisation's budgets are never listed
// nor applied.
func testBudgetIsolation(t *testing.T, f *fixture) {
	f.putBudgets(t, store.Budget{OrgID: f.id("other-org"), UserID: store.BudgetEachPerson, Tokens: 5, UpdatedAt: at(1)},
		store.Budget{OrgID: f.id("other-org"), Tokens: 5, UpdatedAt: at(1)})
	if got := f.listBudgets(t, f.id("org")); len(got) != 0 {
		t.Errorf("ListBudgets of an organisation without budgets = %+v", got)
	}
	l, err := f.BudgetLimits(t.Context(), f.id("org"), f.id("user"))
	if err != nil || !l.Unlimited() {
		t.Errorf("BudgetLimits = %+v, %v; want unlimited", l, err)
	}
}
