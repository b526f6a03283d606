package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/intent"
)

// TestDeliberateSettings: an admin turns Deliberate Tool Mode on, adds
// and removes custom triggers (normalised, refused when repeated or for an
// unknown target), and another organisation sees none of it; each user
// sets their own override.
func TestDeliberateSettings(t *testing.T) {
	f := newFixture(t, nil)
	var d httpapi.Deliberate
	f.ok(f.do(f.alice, "GET", "/api/deliberate", nil), http.StatusOK, &d)
	if d.Enabled || d.HistoryTurns != -1 || len(d.Triggers) != 0 || !slices.Contains(d.Targets, "calculator") || d.MaxTriggers == 0 {
		t.Fatalf("defaults: %+v", d)
	}
	f.ok(f.do(f.alice, "PUT", "/api/deliberate", map[string]any{"enabled": true, "history_turns": 3}), http.StatusOK, &d)
	if !d.Enabled || d.HistoryTurns != 3 {
		t.Fatalf("after PUT: %+v", d)
	}
	wantError(t, f.do(f.alice, "PUT", "/api/deliberate", map[string]any{"enabled": true, "history_turns": 11}), http.StatusBadRequest, "invalid_request")

	var tr httpapi.Trigger
	f.ok(f.do(f.alice, "POST", "/api/deliberate/triggers", map[string]any{"target": "calculator", "phrase": "  Crunch   The Numbers "}), http.StatusCreated, &tr)
	if tr.Target != "calculator" || tr.Phrase == "" || tr.Phrase == "  Crunch   The Numbers " {
		t.Fatalf("added %+v, want the normalised phrase", tr)
	}
	wantError(t, f.do(f.alice, "POST", "/api/deliberate/triggers", map[string]any{"target": "calculator", "phrase": tr.Phrase}), http.StatusConflict, "trigger_exists")
	wantError(t, f.do(f.alice, "POST", "/api/deliberate/triggers", map[string]any{"target": "teleport", "phrase": "beam me"}), http.StatusBadRequest, "invalid_request")
	f.ok(f.do(f.alice, "GET", "/api/deliberate", nil), http.StatusOK, &d)
	if len(d.Triggers) != 1 || d.Triggers[0] != tr {
		t.Fatalf("triggers %+v, want [%+v]", d.Triggers, tr)
	}
	var other httpapi.Deliberate
	f.ok(f.do(f.dave, "GET", "/api/deliberate", nil), http.StatusOK, &other)
	if other.Enabled || len(other.Triggers) != 0 {
		t.Fatalf("org_b sees org_a's settings: %+v", other)
	}
	wantError(t, f.do(f.dave, "DELETE", "/api/deliberate/triggers?target=calculator&phrase="+url.QueryEscape(tr.Phrase), nil), http.StatusNotFound, "not_found")
	f.ok(f.do(f.alice, "DELETE", "/api/deliberate/triggers?target=calculator&phrase="+url.QueryEscape(tr.Phrase), nil), http.StatusNoContent, nil)
	wantError(t, f.do(f.alice, "DELETE", "/api/deliberate/triggers?target=calculator&phrase="+url.QueryEscape(tr.Phrase), nil), http.StatusNotFound, "not_found")

	var mine struct{ Mode string }
	f.ok(f.do(f.bob, "GET", "/api/me/deliberate", nil), http.StatusOK, &mine)
	if mine.Mode != "follow" {
		t.Fatalf("bob's default mode %q", mine.Mode)
	}
	f.ok(f.do(f.bob, "PUT", "/api/me/deliberate", map[string]any{"mode": "off"}), http.StatusOK, &mine)
	wantError(t, f.do(f.bob, "PUT", "/api/me/deliberate", map[string]any{"mode": "sometimes"}), http.StatusBadRequest, "invalid_request")
	f.ok(f.do(f.bob, "GET", "/api/me/deliberate", nil), http.StatusOK, &mine)
	if mine.Mode != "off" {
		t.Fatalf("bob's mode after PUT %q", mine.Mode)
	}
	f.ok(f.do(f.alice, "GET", "/api/me/deliberate", nil), http.StatusOK, &mine)
	if mine.Mode != "follow" {
		t.Fatalf("bob's override changed alice's: %q", mine.Mode)
	}
}

