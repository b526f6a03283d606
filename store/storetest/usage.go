package storetest

import (
	"math"
	"testing"
	"time"

	"github.com/quiverhq/quiver/store"
)

// usageCases checks the Usages repository.
func usageCases() []suiteCase {
	return []suiteCase{
		{"RoundTrip", testUsageRoundTrip},
		{"ListByStep", testUsageListByStep},
		{"ListScoped", testUsageListScoped},
		{"SumWindow", testUsageSumWindow},
		{"SumScoped", testUsageSumScoped},
		{"SumEmpty", testUsageSumEmpty},
		{"StepStoredOnce", testUsageStepStoredOnce},
		{"SpendByPerson", testUsageSpendByPerson},
	}
}

// testUsageStepStoredOnce: a turn's step is the key of its record: a
// second record of it (a retried put) is not stored and is no error, the
// first kept; the same step of another turn, or of another organisation,
// is a record of its own.
func testUsageStepStoredOnce(t *testing.T, f *fixture) {
	first := f.newUsage("org", 1, 1, at(1))
	again := f.newUsage("org", 1, 2, at(2))
	otherTurn := f.newUsage("org", 1, 4, at(3))
	otherTurn.TurnID = f.id("other-turn")
	otherOrg := f.newUsage("other-org", 1, 8, at(4))
	f.putUsage(t, first, again, otherTurn, otherOrg)
	if d := diff([]store.Usage{first}, f.listUsage(t, first.OrgID, first.TurnID)); d != "" {
		t.Errorf("ListUsage of the step put twice (-want +got):\n%s", d)
	}
	if d := diff([]store.Usage{otherTurn}, f.listUsage(t, otherTurn.OrgID, otherTurn.TurnID)); d != "" {
		t.Errorf("ListUsage of another turn (-want +got):\n%s", d)
	}
	if d := diff([]store.Usage{otherOrg}, f.listUsage(t, otherOrg.OrgID, otherOrg.TurnID)); d != "" {
		t.Errorf("ListUsage in another organisation (-want +got):\n%s", d)
	}
}

// newUsage returns a record of turn "turn" in org with every field set.
// Its counts are multiples of weight, each field with its own factor, so
// that sums over distinct powers of two say which records were summed.
func (f *fixture) newUsage(org string, step int, weight int64, created time.Time) store.Usage {
	return store.Usage{
		OrgID:             f.id(org),
		ConversationID:    f.id("conv"),
		TurnID:            f.id("turn"),
		Payer:             f.id("payer"),
		UserID:            f.id("user"),
		Model:             "anthropic:claude-sonnet",
		Step:              step,
		InputTokens:       weight,
		CachedInputTokens: 3 * weight,
		CacheWriteTokens:  5 * weight,
		OutputTokens:      7 * weight,
		CostMicros:        11 * weight,
		CreatedAt:         created,
	}
}

// putUsage stores every record, failing the test on error.
func (f *fixture) putUsage(t *testing.T, us ...store.Usage) {
	t.Helper()
	for _, u := range us {
		if err := f.PutUsage(t.Context(), u); err != nil {
			t.Fatalf("PutUsage step %d: %v", u.Step, err)
		}
	}
}

// listUsage returns ListUsage's answer, failing the test on error.
func (f *fixture) listUsage(t *testing.T, org, turn string) []store.Usage {
	t.Helper()
	got, err := f.ListUsage(t.Context(), org, turn)
	if err != nil {
		t.Fatalf("ListUsage: %v", err)
	}
	return got
}

// sumUsage returns SumUsage's answer, failing the test on error.
func (f *fixture) sumUsage(t *testing.T, org, payer string, from, to time.Time) store.UsageTotal {
	t.Helper()
	got, err := f.SumUsage(t.Context(), org, payer, from, to)
	if err != nil {
		t.Fatalf("SumUsage: %v", err)
	}
	return got
}

// total is what SumUsage must answer for exactly these records.
func total(us ...store.Usage) store.UsageTotal {
	var t store.UsageTotal
	for _, u := range us {
		t.Calls++
		t.InputTokens += u.InputTokens
		t.CachedInputTokens += u.CachedInputTokens
		t.CacheWriteTokens += u.CacheWriteTokens
		t.OutputTokens += u.OutputTokens
		t.CostMicros += u.CostMicros
	}
	return t
}

