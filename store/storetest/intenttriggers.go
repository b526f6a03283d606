package storetest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/quiverhq/quiver/store"
)

// This file checks a community's custom triggers: unique per target and
// phrase, at most the limit per target, both checked in the write's
// transaction, and listed by target, then phrase.

// triggerTemplate returns a trigger with every field set but OrgID.
func triggerTemplate(target, phrase string) store.IntentTrigger {
	return store.IntentTrigger{Target: target, Phrase: phrase, CreatedAt: at(10)}
}

// triggerIn returns template tr placed in the organisation orgID.
func triggerIn(tr store.IntentTrigger, orgID string) store.IntentTrigger {
	tr.OrgID = orgID
	return tr
}

// newTrigger returns triggerTemplate(target, phrase) in org, created at
// the given minute.
func (f *fixture) newTrigger(org, target, phrase string, minute int) store.IntentTrigger {
	tr := triggerIn(triggerTemplate(target, phrase), f.id(org))
	tr.CreatedAt = at(minute)
	return tr
}

// addTriggers adds every trigger with no limit, failing the test on error.
func (f *fixture) addTriggers(t *testing.T, trs ...store.IntentTrigger) {
	t.Helper()
	for _, tr := range trs {
		if err := f.AddIntentTrigger(t.Context(), tr, 0); err != nil {
			t.Fatalf("AddIntentTrigger %s %q in %s: %v", tr.Target, tr.Phrase, tr.OrgID, err)
		}
	}
}

// listTriggers returns ListIntentTriggers' answer, failing the test on
// error.
func (f *fixture) listTriggers(t *testing.T, org string) []store.IntentTrigger {
	t.Helper()
	got, err := f.ListIntentTriggers(t.Context(), org)
	if err != nil {
		t.Fatalf("ListIntentTriggers: %v", err)
	}
	return got
}

// wantTriggers fails unless got is want, in order; nil and empty lists are
// equal.
func wantTriggers(t *testing.T, what string, want, got []store.IntentTrigger) {
	t.Helper()
	if d := diff(want, got); d != "" {
		t.Errorf("%s (-want +got):\n%s", what, d)
	}
}

// sortedTriggers returns trs in the order lists promise: by target, then
// phrase, byte by byte.
func sortedTriggers(trs ...store.IntentTrigger) []store.IntentTrigger {
	return slices.SortedFunc(slices.Values(trs), func(a, b store.IntentTrigger) int {
		return cmpJoin(strings.Compare(a.Target, b.Target), strings.Compare(a.Phrase, b.Phrase))
	})
}

// cmpJoin returns the first non-zero comparison.
func cmpJoin(cs ...int) int {
	for _, c := range cs {
		if c != 0 {
			return c
		}
	}
	return 0
}

// testIntentTriggerAdd adds triggers in turn and checks each answer, and
// that a refused one changed nothing: the first of a duplicate stays,
// CreatedAt included.
func testIntentTriggerAdd(t *testing.T, f *fixture) {
	first := f.newTrigger("org", "search", "look it up", 10)
	theirs := f.newTrigger("other-org", "search", "look it up", 11)
	f.addTriggers(t, first, theirs)
	mine := []store.IntentTrigger{first}
	steps := []struct {
		name string
		tr   store.IntentTrigger
		want error
	}{
		{"SamePhrase", f.newTrigger("org", "search", "look it up", 20), store.ErrTriggerExists},
		{"SamePhraseOtherTarget", f.newTrigger("org", "image", "look it up", 21), nil},
		{"OtherPhrase", f.newTrigger("org", "search", "google", 22), nil},
		{"OtherPhraseAgain", f.newTrigger("org", "search", "google", 23), store.ErrTriggerExists},
		{"EveryTurn", f.newTrigger("org", "voice", "^", 24), nil},
		{"EveryTurnAgain", f.newTrigger("org", "voice", "^", 25), store.ErrTriggerExists},
	}
	for _, st := range steps {
		err := f.AddIntentTrigger(t.Context(), st.tr, 0)
		wantErrIs(t, st.name+": AddIntentTrigger", err, st.want)
		if st.want == nil {
			mine = append(mine, st.tr)
		}
		wantTriggers(t, st.name+": ListIntentTriggers", sortedTriggers(mine...), f.listTriggers(t, first.OrgID))
	}
	wantTriggers(t, "the other organisation's triggers", []store.IntentTrigger{theirs}, f.listTriggers(t, theirs.OrgID))
}

