package budget_test

import (
	"testing"
	"time"

	"github.com/quiverhq/quiver/budget"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/turn"
)

func TestMonth(t *testing.T) {
	hcm := time.FixedZone("ICT", 7*3600)
	tests := []struct {
		at       time.Time
		from, to string
	}{
		{time.Date(2026, 12, 31, 23, 59, 59, 999e6, time.UTC), "2026-12-01", "2027-01-01"},
		{time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), "2027-01-01", "2027-02-01"},
		// 06:30 on 1 March in Hồ Chí Minh City is still February in UTC.
		{time.Date(2028, 3, 1, 6, 30, 0, 0, hcm), "2028-02-01", "2028-03-01"},
	}
	for _, tc := range tests {
		from, to := budget.Month(tc.at)
		if got := from.Format(time.DateOnly); got != tc.from || to.Format(time.DateOnly) != tc.to || from.Location() != time.UTC {
			t.Errorf("Month(%v) = [%v, %v), want [%s, %s) in UTC", tc.at, from, to, tc.from, tc.to)
		}
	}
}

func TestMoneyAndTokens(t *testing.T) {
	for micros, want := range map[int64]string{
		0: "$0.00", 100: "$0.0001", 1_500_000: "$1.50", 4200: "$0.0042", 1: "$0.000001", 1_234_567_890_000: "$1,234,567.89", -2_000_000: "-$2.00",
	} {
		if got := budget.Money(micros); got != want {
			t.Errorf("Money(%d) = %q, want %q", micros, got, want)
		}
	}
	for n, want := range map[int64]string{0: "0 tokens", 1: "1 token", 999: "999 tokens", 1000: "1,000 tokens", 1_234_567: "1,234,567 tokens"} {
		if got := budget.Tokens(n); got != want {
			t.Errorf("Tokens(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestExceeded: a budget is used up when the spend reaches it; the
// person's comes before the organisation's, money before tokens; a zero
// limit is none.
func TestExceeded(t *testing.T) {
	spent := store.UsageTotal{InputTokens: 70, OutputTokens: 30, CostMicros: 500}
	tests := []struct {
		name   string
		limits turn.Budget
		org    bool
		want   string // "" none, "money", "tokens"
	}{
		{"None", turn.Budget{}, false, ""},
		{"UnderBoth", turn.Budget{User: turn.Limit{Tokens: 101, CostMicros: 501}}, false, ""},
		{"TokensReached", turn.Budget{User: turn.Limit{Tokens: 100}}, false, "tokens"},
		{"MoneyFirst", turn.Budget{User: turn.Limit{Tokens: 100, CostMicros: 500}}, false, "money"},
		{"Organisation", turn.Budget{User: turn.Limit{Tokens: 1000}, Org: turn.Limit{Tokens: 150}}, true, "tokens"},
		{"PersonBeforeOrganisation", turn.Budget{User: turn.Limit{CostMicros: 10}, Org: turn.Limit{Tokens: 1}}, false, "money"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := budget.Status{Limits: tc.limits, User: spent, Org: store.UsageTotal{InputTokens: 150}}
			e := s.Exceeded()
			switch {
			case tc.want == "" && e != nil:
				t.Errorf("Exceeded = %v, want none", e)
			case tc.want == "":
			case e == nil:
				t.Errorf("Exceeded = nil, want the %s budget", tc.want)
			case e.Org != tc.org || e.Money != (tc.want == "money"):
				t.Errorf("Exceeded = %+v, want org %t, %s", e, tc.org, tc.want)
			}
		})
	}
}

func TestParseMoney(t *testing.T) {
	for in, want := range map[string]int64{"5": 5_000_000, "5.50": 5_500_000, "$0.0042": 4200, "1,000": 1_000_000_000, " 0.000001 ": 1, ".5": 500_000, "0": 0} {
		if got, err := budget.ParseMoney(in); err != nil || got != want {
			t.Errorf("ParseMoney(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-5", "5.0000001", "abc", "1e3", "5..0", "99999999999", "1000000000.01", "$"} {
		if got, err := budget.ParseMoney(in); err == nil {
			t.Errorf("ParseMoney(%q) = %d, want an error", in, got)
		}
	}
}
