package budget_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/quiverhq/quiver/budget"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
	"github.com/quiverhq/quiver/turn"
)

// BenchmarkGuardCheck is the check before every model call of a turn
// held to both budgets, on SQLite, in an organisation whose month holds
// rows usage records across 20 people (the person's are a twentieth).
func BenchmarkGuardCheck(b *testing.B) {
	for _, rows := range []int{1_000, 50_000} {
		b.Run(fmt.Sprint("rows=", rows), func(b *testing.B) {
			ctx := context.Background()
			st, err := sqlite.Open(ctx, b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			now := time.Date(2026, 12, 20, 12, 0, 0, 0, time.UTC)
			for i := range rows {
				u := store.Usage{OrgID: "acme", UserID: fmt.Sprint("user_", i%20), TurnID: fmt.Sprint("turn_", i), Step: 1, Model: "m",
					InputTokens: 1000, OutputTokens: 100, CostMicros: 50, CreatedAt: now.Add(-time.Duration(i) * time.Second)}
				if err := st.PutUsage(ctx, u); err != nil {
					b.Fatal(err)
				}
			}
			g := budget.Guard{Store: st, Now: func() time.Time { return now }}
			f := turn.Facts{Place: turn.Place{OrgID: "acme"}, Caller: turn.Caller{UserID: "user_3"},
				Budget: turn.Budget{User: turn.Limit{Tokens: 1 << 40}, Org: turn.Limit{CostMicros: 1 << 40}}}
			b.ResetTimer()
			for b.Loop() {
				if err := g.Check(ctx, f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
