package budget_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/quiverhq/quiver/budget"
	"github.com/quiverhq/quiver/store/sqlite"
	"github.com/quiverhq/quiver/turn"
)

// BenchmarkGuardCheck is the check before every model call of a turn
// held to both budgets, on SQLite, in an organisation whose month holds
// rows usage records across 20 people (the person's are a twentieth),
// read from the monthly totals, not the records.
func BenchmarkGuardCheck(b *testing.B) {
	for _, rows := range []int{1_000, 100_000} {
		b.Run(fmt.Sprint("rows=", rows), func(b *testing.B) {
			ctx := context.Background()
			dir := b.TempDir()
			st, err := sqlite.Open(ctx, dir)
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			now := time.Date(2026, 12, 20, 12, 0, 0, 0, time.UTC)
			fillUsage(b, filepath.Join(dir, sqlite.FileName), rows, now)
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

// fillUsage inserts rows usage records of the month before now into the
// SQLite file at path in one transaction, as PutUsage would write them
// (the trigger keeps the monthly totals), far faster than a write each.
func fillUsage(b *testing.B, path string, rows int, now time.Time) {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	for i := range rows {
		_, err := tx.Exec(`INSERT INTO usage (org_id, conversation_id, turn_id, payer, model, step, input_tokens,
				cached_input_tokens, cache_write_tokens, output_tokens, cost_micros, created_at, user_id)
			VALUES ('acme', '', ?, 'acme', 'm', 1, 1000, 0, 0, 100, 50, ?, ?)`,
			fmt.Sprint("turn_", i), now.Add(-time.Duration(i)*time.Second).UTC().Format("2006-01-02T15:04:05.000000000Z"), fmt.Sprint("user_", i%20))
		if err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}
