package deliberate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/deliberate"
	"github.com/quiverhq/quiver/intent"
)

// TestCommunity: an organisation that saved nothing reads as
// DefaultCommunity; one with settings and triggers gets its depth (the
// default for -1), its always-on choice and its compiled triggers.
func TestCommunity(t *testing.T) {
	ctx := context.Background()
	svc, _ := newService(t)
	packs, err := intent.BuiltinPacks()
	if err != nil {
		t.Fatal(err)
	}
	det := intent.New(packs)
	got, err := svc.Community(ctx, "org_a")
	if err != nil {
		t.Fatal(err)
	}
	if want := deliberate.DefaultCommunity(); got.HistoryTurns != want.HistoryTurns || got.GateAlwaysOn {
		t.Errorf("nothing saved: %+v, want depth %d, helpers kept", got, want.HistoryTurns)
	}
	if res := det.Detect(intent.Input{Text: "new pfp pls", Custom: got.Custom}); res.Has(intent.Image) {
		t.Errorf("nothing saved, yet a custom trigger opened image: %+v", res)
	}
	if d := deliberate.DefaultCommunity(); d.HistoryTurns != intent.DefaultHistoryTurns || d.Custom != nil || d.GateAlwaysOn {
		t.Errorf("DefaultCommunity() = %+v", d)
	}
	if _, err := svc.AddTrigger(ctx, "org_a", "image", "pfp"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		history, want int
	}{{3, 3}, {-1, intent.DefaultHistoryTurns}} {
		if _, err := svc.Update(ctx, "org_a", deliberate.Change{Enabled: true, HistoryTurns: ptr(c.history), GateAlwaysOn: ptr(true)}); err != nil {
			t.Fatal(err)
		}
		got, err := svc.Community(ctx, "org_a")
		if err != nil {
			t.Fatal(err)
		}
		if got.HistoryTurns != c.want || !got.GateAlwaysOn {
			t.Errorf("history %d: %+v, want depth %d and the helpers gated", c.history, got, c.want)
		}
		if res := det.Detect(intent.Input{Text: "new pfp pls", Custom: got.Custom}); !res.Has(intent.Image) {
			t.Errorf("the community's trigger did not open image: %+v", res)
		}
	}
}

// TestRefused: invalid input and a write at odds with what is stored are
// refusals, wrapped or not; other failures are not.
func TestRefused(t *testing.T) {
	ctx := context.Background()
	svc, _ := newService(t)
	_, invalid := svc.AddTrigger(ctx, "org_a", "teleport", "beam")
	_, missing := svc.RemoveTrigger(ctx, "org_a", "image", "nope")
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"Invalid", invalid, true},
		{"NoTrigger", missing, true},
		{"Wrapped", fmt.Errorf("add: %w", invalid), true},
		{"Failure", errors.New("disk full"), false},
		{"Nil", nil, false},
	} {
		if got := deliberate.Refused(c.err); got != c.want {
			t.Errorf("%s: Refused(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}

// TestTriggerJSON: a trigger encodes as {"family", "phrase"}.
func TestTriggerJSON(t *testing.T) {
	b, err := json.Marshal([]deliberate.Trigger{{Target: "image", Phrase: "pfp"}})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(`[{"family":"image","phrase":"pfp"}]`, string(b)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

// TestSettingsSummary: the depth as stored, -1 named as the default,
// and the always-on choice in its word.
func TestSettingsSummary(t *testing.T) {
	for _, tc := range []struct {
		s    deliberate.Settings
		want string
	}{
		{deliberate.Settings{HistoryTurns: -1}, fmt.Sprintf("history: default %d; always-on helpers: keep", intent.DefaultHistoryTurns)},
		{deliberate.Settings{HistoryTurns: 0, GateAlwaysOn: true}, "history: 0; always-on helpers: gate"},
		{deliberate.Settings{HistoryTurns: 7}, "history: 7; always-on helpers: keep"},
	} {
		if got := tc.s.Summary(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.s, got, tc.want)
		}
	}
}
