package httpapi_test

import (
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/quiverhq/quiver/httpapi"
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
