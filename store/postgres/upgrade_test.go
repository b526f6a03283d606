package postgres

import (
	"io/fs"
	"slices"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/quiverhq/quiver/internal/pgtest"
)

// migrationsUpTo is the embedded migrations up to version last, as a
// build that knew no later one had them.
func migrationsUpTo(t *testing.T, last int) fs.FS {
	t.Helper()
	ms, err := loadMigrations(migrationFiles)
	if err != nil {
		t.Fatalf("loadMigrations: %v", err)
	}
	fsys := fstest.MapFS{}
	for _, m := range ms {
		if m.version <= last {
			fsys[migrationDir+"/"+m.name] = &fstest.MapFile{Data: []byte(m.sql)}
		}
	}
	return fsys
}

// upgradeFrom migrates a new database to version last, runs sql on it as
// that build would have written, and opens it with every migration.
func upgradeFrom(t *testing.T, last int, sql string, args ...any) *Store {
	t.Helper()
	url := pgtest.URL(t)
	pool, err := pgxpool.New(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := migrate(t.Context(), pool, migrationsUpTo(t, last)); err != nil {
		t.Fatalf("migrate to %04d: %v", last, err)
	}
	if _, err := pool.Exec(t.Context(), sql, args...); err != nil {
		t.Fatalf("write as %04d: %v", last, err)
	}
	pool.Close()
	return openTest(t, url)
}

// TestUpgradeMarksRefusals: migration 0007 marks the tool results stored
// before it that are the agent loop's refusals (they all began "Not run:
// "), and no other message.
func TestUpgradeMarksRefusals(t *testing.T) {
	at := time.Date(2025, time.May, 1, 2, 3, 4, 0, time.UTC)
	s := upgradeFrom(t, 6, `INSERT INTO messages (org_id, conversation_id, seq, turn_id, role, content,
			tool_name, tool_call_id, ref, is_error, created_at) VALUES
		('org', 'c', 1, 't', 'user', 'Not run: a user may write this', '', '', '', false, $1),
		('org', 'c', 2, 't', 'tool', 'Not run: this turn has used its limit of 64 tool calls; answer with what you have.', 'lookup', 'a', '', true, $1),
		('org', 'c', 3, 't', 'tool', 'found it', 'lookup', 'b', '', false, $1)`, at)
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

// TestUpgradeKeysUsageBySteps: migration 0008 keeps one usage record of
// each turn's step, the first stored, where an earlier build's retry had
// stored a step twice; records of other steps and turns stay.
func TestUpgradeKeysUsageBySteps(t *testing.T) {
	at := time.Date(2025, time.May, 1, 2, 3, 4, 0, time.UTC)
	s := upgradeFrom(t, 7, `INSERT INTO usage (org_id, conversation_id, turn_id, payer, model, step,
			input_tokens, cached_input_tokens, cache_write_tokens, output_tokens, cost_micros, created_at) VALUES
		('org', 'c', 't', 'p', 'm', 1, 10, 0, 0, 1, 0, $1),
		('org', 'c', 't', 'p', 'm', 1, 20, 0, 0, 2, 0, $1),
		('org', 'c', 't', 'p', 'm', 2, 30, 0, 0, 3, 0, $1),
		('org', 'c', 'u', 'p', 'm', 1, 40, 0, 0, 4, 0, $1)`, at)
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
}
