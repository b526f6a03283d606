package sqlite

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/store"
)

// TestIntentRefusals checks the arguments outside the contract are
// refused and write nothing: the store, not only the intent package above
// it, bounds what it holds.
func TestIntentRefusals(t *testing.T) {
	s := openTest(t, t.TempDir())
	now := time.Now()
	tests := []struct {
		name string
		call func(context.Context) error
	}{
		{"HistoryTurnsBelow", func(ctx context.Context) error {
			return s.PutIntentSettings(ctx, store.IntentSettings{OrgID: "org", Enabled: true, HistoryTurns: -2, UpdatedAt: now})
		}},
		{"HistoryTurnsAbove", func(ctx context.Context) error {
			return s.PutIntentSettings(ctx, store.IntentSettings{OrgID: "org", Enabled: true, HistoryTurns: 11, UpdatedAt: now})
		}},
		{"EmptyTarget", func(ctx context.Context) error {
			return s.AddIntentTrigger(ctx, store.IntentTrigger{OrgID: "org", Phrase: "look it up", CreatedAt: now}, 0)
		}},
		{"EmptyPhrase", func(ctx context.Context) error {
			return s.AddIntentTrigger(ctx, store.IntentTrigger{OrgID: "org", Target: "search", CreatedAt: now}, 0)
		}},
		{"EmptyOpenTarget", func(ctx context.Context) error {
			_, err := s.OpenIntentTargets(ctx, "org", "conv", []string{"search", ""})
			return err
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.call(t.Context()); err == nil {
				t.Errorf("%s succeeded, want an error", tc.name)
			}
			wantNoIntents(t, s)
		})
	}
}

// wantNoIntents fails unless the organisation "org" holds no Intents
// state.
func wantNoIntents(t *testing.T, s *Store) {
	t.Helper()
	ctx := t.Context()
	set, err := s.GetIntentSettings(ctx, "org")
	if want := (store.IntentSettings{OrgID: "org", HistoryTurns: -1}); err != nil || !cmp.Equal(set, want) {
		t.Errorf("GetIntentSettings = %+v, %v; want %+v, nil", set, err, want)
	}
	trigs, err := s.ListIntentTriggers(ctx, "org")
	if err != nil || len(trigs) != 0 {
		t.Errorf("ListIntentTriggers = %+v, %v; want none", trigs, err)
	}
	open, err := s.OpenIntentTargets(ctx, "org", "conv", nil)
	if err != nil || len(open) != 0 {
		t.Errorf("OpenIntentTargets read = %q, %v; want none", open, err)
	}
}

// TestIntentSchemaChecks checks the schema's backstops for the values the
// store refuses, for a write that skipped the store's checks.
func TestIntentSchemaChecks(t *testing.T) {
	s := openTest(t, t.TempDir())
	tests := []struct {
		name    string
		q       string
		wantErr bool
	}{
		{"HistoryTurnsInRange", `INSERT INTO intent_settings VALUES ('a', 1, 10, '', 0, NULL)`, false},
		{"HistoryTurnsAbove", `INSERT INTO intent_settings VALUES ('b', 1, 11, '', 0, NULL)`, true},
		{"HistoryTurnsBelow", `INSERT INTO intent_settings VALUES ('c', 1, -2, '', 0, NULL)`, true},
		{"GateAlwaysOn", `INSERT INTO intent_settings VALUES ('d', 1, 4, '', 1, NULL)`, false},
		{"GateAlwaysOnDefault", `INSERT INTO intent_settings (org_id, enabled, history_turns, updated_at) VALUES ('e', 1, 4, '')`, false},
		{"GateAlwaysOnNotABool", `INSERT INTO intent_settings VALUES ('f', 1, 4, '', 2, NULL)`, true},
		{"GateAlwaysOnNull", `INSERT INTO intent_settings VALUES ('g', 1, 4, '', NULL, NULL)`, true},
		{"ClassifierShiftInRange", `INSERT INTO intent_settings VALUES ('h', 1, 4, '', 0, -50)`, false},
		{"ClassifierShiftAbove", `INSERT INTO intent_settings VALUES ('i', 1, 4, '', 0, 51)`, true},
		{"ClassifierShiftBelow", `INSERT INTO intent_settings VALUES ('j', 1, 4, '', 0, -51)`, true},
		{"Mode", `INSERT INTO intent_user_modes VALUES ('org', 'u1', 'on')`, false},
		{"BadMode", `INSERT INTO intent_user_modes VALUES ('org', 'u2', 'auto')`, true},
		{"EmptyTriggerTarget", `INSERT INTO intent_triggers VALUES ('org', '', 'x', '')`, true},
		{"EmptyPhrase", `INSERT INTO intent_triggers VALUES ('org', 'search', '', '')`, true},
		{"Target", `INSERT INTO conversation_intent_targets VALUES ('org', 'c', 'search', 0)`, false},
		{"TargetTwice", `INSERT INTO conversation_intent_targets VALUES ('org', 'c', 'search', 1)`, true},
		{"PositionTwice", `INSERT INTO conversation_intent_targets VALUES ('org', 'c', 'image', 0)`, true},
		{"EmptyOpenTarget", `INSERT INTO conversation_intent_targets VALUES ('org', 'c', '', 2)`, true},
	}
	for _, tc := range tests {
		_, err := s.writer.ExecContext(t.Context(), tc.q)
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: err = %v, want error %v", tc.name, err, tc.wantErr)
		}
	}
}
