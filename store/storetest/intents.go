package storetest

import (
	"context"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/store"
)

// intentCases checks the Intents repository.
func intentCases() []suiteCase {
	return []suiteCase{
		{"SettingsDefault", testIntentSettingsDefault},
		{"SettingsRoundTrip", testIntentSettingsRoundTrip},
		{"SettingsInvalid", testIntentSettingsInvalid},
		{"TriggerAdd", testIntentTriggerAdd},
		{"TriggerLimit", testIntentTriggerLimit},
		{"TriggerRemove", testIntentTriggerRemove},
		{"TriggerList", testIntentTriggerList},
		{"TriggerConcurrent", testIntentTriggerConcurrent},
		{"UserMode", testIntentUserMode},
		{"UserModeInvalid", testIntentUserModeInvalid},
		{"OpenTargets", testOpenTargets},
		{"OpenTargetsScope", testOpenTargetsScope},
		{"OpenTargetsConcurrent", testOpenTargetsConcurrent},
	}
}

// getSettings returns GetIntentSettings' answer, failing the test on error.
func (f *fixture) getSettings(t *testing.T, org string) store.IntentSettings {
	t.Helper()
	got, err := f.GetIntentSettings(t.Context(), org)
	if err != nil {
		t.Fatalf("GetIntentSettings: %v", err)
	}
	return got
}

// putSettings stores s, failing the test on error.
func (f *fixture) putSettings(t *testing.T, s store.IntentSettings) {
	t.Helper()
	if err := f.PutIntentSettings(t.Context(), s); err != nil {
		t.Fatalf("PutIntentSettings %+v: %v", s, err)
	}
}

// defaultSettings are the settings of an organisation that saved none.
func defaultSettings(org string) store.IntentSettings {
	return store.IntentSettings{OrgID: org, HistoryTurns: -1}
}

// testIntentSettingsDefault checks that an organisation that saved no
// settings gets the defaults, whatever other organisations saved.
func testIntentSettingsDefault(t *testing.T, f *fixture) {
	f.putSettings(t, store.IntentSettings{OrgID: f.id("other-org"), Enabled: true, HistoryTurns: 4, UpdatedAt: at(10)})
	for _, org := range []string{f.id("org"), f.id("other-org") + "/sub", strings.ToUpper(f.id("other-org"))} {
		if d := diff(defaultSettings(org), f.getSettings(t, org)); d != "" {
			t.Errorf("GetIntentSettings(%q) of an organisation that saved none (-want +got):\n%s", org, d)
		}
	}
}

// testIntentSettingsRoundTrip saves settings in turn and checks that each
// replaces the last (the always-on opt-in included, set and cleared apart
// from the toggle), comes back in UTC, and leaves another organisation's
// alone.
func testIntentSettingsRoundTrip(t *testing.T, f *fixture) {
	org, other := f.id("org"), f.id("other-org")
	theirs := store.IntentSettings{OrgID: other, Enabled: true, HistoryTurns: 7, GateAlwaysOn: true, UpdatedAt: at(5)}
	f.putSettings(t, theirs)
	shift := func(n int) *int { return &n }
	steps := []struct {
		name    string
		enabled bool
		history int
		gate    bool
		shift   *int
	}{
		{"First", true, 3, false, nil},
		{"GateAlwaysOn", true, 3, true, nil},
		{"Disable", false, 3, true, nil},
		{"Unset", false, -1, true, nil},
		{"KeepAlwaysOn", false, -1, false, nil},
		{"Zero", true, 0, false, nil},
		{"Max", true, 10, true, nil},
		{"ShiftUp", true, 10, true, shift(store.MaxClassifierShift)},
		{"ShiftDown", true, 10, true, shift(store.MinClassifierShift)},
		{"ShiftZero", true, 10, true, shift(0)},
		{"ShiftUnset", true, 10, true, nil},
	}
	for i, st := range steps {
		want := store.IntentSettings{OrgID: org, Enabled: st.enabled, HistoryTurns: st.history, GateAlwaysOn: st.gate, ClassifierShift: st.shift, UpdatedAt: at(10 + i)}
		f.putSettings(t, want)
		got := f.getSettings(t, org)
		if d := diff(want, got); d != "" {
			t.Errorf("%s: GetIntentSettings after PutIntentSettings (-want +got):\n%s", st.name, d)
		}
		wantUTC(t, st.name+": UpdatedAt", got.UpdatedAt)
	}
	if d := diff(theirs, f.getSettings(t, other)); d != "" {
		t.Errorf("the other organisation's settings changed (-want +got):\n%s", d)
	}
}