// TestDeliberateGateAlwaysOn: the organisation's opt-in to gating the
// always-on helpers too is off by default, set and cleared with PUT, kept
// by a PUT that leaves it out (a client that predates it), refused when it
// is not a boolean (nothing changes), and another organisation's own.
func TestDeliberateGateAlwaysOn(t *testing.T) {
	f := newFixture(t, nil)
	get := func(w *who) httpapi.Deliberate {
		t.Helper()
		var d httpapi.Deliberate
		f.ok(f.do(w, "GET", "/api/deliberate", nil), http.StatusOK, &d)
		return d
	}
	if d := get(f.alice); d.GateAlwaysOn {
		t.Fatalf("default: %+v, want the always-on helpers kept", d)
	}
	steps := []struct {
		name string
		body map[string]any
		want httpapi.Deliberate
	}{
		{"opt in", map[string]any{"enabled": true, "history_turns": 3, "gate_always_on": true},
			httpapi.Deliberate{Enabled: true, HistoryTurns: 3, GateAlwaysOn: true}},
		{"left out keeps it", map[string]any{"enabled": false, "history_turns": 2},
			httpapi.Deliberate{Enabled: false, HistoryTurns: 2, GateAlwaysOn: true}},
		{"opt out", map[string]any{"enabled": true, "history_turns": 2, "gate_always_on": false},
			httpapi.Deliberate{Enabled: true, HistoryTurns: 2, GateAlwaysOn: false}},
		{"opt in again", map[string]any{"enabled": true, "history_turns": -1, "gate_always_on": true},
			httpapi.Deliberate{Enabled: true, HistoryTurns: -1, GateAlwaysOn: true}},
	}
	for _, st := range steps {
		var put httpapi.Deliberate
		f.ok(f.do(f.alice, "PUT", "/api/deliberate", st.body), http.StatusOK, &put)
		for what, d := range map[string]httpapi.Deliberate{"PUT answer": put, "GET after": get(f.alice)} {
			if d.Enabled != st.want.Enabled || d.HistoryTurns != st.want.HistoryTurns || d.GateAlwaysOn != st.want.GateAlwaysOn {
				t.Errorf("%s: %s %+v, want enabled %v, history %d, gate_always_on %v",
					st.name, what, d, st.want.Enabled, st.want.HistoryTurns, st.want.GateAlwaysOn)
			}
		}
	}
	wantError(t, f.do(f.alice, "PUT", "/api/deliberate", map[string]any{"enabled": false, "history_turns": 0, "gate_always_on": "yes"}),
		http.StatusBadRequest, "invalid_request")
	wantError(t, f.do(f.bob, "PUT", "/api/deliberate", map[string]any{"enabled": false, "history_turns": 0, "gate_always_on": false}),
		http.StatusForbidden, "forbidden")
	if d := get(f.alice); !d.Enabled || d.HistoryTurns != -1 || !d.GateAlwaysOn {
		t.Errorf("after refused PUTs: %+v, want the last saved settings", d)
	}
	if d := get(f.dave); d.GateAlwaysOn || d.Enabled {
		t.Errorf("org_b sees org_a's opt-in: %+v", d)
	}
}