// addCase is one AddIntentTrigger check in an organisation of its own.
// Triggers are templates (triggerTemplate), placed by the check.
type addCase struct {
	name string
	// mine and other are added first, without limit, in the case's
	// organisation and in another one.
	mine, other []store.IntentTrigger
	// cand is then added in the case's organisation with limit.
	cand  store.IntentTrigger
	limit int
	// want is nil or the sentinel AddIntentTrigger must answer.
	want error
}

// runAddCases runs each case and checks its answer and that the
// organisation then holds mine, plus cand exactly when it was accepted.
func (f *fixture) runAddCases(t *testing.T, tests []addCase) {
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			org := f.id("org-" + tc.name)
			var want []store.IntentTrigger
			for _, tr := range tc.mine {
				want = append(want, triggerIn(tr, org))
				f.addTriggers(t, want[len(want)-1])
			}
			for _, tr := range tc.other {
				f.addTriggers(t, triggerIn(tr, f.id("other-org-"+tc.name)))
			}
			cand := triggerIn(tc.cand, org)
			wantErrIs(t, "AddIntentTrigger", f.AddIntentTrigger(t.Context(), cand, tc.limit), tc.want)
			if tc.want == nil {
				want = append(want, cand)
			}
			wantTriggers(t, "ListIntentTriggers after AddIntentTrigger", sortedTriggers(want...), f.listTriggers(t, org))
		})
	}
}

func testIntentTriggerLimit(t *testing.T, f *fixture) {
	search := func(phrase string) store.IntentTrigger { return triggerTemplate("search", phrase) }
	two := []store.IntentTrigger{search("a"), search("b")}
	f.runAddCases(t, []addCase{
		{name: "Full", mine: two, cand: search("c"), limit: 2, want: store.ErrTriggerLimit},
		{name: "OverFull", mine: append(two, search("c")), cand: search("d"), limit: 2, want: store.ErrTriggerLimit},
		{name: "OtherTargetUnaffected", mine: two, cand: triggerTemplate("image", "c"), limit: 2},
		{name: "OtherTargetsDoNotCount", mine: []store.IntentTrigger{
			triggerTemplate("image", "a"), triggerTemplate("image", "b"), triggerTemplate("voice", "c"),
		}, cand: search("d"), limit: 2},
		{name: "OtherOrgDoesNotCount", other: two, cand: search("c"), limit: 2},
		{name: "Room", mine: two[:1], cand: search("c"), limit: 2},
		{name: "Empty", cand: search("c"), limit: 1},
		{name: "ZeroIsNoLimit", mine: two, cand: search("c"), limit: 0},
		{name: "NegativeIsNoLimit", mine: two, cand: search("c"), limit: -1},
	})
}

// testIntentTriggerRemove removes a trigger and checks that it alone is
// gone, from its organisation alone, that removing what is not there is
// ErrNotFound and changes nothing, and that the removal freed a place
// under the target's limit.
func testIntentTriggerRemove(t *testing.T, f *fixture) {
	ctx := t.Context()
	a, b := f.newTrigger("org", "search", "a", 10), f.newTrigger("org", "search", "b", 11)
	imageA := f.newTrigger("org", "image", "a", 12)
	theirs := f.newTrigger("other-org", "search", "a", 13)
	f.addTriggers(t, a, b, imageA, theirs)
	org := a.OrgID
	if err := f.RemoveIntentTrigger(ctx, org, "search", "a"); err != nil {
		t.Fatalf("RemoveIntentTrigger: %v", err)
	}
	tests := []struct{ name, org, target, phrase string }{
		{"Removed", org, "search", "a"},
		{"UnknownPhrase", org, "search", "zzz"},
		{"PhraseOfOtherTarget", org, "voice", "b"},
		{"OtherOrg", theirs.OrgID, "search", "b"},
		{"UnknownOrg", f.id("unknown-org"), "search", "b"},
		{"EmptyOrg", "", "search", "b"},
	}
	for _, tc := range tests {
		wantNotFound(t, tc.name+": RemoveIntentTrigger", f.RemoveIntentTrigger(ctx, tc.org, tc.target, tc.phrase))
	}
	wantTriggers(t, "ListIntentTriggers after remove", []store.IntentTrigger{imageA, b}, f.listTriggers(t, org))
	wantTriggers(t, "the other organisation's triggers", []store.IntentTrigger{theirs}, f.listTriggers(t, theirs.OrgID))

	c, d := f.newTrigger("org", "search", "c", 20), f.newTrigger("org", "search", "d", 21)
	wantErrIs(t, "AddIntentTrigger into the place a removal freed", f.AddIntentTrigger(ctx, c, 2), nil)
	wantErrIs(t, "AddIntentTrigger past the limit again", f.AddIntentTrigger(ctx, d, 2), store.ErrTriggerLimit)
	again := f.newTrigger("org", "search", "a", 22)
	wantErrIs(t, "AddIntentTrigger of a removed trigger", f.AddIntentTrigger(ctx, again, 0), nil)
}