func testUsageRoundTrip(t *testing.T, f *fixture) {
	tests := []struct {
		name string
		edit func(*store.Usage)
	}{
		{"AllFields", func(*store.Usage) {}},
		{"LargeCounts", func(u *store.Usage) {
			u.InputTokens, u.OutputTokens, u.CostMicros = 1<<40, math.MaxInt64/4, math.MaxInt64
		}},
		{"NoPrice", func(u *store.Usage) { u.CostMicros = 0 }},
		{"ZeroFields", func(u *store.Usage) { *u = store.Usage{OrgID: u.OrgID, TurnID: u.TurnID} }},
		{"NoUser", func(u *store.Usage) { u.UserID = "" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := f.newUsage("org", 1, 1, at(12))
			want.TurnID = f.id(tc.name)
			tc.edit(&want)
			f.putUsage(t, want)
			got := f.listUsage(t, want.OrgID, want.TurnID)
			if d := diff([]store.Usage{want}, got); d != "" {
				t.Errorf("ListUsage mismatch (-want +got):\n%s", d)
			}
			for _, u := range got {
				wantUTC(t, "CreatedAt", u.CreatedAt)
			}
		})
	}
}

// testUsageListByStep puts steps out of order, with CreatedAt against the
// step order, and checks they are listed by Step.
func testUsageListByStep(t *testing.T, f *fixture) {
	var put []store.Usage
	for i, step := range []int{3, 1, 4, 2} {
		put = append(put, f.newUsage("org", step, int64(1)<<i, at(20-step)))
	}
	f.putUsage(t, put...)
	want := []store.Usage{put[1], put[3], put[0], put[2]}
	if d := diff(want, f.listUsage(t, f.id("org"), f.id("turn"))); d != "" {
		t.Errorf("ListUsage (-want +got):\n%s", d)
	}
}

// testUsageListScoped checks that a turn's records are listed only in its
// organisation and only under its own ID.
func testUsageListScoped(t *testing.T, f *fixture) {
	mine := f.newUsage("org", 1, 1, at(1))
	theirs := f.newUsage("other-org", 2, 2, at(2)) // same turn ID, other org
	f.putUsage(t, mine, theirs)
	tests := []struct {
		name, org, turn string
		want            []store.Usage
	}{
		{"Mine", mine.OrgID, mine.TurnID, []store.Usage{mine}},
		{"UnknownOrg", f.id("unknown-org"), mine.TurnID, nil},
		{"OtherTurn", mine.OrgID, f.id("other-turn"), nil},
		{"EmptyOrg", "", mine.TurnID, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if d := diff(tc.want, f.listUsage(t, tc.org, tc.turn)); d != "" {
				t.Errorf("ListUsage (-want +got):\n%s", d)
			}
		})
	}
}

// testUsageSumWindow checks that SumUsage counts exactly the records with
// CreatedAt in [from, to), bounds compared as instants whatever their zone.
func testUsageSumWindow(t *testing.T, f *fixture) {
	us := []store.Usage{
		f.newUsage("org", 1, 1, at(10)),
		f.newUsage("org", 2, 2, at(20)),
		f.newUsage("org", 3, 4, at(30)),
	}
	f.putUsage(t, us...)
	ms := time.Millisecond
	tests := []struct {
		name     string
		from, to time.Time
		want     store.UsageTotal
	}{
		{"All", at(0), at(40), total(us...)},
		{"FromInclusive", at(20), at(40), total(us[1:]...)},
		{"ToExclusive", at(0), at(30), total(us[:2]...)},
		{"JustAfterFrom", at(20).Add(ms), at(40), total(us[2])},
		{"JustAfterTo", at(0), at(30).Add(ms), total(us...)},
		{"OneInstant", at(20), at(20).Add(ms), total(us[1])},
		{"EmptyWindow", at(20), at(20), store.UsageTotal{}},
		{"Reversed", at(40), at(0), store.UsageTotal{}},
		{"Before", at(0), at(10), store.UsageTotal{}},
		{"UTCBounds", at(20).UTC(), at(30).UTC(), total(us[1])},
		{"WestBounds", at(20).In(time.FixedZone("UTC-10", -10*3600)), at(31), total(us[1:]...)},
	}
	org, payer := f.id("org"), f.id("payer")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if d := diff(tc.want, f.sumUsage(t, org, payer, tc.from, tc.to)); d != "" {
				t.Errorf("SumUsage(%v, %v) (-want +got):\n%s", tc.from, tc.to, d)
			}
		})
	}
}

// testUsageSumScoped checks that SumUsage counts only the payer's records
// in that organisation: not another payer's in it, nor the same payer's
// in another organisation.
func testUsageSumScoped(t *testing.T, f *fixture) {
	mine := f.newUsage("org", 1, 1, at(10))
	otherPayer := f.newUsage("org", 2, 2, at(10))
	otherPayer.Payer = f.id("other-payer")
	otherOrg := f.newUsage("other-org", 3, 4, at(10))
	f.putUsage(t, mine, otherPayer, otherOrg)
	tests := []struct {
		name, org, payer string
		want             store.UsageTotal
	}{
		{"Mine", mine.OrgID, mine.Payer, total(mine)},
		{"OtherPayer", mine.OrgID, otherPayer.Payer, total(otherPayer)},
		{"OtherOrg", otherOrg.OrgID, mine.Payer, total(otherOrg)},
		{"UnknownOrg", f.id("unknown-org"), mine.Payer, store.UsageTotal{}},
		{"EmptyOrg", "", mine.Payer, store.UsageTotal{}},
		{"EmptyPayer", mine.OrgID, "", store.UsageTotal{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if d := diff(tc.want, f.sumUsage(t, tc.org, tc.payer, at(0), at(59))); d != "" {
				t.Errorf("SumUsage (-want +got):\n%s", d)
			}
		})
	}
}

