package deliberate_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/quiverhq/quiver/deliberate"
	"github.com/quiverhq/quiver/intent"
	"github.com/quiverhq/quiver/store/sqlite"
)

var start = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

func newService(t *testing.T) (*deliberate.Service, *sqlite.Store) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &deliberate.Service{Store: st, Now: func() time.Time { return start }}, st
}

func ptr[T any](v T) *T { return &v }

// TestNewTrigger: a trigger is normalised as the detector reads messages;
// unknown targets, regular expression syntax and over-long phrases are
// refused with the detector's own message.
func TestNewTrigger(t *testing.T) {
	tests := []struct {
		name, target, phrase string
		want                 deliberate.Trigger
		bad                  string // part of the refusal; "" for none
	}{
		{"Normalised", "calculator", "  Crunch   The NUMBERS ", deliberate.Trigger{Target: "calculator", Phrase: "crunch the numbers"}, ""},
		{"EveryTurn", "apps", "^", deliberate.Trigger{Target: "apps", Phrase: "^"}, ""},
		{"UnknownTarget", "teleport", "beam me", deliberate.Trigger{}, `unknown target "teleport"`},
		{"NoTarget", "", "beam me", deliberate.Trigger{}, `unknown target ""`},
		{"RegexpSyntax", "search", "a|b", deliberate.Trigger{}, "regular expression syntax"},
		{"TooLong", "image", strings.Repeat("x", intent.MaxCustomChars+1), deliberate.Trigger{}, fmt.Sprintf("at most %d characters", intent.MaxCustomChars)},
		{"Empty", "image", "   ", deliberate.Trigger{}, "empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := deliberate.NewTrigger(tc.target, tc.phrase)
			if tc.bad != "" {
				var inv *deliberate.InvalidError
				if !errors.As(err, &inv) || !strings.Contains(inv.Msg, tc.bad) {
					t.Fatalf("%v, want an *InvalidError saying %q", err, tc.bad)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// TestTriggers: added triggers are stored normalised and listed in order;
// a repeat, a full target and a missing trigger are refused naming the
// trigger, and bad input writes nothing.
func TestTriggers(t *testing.T) {
	ctx := context.Background()
	svc, _ := newService(t)
	got, err := svc.AddTrigger(ctx, "org_a", "image", " PFP ")
	if err != nil || got != (deliberate.Trigger{Target: "image", Phrase: "pfp"}) {
		t.Fatalf("add: %+v, %v", got, err)
	}
	_, err = svc.AddTrigger(ctx, "org_a", "image", "pfp")
	if !errors.Is(err, deliberate.ErrTriggerExists) || err.Error() != `"pfp" is already a image trigger` {
		t.Errorf("a repeat: %v, want ErrTriggerExists naming it", err)
	}
	for i := 1; i < intent.MaxCustomPerTarget; i++ {
		if _, err := svc.AddTrigger(ctx, "org_a", "image", fmt.Sprintf("pic %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	_, err = svc.AddTrigger(ctx, "org_a", "image", "one more")
	if want := fmt.Sprintf("image already has %d custom triggers (the limit)", intent.MaxCustomPerTarget); !errors.Is(err, deliberate.ErrTriggerLimit) || err.Error() != want {
		t.Errorf("a full target: %v, want ErrTriggerLimit saying %q", err, want)
	}
	if _, err := svc.AddTrigger(ctx, "org_a", "teleport", "beam"); !errors.As(err, new(*deliberate.InvalidError)) {
		t.Errorf("an unknown target: %v, want an *InvalidError", err)
	}
	ts, err := svc.Triggers(ctx, "org_a")
	if err != nil || len(ts) != intent.MaxCustomPerTarget || ts[0] != (deliberate.Trigger{Target: "image", Phrase: "pfp"}) {
		t.Fatalf("listed %+v, %v; want the %d image triggers, pfp first", ts, err, intent.MaxCustomPerTarget)
	}
	if other, err := svc.Triggers(ctx, "org_b"); err != nil || len(other) != 0 || other == nil {
		t.Errorf("another organisation's triggers: %#v, %v; want an empty list", other, err)
	}
	if _, err := svc.RemoveTrigger(ctx, "org_a", "image", "PFP"); err != nil {
		t.Errorf("remove, as typed before normalising: %v", err)
	}
	_, err = svc.RemoveTrigger(ctx, "org_a", "image", "pfp")
	if !errors.Is(err, deliberate.ErrNoTrigger) || err.Error() != `no image trigger "pfp"` {
		t.Errorf("remove twice: %v, want ErrNoTrigger naming it", err)
	}
	if _, err := svc.AddTrigger(ctx, "org_a", "image", "pfp"); err != nil {
		t.Errorf("add after removing, below the limit: %v", err)
	}
}

// TestCustomCompiles: stored triggers compile into what the detector
// reads: a custom phrase opens its target, "^" opens it on every turn.
func TestCustomCompiles(t *testing.T) {
	ctx := context.Background()
	svc, _ := newService(t)
	for _, tr := range []deliberate.Trigger{{Target: "image", Phrase: "pfp"}, {Target: "apps", Phrase: "^"}} {
		if _, err := svc.AddTrigger(ctx, "org_a", tr.Target, tr.Phrase); err != nil {
			t.Fatal(err)
		}
	}
	custom, err := svc.Custom(ctx, "org_a")
	if err != nil {
		t.Fatal(err)
	}
	packs, err := intent.BuiltinPacks()
	if err != nil {
		t.Fatal(err)
	}
	res := intent.New(packs).Detect(intent.Input{Text: "new pfp pls", Custom: custom})
	if diff := cmp.Diff([]string{"apps", "image"}, res.Targets, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("targets (-want +got):\n%s", diff)
	}
}

// TestUpdate: a change keeps what it leaves out, a depth out of range is
// refused with nothing written, and -1 is the default depth.
func TestUpdate(t *testing.T) {
	ctx := context.Background()
	svc, st := newService(t)
	if s, err := svc.Settings(ctx, "org_a"); err != nil || s.Enabled || s.HistoryTurns != -1 || s.GateAlwaysOn || s.Depth() != intent.DefaultHistoryTurns {
		t.Fatalf("defaults: %+v, %v", s, err)
	}
	steps := []struct {
		name string
		c    deliberate.Change
		want deliberate.Settings
	}{
		{"On", deliberate.Change{Enabled: true, HistoryTurns: ptr(3), GateAlwaysOn: ptr(true)},
			deliberate.Settings{OrgID: "org_a", Enabled: true, HistoryTurns: 3, GateAlwaysOn: true}},
		{"OffKeepsTheRest", deliberate.Change{Enabled: false},
			deliberate.Settings{OrgID: "org_a", Enabled: false, HistoryTurns: 3, GateAlwaysOn: true}},
		{"DefaultDepth", deliberate.Change{Enabled: true, HistoryTurns: ptr(-1)},
			deliberate.Settings{OrgID: "org_a", Enabled: true, HistoryTurns: -1, GateAlwaysOn: true}},
	}
	for _, step := range steps {
		got, err := svc.Update(ctx, "org_a", step.c)
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		stored, err := svc.Settings(ctx, "org_a")
		if err != nil {
			t.Fatal(err)
		}
		for what, s := range map[string]deliberate.Settings{"answered": got, "stored": stored} {
			if diff := cmp.Diff(step.want, s); diff != "" {
				t.Errorf("%s: %s (-want +got):\n%s", step.name, what, diff)
			}
		}
	}
	for _, n := range []int{-2, intent.MaxHistoryTurns + 1} {
		_, err := svc.Update(ctx, "org_a", deliberate.Change{Enabled: false, HistoryTurns: ptr(n)})
		var inv *deliberate.InvalidError
		if !errors.As(err, &inv) || !strings.Contains(inv.Msg, "use 0–10, or -1 for the default") {
			t.Errorf("depth %d: %v, want an *InvalidError", n, err)
		}
	}
	if s, err := st.GetIntentSettings(ctx, "org_a"); err != nil || !s.Enabled || s.HistoryTurns != -1 || !s.UpdatedAt.Equal(start) {
		t.Errorf("stored after refused changes: %+v, %v; want the last saved", s, err)
	}
}

// TestUserMode: a user's mode is off, follow or on (read leniently, as
// the CLI types it), follow when none is stored, and each user's own.
func TestUserMode(t *testing.T) {
	ctx := context.Background()
	svc, _ := newService(t)
	if m, err := svc.UserMode(ctx, "org_a", "bob"); err != nil || m != intent.UserFollow {
		t.Fatalf("default: %q, %v", m, err)
	}
	if m, err := svc.SetUserMode(ctx, "org_a", "bob", " OFF "); err != nil || m != intent.UserOff {
		t.Fatalf("set: %q, %v", m, err)
	}
	if _, err := svc.SetUserMode(ctx, "org_a", "bob", "sometimes"); !errors.As(err, new(*deliberate.InvalidError)) {
		t.Errorf("a bad mode: %v, want an *InvalidError", err)
	}
	for user, want := range map[string]string{"bob": intent.UserOff, "alice": intent.UserFollow} {
		if m, err := svc.UserMode(ctx, "org_a", user); err != nil || m != want {
			t.Errorf("%s: %q, %v; want %q", user, m, err, want)
		}
	}
}
