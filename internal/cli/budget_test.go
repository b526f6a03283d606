package cli_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestBudgetCommands: set keeps the unit it is not given, show lists
// what is set, clear removes it; bad input exits 2 and changes nothing.
func TestBudgetCommands(t *testing.T) {
	data := t.TempDir()
	mustRun := func(args ...string) string {
		t.Helper()
		code, out, errOut := run(t, data, args...)
		if code != 0 {
			t.Fatalf("quiver %s: exit %d, %s", strings.Join(args, " "), code, errOut)
		}
		return out
	}
	if out := mustRun("budget", "set", "--tokens", "100000"); !strings.Contains(out, "budget of organisation: no limit, 100,000 tokens a month") {
		t.Errorf("set tokens: %q", out)
	}
	if out := mustRun("budget", "set", "--cost", "5.50"); !strings.Contains(out, "$5.50, 100,000 tokens") {
		t.Errorf("set cost keeps tokens: %q", out)
	}
	mustRun("budget", "set", "--default", "--cost", "$1")
	for _, bad := range [][]string{
		{"budget", "set", "--tokens", "-1"},
		{"budget", "set", "--tokens", "1e3"},
		{"budget", "set", "--cost", "1.0000001"},
		{"budget", "set"},
		{"budget", "set", "--user", "nobody", "--tokens", "5"},
		{"budget", "set", "--user", "x", "--default", "--tokens", "5"},
		{"budget", "show", "extra"},
	} {
		if code, _, errOut := run(t, data, bad...); code != 2 || errOut == "" {
			t.Errorf("quiver %s: exit %d (%q), want 2 with a message", strings.Join(bad, " "), code, errOut)
		}
	}
	var rows []struct {
		Who        string
		CostMicros int64 `json:"cost_micros"`
		Tokens     int64
		Spent      *struct{ Tokens int64 }
	}
	if err := json.Unmarshal([]byte(mustRun("budget", "show", "--json")), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Who != "organisation" || rows[0].CostMicros != 5_500_000 || rows[0].Tokens != 100_000 || rows[0].Spent == nil ||
		rows[1].Who != "default" || rows[1].CostMicros != 1_000_000 || rows[1].Spent != nil {
		t.Errorf("show = %+v", rows)
	}
	mustRun("budget", "clear")
	if out := mustRun("budget", "show"); strings.Contains(out, "organisation") && !strings.Contains(out, "default") {
		t.Errorf("show after clear: %q", out)
	} else if strings.Count(out, "\n") != 3 {
		t.Errorf("show after clear = %q, want the header, the columns and the default alone", out)
	}
}
