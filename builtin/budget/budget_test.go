package budget_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	bb "github.com/quiverhq/quiver/builtin/budget"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

var now = time.Date(2026, 12, 3, 16, 0, 0, 0, time.UTC)

func TestRequiresItsSwitch(t *testing.T) {
	for sw, want := range map[string]string{"": "budget switch off", "memory": "budget switch off", "budget": ""} {
		sel := turn.Selection{Switches: map[string]bool{sw: true}}
		if got := bb.Requires(sel); got != want {
			t.Errorf("Requires with %q on = %q, want %q", sw, got, want)
		}
	}
	if got := bb.Requires(turn.Selection{Switches: map[string]bool{"budget": false}}); got != "budget switch off" {
		t.Errorf("Requires with budget set off = %q", got)
	}
}

// TestCheckBudget: the person's and the organisation's spend this month
// (not last month's, not another organisation's), each limit with what
// is left, and whether the person's is the default; the scope comes
// from the turn alone (the tool takes no arguments).
func TestCheckBudget(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	put := func(org, user, turn string, tokens, micros int64, at time.Time) {
		t.Helper()
		err := st.PutUsage(ctx, store.Usage{OrgID: org, UserID: user, TurnID: turn, Step: 1, Model: "m",
			InputTokens: tokens - tokens/4, OutputTokens: tokens / 4, CostMicros: micros, CreatedAt: at})
		if err != nil {
			t.Fatal(err)
		}
	}
	put("acme", "ana", "t1", 12_000, 1_250_000, now.Add(-time.Hour))
	put("acme", "ana", "t0", 99_000, 9_000_000, time.Date(2026, 11, 30, 23, 0, 0, 0, time.UTC)) // last month
	put("acme", "bo", "t2", 8_000, 750_000, now.Add(-2*time.Hour))
	put("other", "ana", "t3", 1_000_000, 0, now.Add(-time.Hour))
	for _, b := range []store.Budget{
		{OrgID: "acme", UserID: store.BudgetEachPerson, CostMicros: 5_000_000, UpdatedAt: now},
		{OrgID: "acme", UserID: store.BudgetOrganisation, Tokens: 1_000_000, UpdatedAt: now},
	} {
		if err := st.PutBudget(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	tl := bb.Tool(st, func() time.Time { return now })
	res, err := tl.Run(ctx, tool.Scope{OrgID: "acme", UserID: "ana", ConversationID: "c", TurnID: "t"}, json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `Budget month: December 2026 (UTC), 1–31 December; it resets on 1 January 2027.
You: spent $1.25 and 12,000 tokens in 1 model call this month.
  Money (the organisation's budget for each person): $5.00, $3.75 left.
Your organisation: spent $2.00 and 20,000 tokens in 2 model calls this month.
  Tokens (the organisation's budget): 1,000,000 tokens, 980,000 tokens left.
Money counts models with configured prices; tokens (input and output) count every call.`
	if d := cmp.Diff(want, res.Content); d != "" {
		t.Errorf("check_budget (-want +got):\n%s", d)
	}
	// Arguments cannot name another person: there are none to give.
	if _, err := tl.Run(ctx, tool.Scope{OrgID: "acme", UserID: "ana"}, json.RawMessage(`{"user":"bo"}`)); err == nil {
		t.Error("an argument naming another person was accepted")
	}
	// Used up: said so.
	if err := st.PutBudget(ctx, store.Budget{OrgID: "acme", UserID: "ana", Tokens: 10_000, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	res, err = tl.Run(ctx, tool.Scope{OrgID: "acme", UserID: "ana"}, json.RawMessage(`{}`))
	if err != nil || !strings.Contains(res.Content, "Tokens (your own budget): 10,000 tokens, 0 tokens left.") || !strings.Contains(res.Content, "A budget is used up") {
		t.Errorf("over budget: %q, %v", res.Content, err)
	}
}

func TestCheckBudgetWithoutStore(t *testing.T) {
	_, err := bb.Tool(nil, nil).Run(context.Background(), tool.Scope{OrgID: "acme", UserID: "ana"}, json.RawMessage(`{}`))
	if !errors.Is(err, store.ErrNoStore) {
		t.Errorf("without a store: %v, want ErrNoStore", err)
	}
}
