package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/store"
)

// Upgrade is one check of a migration that rewrites what older builds
// stored: the rows such a build wrote, then what the store answers once
// every migration ran. It is the same on every backend.
type Upgrade struct {
	// Name names the check's subtest.
	Name string
	// Migration is the checked migration's file name without its number
	// ("message_refused.sql"); the older build knew every migration
	// before it and not it.
	Migration string
	// Rows are what the older build wrote, in order.
	Rows []Rows
	// Check looks at what the store answers after the upgrade.
	Check func(t *testing.T, s store.Store)
}

// Rows are rows of one table, each row's values in the order of Columns.
// A value is a string, an int, a bool or a time.Time; a backend stores
// each as its column's type holds it (a time as it encodes times, a
// string in a binary column as its bytes).
type Rows struct {
	Table   string
	Columns []string
	Values  [][]any
}

// Insert is the INSERT statement of r and its arguments, in order; param
// writes the nth placeholder (from 1) as the backend's SQL does.
func (r Rows) Insert(param func(n int) string) (string, []any) {
	var b strings.Builder
	fmt.Fprintf(&b, "INSERT INTO %s (%s) VALUES ", r.Table, strings.Join(r.Columns, ", "))
	var args []any
	for i, row := range r.Values {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for j, v := range row {
			if j > 0 {
				b.WriteString(", ")
			}
			args = append(args, v)
			b.WriteString(param(len(args)))
		}
		b.WriteByte(')')
	}
	return b.String(), args
}

// RunUpgrades runs every check of Upgrades as a subtest of t. open returns
// a store opened, with every migration, on a new database that an older
// build (migrated to just before u.Migration) left holding u.Rows.
func RunUpgrades(t *testing.T, open func(t *testing.T, u Upgrade) store.Store) {
	for _, u := range Upgrades() {
		t.Run(u.Name, func(t *testing.T) { u.Check(t, open(t, u)) })
	}
}

// upgradeAt is when the older builds of Upgrades wrote their rows.
var upgradeAt = time.Date(2025, time.May, 1, 2, 3, 4, 0, time.UTC)

// Upgrades lists the upgrade checks.
func Upgrades() []Upgrade {
	messageCols := []string{"org_id", "conversation_id", "seq", "turn_id", "role", "content", "tool_name", "tool_call_id", "created_at"}
	return []Upgrade{{
		// The tool results stored before message_refused that are the
		// agent loop's refusals (they all began "Not run: ") are marked,
		// and no other message.
		Name: "MarksRefusals", Migration: "message_refused.sql",
		Rows: []Rows{{Table: "messages", Columns: slices.Concat(messageCols, []string{"ref", "is_error"}), Values: [][]any{
			{"org", "c", 1, "t", "user", "Not run: a user may write this", "", "", upgradeAt, "", false},
			{"org", "c", 2, "t", "tool", "Not run: this turn has used its limit of 64 tool calls; answer with what you have.", "lookup", "a", upgradeAt, "", true},
			{"org", "c", 3, "t", "tool", "found it", "lookup", "b", upgradeAt, "", false},
		}}},
		Check: checkRefusalsMarked,
	}, {
		// One usage record of each turn's step is kept, the first stored,
		// where an earlier build's retry had stored a step twice; records
		// of other steps and turns stay, and a negative step is refused
		// from then on.
		Name: "KeysUsageBySteps", Migration: "usage_step_key.sql",
		Rows: []Rows{{Table: "usage", Columns: []string{"org_id", "conversation_id", "turn_id", "payer", "model", "step",
			"input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens", "cost_micros", "created_at"}, Values: [][]any{
			{"org", "c", "t", "p", "m", 1, 10, 0, 0, 1, 0, upgradeAt},
			{"org", "c", "t", "p", "m", 1, 20, 0, 0, 2, 0, upgradeAt},
			{"org", "c", "t", "p", "m", 2, 30, 0, 0, 3, 0, upgradeAt},
			{"org", "c", "u", "p", "m", 1, 40, 0, 0, 4, 0, upgradeAt},
		}}},
		Check: checkUsageKeyedBySteps,
	}, {
		// A titled conversation and its messages written before
		// conversation search: the title and the user message become
		// searchable, folded as new ones are (a NUL and invalid UTF-8 in
		// the message included), and the assistant's text not.
		Name: "SearchesOlderMessages", Migration: "conversation_model_search.sql",
		Rows: []Rows{
			{Table: "conversations", Columns: []string{"org_id", "id", "user_id", "agent", "title", "created_at", "updated_at"}, Values: [][]any{
				{"org", "c", "u", "assistant", "CHUYẾN ĐI ĐÀ NẴNG", upgradeAt, upgradeAt},
			}},
			{Table: "messages", Columns: messageCols, Values: [][]any{
				{"org", "c", 1, "t", "user", "Tìm KHÁCH SẠN gần biển\x00\xff", "", "", upgradeAt},
				{"org", "c", 2, "t", "assistant", "unsearchable reply", "", "", upgradeAt},
			}},
		},
		Check: checkOlderMessagesSearched,
	}, {
		// Usage recorded before budgets counts against the owner of its
		// conversation, and, its conversation gone, against the
		// organisation's budget only.
		Name: "UsageOfPeople", Migration: "budgets.sql",
		Rows: []Rows{
			{Table: "conversations", Columns: []string{"org_id", "id", "user_id", "agent", "title", "created_at", "updated_at"}, Values: [][]any{
				{"org", "c", "u", "assistant", "", upgradeAt, upgradeAt},
				{"other-org", "c", "x", "assistant", "", upgradeAt, upgradeAt},
			}},
			{Table: "usage", Columns: []string{"org_id", "conversation_id", "turn_id", "payer", "model", "step",
				"input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens", "cost_micros", "created_at"}, Values: [][]any{
				{"org", "c", "t", "org", "m", 1, 10, 0, 0, 1, 5, upgradeAt},
				{"org", "", "gone", "org", "m", 1, 20, 0, 0, 2, 7, upgradeAt},
			}},
		},
		Check: checkUsageOfPeople,
	}}
}