// TestDeliberateClassifierShift: an organisation's classifier shift is
// unset (null) by default, set by PUT (rounded to hundredths), kept by a
// PUT that leaves it out, cleared by classifier_shift_default, refused
// out of range or together with classifier_shift_default (nothing
// changes), and another organisation's own.
func TestDeliberateClassifierShift(t *testing.T) {
	f := newFixture(t, nil)
	get := func(w *who) httpapi.Deliberate {
		t.Helper()
		var d httpapi.Deliberate
		f.ok(f.do(w, "GET", "/api/deliberate", nil), http.StatusOK, &d)
		return d
	}
	shift := func(d httpapi.Deliberate) string {
		if d.ClassifierShift == nil {
			return "null"
		}
		return fmt.Sprintf("%.2f", *d.ClassifierShift)
	}
	if d := get(f.alice); d.ClassifierShift != nil {
		t.Fatalf("default shift %s, want null", shift(d))
	}
	steps := []struct {
		name string
		body map[string]any
		want string
	}{
		{"set", map[string]any{"enabled": true, "history_turns": 3, "classifier_shift": 0.123}, "0.12"},
		{"left out keeps it", map[string]any{"enabled": true, "history_turns": 3}, "0.12"},
		{"negative", map[string]any{"enabled": true, "history_turns": 3, "classifier_shift": -0.5}, "-0.50"},
		{"default", map[string]any{"enabled": true, "history_turns": 3, "classifier_shift_default": true}, "null"},
		{"again", map[string]any{"enabled": true, "history_turns": 3, "classifier_shift": 0.2}, "0.20"},
	}
	for _, st := range steps {
		var put httpapi.Deliberate
		f.ok(f.do(f.alice, "PUT", "/api/deliberate", st.body), http.StatusOK, &put)
		if got, after := shift(put), shift(get(f.alice)); got != st.want || after != st.want {
			t.Errorf("%s: PUT answered %s, GET after %s, want %s", st.name, got, after, st.want)
		}
	}
	for _, bad := range []map[string]any{
		{"enabled": true, "history_turns": 3, "classifier_shift": 0.6},
		{"enabled": true, "history_turns": 3, "classifier_shift": -0.51},
		{"enabled": true, "history_turns": 3, "classifier_shift": 0.1, "classifier_shift_default": true},
	} {
		if r := f.do(f.alice, "PUT", "/api/deliberate", bad); r.StatusCode < 400 || r.StatusCode >= 500 {
			t.Errorf("PUT %v: status %d, want a 4xx refusal", bad, r.StatusCode)
		}
	}
	if d := get(f.alice); shift(d) != "0.20" {
		t.Errorf("after refused PUTs the shift is %s, want 0.20", shift(d))
	}
	if d := get(f.dave); d.ClassifierShift != nil {
		t.Errorf("org_b sees org_a's shift: %s", shift(d))
	}
}

// TestTriggerRefusalMessages: the API refuses a trigger with the message
// quiver triggers prints for it (one validation in package deliberate):
// it names the trigger, the target, or the limit.
func TestTriggerRefusalMessages(t *testing.T) {
	f := newFixture(t, nil)
	message := func(r response) string {
		t.Helper()
		var body struct{ Error httpapi.ErrorInfo }
		if err := json.Unmarshal(r.body, &body); err != nil {
			t.Fatalf("body %s: %v", r.body, err)
		}
		return body.Error.Message
	}
	add := func(phrase string) response {
		return f.do(f.alice, "POST", "/api/deliberate/triggers", map[string]any{"target": "image", "phrase": phrase})
	}
	f.ok(add("PFP"), http.StatusCreated, nil)
	r := add("pfp")
	wantError(t, r, http.StatusConflict, "trigger_exists")
	if got, want := message(r), `"pfp" is already a image trigger`; got != want {
		t.Errorf("repeat: %q, want %q", got, want)
	}
	for i := 1; i < intent.MaxCustomPerTarget; i++ {
		f.ok(add(fmt.Sprintf("pic %d", i)), http.StatusCreated, nil)
	}
	r = add("one more")
	wantError(t, r, http.StatusConflict, "trigger_limit")
	if got, want := message(r), fmt.Sprintf("image already has %d custom triggers (the limit)", intent.MaxCustomPerTarget); got != want {
		t.Errorf("full: %q, want %q", got, want)
	}
	r = f.do(f.alice, "DELETE", "/api/deliberate/triggers?target=image&phrase=nope", nil)
	wantError(t, r, http.StatusNotFound, "not_found")
	if got, want := message(r), `no image trigger "nope"`; got != want {
		t.Errorf("remove: %q, want %q", got, want)
	}
}