// testIntentTriggerList adds triggers out of order in two organisations
// and checks that each list is by target, then phrase, and holds only its
// organisation's triggers, times in UTC.
func testIntentTriggerList(t *testing.T, f *fixture) {
	mine := []store.IntentTrigger{
		f.newTrigger("org", "voice", "say it", 10),
		f.newTrigger("org", "image", "picture", 11),
		f.newTrigger("org", "search", "google", 12),
		f.newTrigger("org", "image", "draw", 13),
		f.newTrigger("org", "search", "^", 14),
		f.newTrigger("org", "media-analysis", "look at", 15),
		f.newTrigger("org", "memory", "remember", 16),
		f.newTrigger("org", "image", "a photo", 17),
	}
	theirs := f.newTrigger("other-org", "calculator", "sum", 18)
	f.addTriggers(t, append(mine[:4:4], theirs)...)
	f.addTriggers(t, mine[4:]...)
	tests := []struct {
		name string
		org  string
		want []store.IntentTrigger
	}{
		{"Mine", f.id("org"), sortedTriggers(mine...)},
		{"OtherOrg", theirs.OrgID, []store.IntentTrigger{theirs}},
		{"UnknownOrg", f.id("unknown-org"), nil},
		{"EmptyOrg", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := f.listTriggers(t, tc.org)
			wantTriggers(t, "ListIntentTriggers", tc.want, got)
			for _, tr := range got {
				wantUTC(t, "CreatedAt", tr.CreatedAt)
			}
		})
	}
}

// testIntentTriggerConcurrent adds triggers from 8 goroutines at once,
// each allowed alone but not all together, and checks that exactly as
// many succeed as the rule allows and the rest fail with its error.
func testIntentTriggerConcurrent(t *testing.T, f *fixture) {
	const writers = 8
	tests := []struct {
		name  string
		tr    func(i int) store.IntentTrigger // a template
		limit int
		ok    int
		want  error
	}{
		{"Limit", func(i int) store.IntentTrigger {
			return triggerTemplate("search", fmt.Sprintf("phrase %d", i))
		}, 3, 3, store.ErrTriggerLimit},
		{"SamePhrase", func(int) store.IntentTrigger { return triggerTemplate("search", "same") },
			0, 1, store.ErrTriggerExists},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			org := f.id("org-" + tc.name)
			errs := make([]error, writers)
			var wg sync.WaitGroup
			for i := range writers {
				wg.Go(func() { errs[i] = f.AddIntentTrigger(t.Context(), triggerIn(tc.tr(i), org), tc.limit) })
			}
			wg.Wait()
			ok := 0
			for i, err := range errs {
				if err == nil {
					ok++
				} else if !errors.Is(err, tc.want) {
					t.Errorf("writer %d: err = %v, want nil or %v", i, err, tc.want)
				}
			}
			if ok != tc.ok {
				t.Errorf("%d of %d adds succeeded, want %d", ok, writers, tc.ok)
			}
			if n := len(f.listTriggers(t, org)); n != tc.ok {
				t.Errorf("%d triggers stored, want %d", n, tc.ok)
			}
		})
	}
}