func checkUsageOfPeople(t *testing.T, s store.Store) {
	for user, want := range map[string]int64{"u": 11, "": 33, "x": 0} {
		got, err := s.MonthSpend(t.Context(), "org", user, upgradeAt)
		if err != nil {
			t.Fatal(err)
		}
		if got.Tokens() != want {
			t.Errorf("MonthSpend(org, %q) = %d tokens, want %d", user, got.Tokens(), want)
		}
	}
}

func checkRefusalsMarked(t *testing.T, s store.Store) {
	got, err := s.ListMessages(t.Context(), "org", "c", 0)
	if err != nil || len(got) != 3 {
		t.Fatalf("ListMessages after the upgrade: %d messages, %v", len(got), err)
	}
	for i, want := range []bool{false, true, false} {
		if got[i].Refused != want {
			t.Errorf("message %d (%s %q): Refused %t, want %t", i+1, got[i].Role, got[i].Content, got[i].Refused, want)
		}
	}
}

func checkUsageKeyedBySteps(t *testing.T, s store.Store) {
	for turn, want := range map[string][]int64{"t": {10, 30}, "u": {40}} {
		got, err := s.ListUsage(t.Context(), "org", turn)
		if err != nil {
			t.Fatal(err)
		}
		var inputs []int64
		for _, u := range got {
			inputs = append(inputs, u.InputTokens)
		}
		if !slices.Equal(inputs, want) {
			t.Errorf("turn %s: records with input tokens %v, want %v", turn, inputs, want)
		}
	}
	if err := s.PutUsage(t.Context(), store.Usage{OrgID: "org", TurnID: "v", Step: -1}); err == nil {
		t.Error("a negative step was stored")
	}
}

func checkOlderMessagesSearched(t *testing.T, s store.Store) {
	for text, want := range map[string][]string{"khách sạn": {"c"}, "đà nẵng": {"c"}, "unsearchable": nil} {
		cs, err := s.FindConversations(t.Context(), store.ConversationQuery{OrgID: "org", UserID: "u", Text: text})
		var got []string
		for _, c := range cs {
			got = append(got, c.ID)
		}
		if err != nil || !cmp.Equal(want, got) {
			t.Errorf("search %q after the upgrade = %v, %v; want %v", text, got, err, want)
		}
	}
}
