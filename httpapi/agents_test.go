package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/registry"
)

func TestAgents(t *testing.T) {
	f := newFixture(t, nil)
	def := "name: writer\nprompt: \"Write {{nope}}\"\n"

	var a httpapi.Agent
	f.ok(f.do(f.alice, "PUT", "/api/agents/writer", map[string]any{"definition": def}), http.StatusCreated, &a)
	want := httpapi.Agent{Name: "writer", Definition: def, CreatedAt: start, UpdatedAt: start, Warnings: []string{"prompt: unknown macro"}}
	if diff := cmp.Diff(want, a); diff != "" {
		t.Errorf("created (-want +got):\n%s", diff)
	}

	f.clock.Advance(time.Hour)
	def2 := "name: writer\nprompt: Write well.\n"
	f.ok(f.do(f.alice, "PUT", "/api/agents/writer", map[string]any{"definition": def2}), http.StatusOK, &a)
	want = httpapi.Agent{Name: "writer", Definition: def2, CreatedAt: start, UpdatedAt: start.Add(time.Hour)}
	if diff := cmp.Diff(want, a); diff != "" {
		t.Errorf("replaced (-want +got):\n%s", diff)
	}

	// Members read agents (they choose one to talk to); only admins write.
	f.ok(f.do(f.bob, "GET", "/api/agents/writer", nil), http.StatusOK, &a)
	want.Warnings = nil
	if diff := cmp.Diff(want, a); diff != "" {
		t.Errorf("read (-want +got):\n%s", diff)
	}
	var list struct{ Agents []httpapi.AgentSummary }
	f.ok(f.do(f.bob, "GET", "/api/agents", nil), http.StatusOK, &list)
	var names []string
	for _, ag := range list.Agents {
		names = append(names, ag.Name)
	}
	if diff := cmp.Diff([]string{"helper", "only-a", "writer"}, names); diff != "" {
		t.Errorf("org_a's agents (-want +got):\n%s", diff)
	}
	f.ok(f.do(f.dave, "GET", "/api/agents", nil), http.StatusOK, &list)
	if len(list.Agents) != 1 || list.Agents[0].Name != "helper" {
		t.Errorf("org_b sees %+v", list.Agents)
	}

	wantError(t, f.do(f.alice, "PUT", "/api/agents/other", map[string]any{"definition": def2}), http.StatusBadRequest, "name_mismatch")
	wantError(t, f.do(f.alice, "PUT", "/api/agents/writer", map[string]any{"definition": "name: [unclosed"}), http.StatusBadRequest, "invalid_agent")
	wantError(t, f.do(f.alice, "PUT", "/api/agents/writer", map[string]any{"definition": "prompt: hi\n"}), http.StatusBadRequest, "invalid_agent")
	wantError(t, f.do(f.alice, "PUT", "/api/agents/writer", map[string]any{}), http.StatusBadRequest, "invalid_request")
	f.ok(f.do(f.alice, "GET", "/api/agents/writer", nil), http.StatusOK, &a)
	if a.Definition != def2 {
		t.Errorf("a refused PUT changed the stored definition to %q", a.Definition)
	}

	// A second organisation's agent of the same name is its own.
	f.ok(f.do(f.dave, "PUT", "/api/agents/writer", map[string]any{"definition": "name: writer\n"}), http.StatusCreated, nil)
	f.ok(f.do(f.alice, "GET", "/api/agents/writer", nil), http.StatusOK, &a)
	if a.Definition != def2 {
		t.Error("org_b's PUT changed org_a's agent")
	}

	f.ok(f.do(f.alice, "DELETE", "/api/agents/writer", nil), http.StatusNoContent, nil)
	wantError(t, f.do(f.alice, "GET", "/api/agents/writer", nil), http.StatusNotFound, "not_found")
	wantError(t, f.do(f.alice, "DELETE", "/api/agents/writer", nil), http.StatusNotFound, "not_found")
	f.ok(f.do(f.dave, "GET", "/api/agents/writer", nil), http.StatusOK, nil)
}

func TestModelStatus(t *testing.T) {
	f := newFixture(t, nil)
	var st httpapi.ModelStatus
	f.ok(f.do(f.bob, "GET", "/api/agents/helper/model-status", nil), http.StatusOK, &st)
	if diff := cmp.Diff(httpapi.ModelStatus{Model: "fake:model", Connected: true}, st); diff != "" {
		t.Errorf("helper (-want +got):\n%s", diff)
	}
	f.ok(f.do(f.bob, "GET", "/api/agents/only-a/model-status", nil), http.StatusOK, &st)
	if st.Connected || st.Help == "" {
		t.Errorf("only-a %+v: want not connected, with help", st)
	}
	wantError(t, f.do(f.bob, "GET", "/api/agents/nope/model-status", nil), http.StatusNotFound, "not_found")
}

// TestAgentSaveAllowlistWarnings: the engine's allowlist warnings come
// back in the PUT response (entry, message, suggestion) and do not stop
// the save; reading the agent carries none.
func TestAgentSaveAllowlistWarnings(t *testing.T) {
	f := newFixture(t, nil)
	def := "name: searcher\nprompt: Search.\ntools: [web_serch, calculate]\n"
	r := f.do(f.alice, "PUT", "/api/agents/searcher", map[string]any{"definition": def})
	var a httpapi.Agent
	f.ok(r, http.StatusCreated, &a)
	want := []registry.Warning{{Entry: "web_serch", Message: `"web_serch" is not a tool or family name`, Suggestion: "web_search"}}
	if diff := cmp.Diff(want, a.AllowlistWarnings); diff != "" {
		t.Errorf("allowlist_warnings (-want +got):\n%s", diff)
	}
	var raw struct {
		AllowlistWarnings []map[string]string `json:"allowlist_warnings"`
	}
	r.json(t, &raw)
	if d := cmp.Diff([]map[string]string{{"entry": "web_serch", "message": `"web_serch" is not a tool or family name`, "suggestion": "web_search"}}, raw.AllowlistWarnings); d != "" {
		t.Errorf("wire form of allowlist_warnings (-want +got):\n%s", d)
	}
	f.ok(f.do(f.alice, "GET", "/api/agents/searcher", nil), http.StatusOK, &a)
	if a.Definition != def || a.AllowlistWarnings != nil {
		t.Errorf("stored agent %+v: want the definition saved, no warnings on read", a)
	}
	f.ok(f.do(f.alice, "PUT", "/api/agents/searcher", map[string]any{"definition": "name: searcher\ntools: [web_search]\n"}), http.StatusOK, nil)
	if r := f.do(f.alice, "PUT", "/api/agents/searcher", map[string]any{"definition": "name: searcher\ntools: [web_search]\n"}); strings.Contains(string(r.body), "allowlist_warnings") {
		t.Errorf("a clean allowlist's response names allowlist_warnings: %s", r.body)
	}
}