// testIntentSettingsInvalid: a re-scan depth or a classifier shift out
// of bounds is refused, and the settings stored before stay as they were.
func testIntentSettingsInvalid(t *testing.T, f *fixture) {
	org := f.id("org")
	shift := func(n int) *int { return &n }
	before := store.IntentSettings{OrgID: org, Enabled: true, HistoryTurns: 2, ClassifierShift: shift(10), UpdatedAt: at(1)}
	f.putSettings(t, before)
	for _, bad := range []store.IntentSettings{
		{OrgID: org, HistoryTurns: 11, UpdatedAt: at(2)},
		{OrgID: org, HistoryTurns: -2, UpdatedAt: at(2)},
		{OrgID: org, HistoryTurns: 3, ClassifierShift: shift(store.MaxClassifierShift + 1), UpdatedAt: at(2)},
		{OrgID: org, HistoryTurns: 3, ClassifierShift: shift(store.MinClassifierShift - 1), UpdatedAt: at(2)},
	} {
		if err := f.PutIntentSettings(t.Context(), bad); err == nil {
			t.Errorf("PutIntentSettings(%+v) accepted", bad)
		}
	}
	if d := diff(before, f.getSettings(t, org)); d != "" {
		t.Errorf("a refused write changed the settings (-want +got):\n%s", d)
	}
}

// getMode returns GetUserIntentMode's answer, failing the test on error.
func (f *fixture) getMode(t *testing.T, org, user string) string {
	t.Helper()
	got, err := f.GetUserIntentMode(t.Context(), org, user)
	if err != nil {
		t.Fatalf("GetUserIntentMode: %v", err)
	}
	return got
}

// testIntentUserMode sets a user's mode in turn and checks after each step
// that the user has it and that another user, and the same user in
// another organisation, keep theirs.
func testIntentUserMode(t *testing.T, f *fixture) {
	org, other := f.id("org"), f.id("other-org")
	user, peer := f.id("user"), f.id("peer")
	if got := f.getMode(t, org, user); got != "follow" {
		t.Errorf("GetUserIntentMode of a user who set none = %q, want follow", got)
	}
	if err := f.SetUserIntentMode(t.Context(), other, user, "off"); err != nil {
		t.Fatalf("SetUserIntentMode in the other organisation: %v", err)
	}
	for _, mode := range []string{"on", "off", "follow", "on", "on"} {
		if err := f.SetUserIntentMode(t.Context(), org, user, mode); err != nil {
			t.Fatalf("SetUserIntentMode(%q): %v", mode, err)
		}
		if got := f.getMode(t, org, user); got != mode {
			t.Errorf("GetUserIntentMode after SetUserIntentMode(%q) = %q", mode, got)
		}
		if got := f.getMode(t, org, peer); got != "follow" {
			t.Errorf("another user's mode = %q, want follow", got)
		}
		if got := f.getMode(t, other, user); got != "off" {
			t.Errorf("the user's mode in the other organisation = %q, want off", got)
		}
	}
}