// testUsageSumEmpty checks that a payer with no records sums to zero, with
// no error, and that a turn with none lists none.
func testUsageSumEmpty(t *testing.T, f *fixture) {
	got := f.sumUsage(t, f.id("org"), f.id("payer"), time.Time{}, at(59))
	if d := diff(store.UsageTotal{}, got); d != "" {
		t.Errorf("SumUsage with no records (-want +got):\n%s", d)
	}
	if got := f.listUsage(t, f.id("org"), f.id("turn")); len(got) != 0 {
		t.Errorf("ListUsage with no records = %+v, want none", got)
	}
}

// testUsageSpendByPerson: MonthSpend counts the person's records of the
// calendar month in UTC when given a user, every record of the
// organisation in it without one, whatever the payer and however each
// record's time was zoned, never another month's or organisation's;
// records put by a turn write count as PutUsage's do.
func testUsageSpendByPerson(t *testing.T, f *fixture) {
	march := time.Date(2025, time.March, 10, 0, 0, 0, 0, time.UTC)
	mine := f.newUsage("org", 1, 1, at(10))
	mineLater := f.newUsage("org", 2, 2, time.Date(2025, time.March, 31, 23, 59, 59, 999_000_000, time.UTC))
	mineLater.Payer = f.id("other-payer")
	// 02:00 on 1 April at UTC+5:30 is still March in UTC.
	mineZoned := f.newUsage("org", 3, 4, time.Date(2025, time.April, 1, 2, 0, 0, 0, time.FixedZone("IST", 5*3600+30*60)))
	theirs := f.newUsage("org", 4, 8, at(15))
	theirs.UserID = f.id("other-user")
	april := f.newUsage("org", 5, 16, time.Date(2025, time.April, 1, 0, 0, 0, 0, time.UTC))
	february := f.newUsage("org", 6, 32, time.Date(2025, time.February, 28, 23, 0, 0, 0, time.UTC))
	otherOrg := f.newUsage("other-org", 1, 64, at(10))
	f.putUsage(t, mine, mineLater, mineZoned, theirs, april, february, otherOrg)
	tests := []struct {
		name, org, user string
		month           time.Time
		want            store.UsageTotal
	}{
		{"Person", mine.OrgID, mine.UserID, march, total(mine, mineLater, mineZoned)},
		{"AnyInstantOfTheMonth", mine.OrgID, mine.UserID, time.Date(2025, time.March, 31, 23, 0, 0, 0, time.UTC), total(mine, mineLater, mineZoned)},
		{"OtherPerson", mine.OrgID, theirs.UserID, march, total(theirs)},
		{"Organisation", mine.OrgID, "", march, total(mine, mineLater, mineZoned, theirs)},
		{"NextMonth", mine.OrgID, mine.UserID, april.CreatedAt, total(april)},
		{"MonthBefore", mine.OrgID, "", february.CreatedAt, total(february)},
		{"UnknownPerson", mine.OrgID, f.id("nobody"), march, store.UsageTotal{}},
		{"OtherOrganisation", otherOrg.OrgID, "", march, total(otherOrg)},
		{"UnknownOrganisation", f.id("unknown-org"), mine.UserID, march, store.UsageTotal{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := f.MonthSpend(t.Context(), tc.org, tc.user, tc.month)
			if err != nil {
				t.Fatalf("MonthSpend: %v", err)
			}
			if got != tc.want {
				t.Errorf("MonthSpend = %+v, want %+v", got, tc.want)
			}
		})
	}
	if got := total(mine).Tokens(); got != mine.InputTokens+mine.OutputTokens {
		t.Errorf("Tokens() = %d, want input + output %d", got, mine.InputTokens+mine.OutputTokens)
	}
	// A repeated step stores nothing and counts nothing.
	f.putUsage(t, mine)
	if got, err := f.MonthSpend(t.Context(), mine.OrgID, theirs.UserID, march); err != nil || got != total(theirs) {
		t.Errorf("after a repeated put: %+v, %v", got, err)
	}
	if got, err := f.MonthSpend(t.Context(), mine.OrgID, mine.UserID, march); err != nil || got != total(mine, mineLater, mineZoned) {
		t.Errorf("a repeated step was counted: %+v, %v", got, err)
	}
}