// testIntentUserModeInvalid checks that a mode other than off, follow and
// on is refused and changes nothing, for a user with a stored mode and
// for one without.
func testIntentUserModeInvalid(t *testing.T, f *fixture) {
	org, set, unset := f.id("org"), f.id("set"), f.id("unset")
	if err := f.SetUserIntentMode(t.Context(), org, set, "on"); err != nil {
		t.Fatalf("SetUserIntentMode: %v", err)
	}
	for _, mode := range []string{"", "ON", "Follow", " off", "off ", "auto", "true"} {
		if err := f.SetUserIntentMode(t.Context(), org, set, mode); err == nil {
			t.Errorf("SetUserIntentMode(%q) succeeded, want an error", mode)
		}
		if err := f.SetUserIntentMode(t.Context(), org, unset, mode); err == nil {
			t.Errorf("SetUserIntentMode(%q) for a user without a mode succeeded, want an error", mode)
		}
	}
	if got := f.getMode(t, org, set); got != "on" {
		t.Errorf("mode after refused changes = %q, want on", got)
	}
	if got := f.getMode(t, org, unset); got != "follow" {
		t.Errorf("mode of a user without one after refused changes = %q, want follow", got)
	}
}

// intentWrites are the Intents records a cancelled write must not store.
type intentWrites struct {
	settings     store.IntentSettings
	trigger      store.IntentTrigger
	user, mode   string
	conversation string
	targets      []string
}

// newIntentWrites returns one record of each Intents kind in org.
func (f *fixture) newIntentWrites(org string) intentWrites {
	return intentWrites{
		settings:     store.IntentSettings{OrgID: f.id(org), Enabled: true, HistoryTurns: 3, GateAlwaysOn: true, UpdatedAt: at(10)},
		trigger:      f.newTrigger(org, "search", "look it up", 10),
		user:         f.id("user"),
		mode:         "on",
		conversation: f.id("conv"),
		targets:      []string{"search", "image"},
	}
}

// intentCalls returns a call of every Intents method on w's records;
// OpenIntentTargets twice, writing and only reading.
func intentCalls(f *fixture, w intentWrites) []call {
	org, tr := w.settings.OrgID, w.trigger
	return []call{
		{"GetIntentSettings", func(ctx context.Context) error { _, err := f.GetIntentSettings(ctx, org); return err }},
		{"PutIntentSettings", func(ctx context.Context) error { return f.PutIntentSettings(ctx, w.settings) }},
		{"AddIntentTrigger", func(ctx context.Context) error { return f.AddIntentTrigger(ctx, tr, 0) }},
		{"RemoveIntentTrigger", func(ctx context.Context) error {
			return f.RemoveIntentTrigger(ctx, tr.OrgID, tr.Target, tr.Phrase)
		}},
		{"ListIntentTriggers", func(ctx context.Context) error { _, err := f.ListIntentTriggers(ctx, org); return err }},
		{"GetUserIntentMode", func(ctx context.Context) error {
			_, err := f.GetUserIntentMode(ctx, org, w.user)
			return err
		}},
		{"SetUserIntentMode", func(ctx context.Context) error { return f.SetUserIntentMode(ctx, org, w.user, w.mode) }},
		{"OpenIntentTargets", func(ctx context.Context) error {
			_, err := f.OpenIntentTargets(ctx, org, w.conversation, w.targets)
			return err
		}},
		{"OpenIntentTargetsRead", func(ctx context.Context) error {
			_, err := f.OpenIntentTargets(ctx, org, w.conversation, nil)
			return err
		}},
	}
}

// wantNoIntentWritten checks that the cancelled Intents writes stored
// nothing.
func (f *fixture) wantNoIntentWritten(t *testing.T, w intentWrites) {
	org := w.settings.OrgID
	if d := diff(defaultSettings(org), f.getSettings(t, org)); d != "" {
		t.Errorf("cancelled PutIntentSettings stored settings (-want +got):\n%s", d)
	}
	if got := f.listTriggers(t, org); len(got) != 0 {
		t.Errorf("cancelled AddIntentTrigger stored %+v", got)
	}
	if got := f.getMode(t, org, w.user); got != "follow" {
		t.Errorf("cancelled SetUserIntentMode stored %q", got)
	}
	if got := f.openTargets(t, org, w.conversation, nil); len(got) != 0 {
		t.Errorf("cancelled OpenIntentTargets stored %q", got)
	}
}
