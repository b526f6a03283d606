package httpapi_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/settings"
)

// settingsBody is a valid PUT /api/settings body made on version.
func settingsBody(version int64) map[string]any {
	return map[string]any{
		"version": version, "switches": map[string]bool{"web": true}, "network_mode": "public",
		"web": map[string]any{"disabled": false, "searxng_url": "", "iask_url": "", "duckduckgo_disabled": false, "exclude_providers": []string{}},
	}
}

func TestSettings(t *testing.T) {
	f := newFixture(t, nil)
	const key = "sk-test-9f8e7d6c5b4a39281706" // must never come back
	var bodies [][]byte
	do := func(method string, body any) response {
		r := f.do(f.alice, method, "/api/settings", body)
		bodies = append(bodies, r.body)
		return r
	}

	r := do("GET", nil)
	var st httpapi.Settings
	f.ok(r, http.StatusOK, &st)
	if st.Version != 0 || len(st.Keys) != 2 || st.Keys[0].Set {
		t.Errorf("fresh settings %+v", st)
	}
	if bytes.Contains(r.body, []byte("null")) {
		t.Errorf("lists and maps are null, want [] and {}: %s", r.body)
	}

	put := settingsBody(0)
	put["set_keys"] = map[string]string{"openai_api_key": key}
	f.ok(do("PUT", put), http.StatusOK, &st)
	want := httpapi.Settings{
		Version: 1, Switches: map[string]bool{"web": true}, SwitchNames: []string{"intent", "web"},
		SwitchInfo:  []httpapi.SwitchInfo{},
		NetworkMode: "public", NetworkModes: []string{"public", "self-hosted"},
		Web: httpapi.WebSettings{ExcludeProviders: []string{}},
		Keys: []httpapi.KeyState{
			{Name: "openai_api_key", Label: "OpenAI API key", Set: true, Source: "settings"},
			{Name: "brave_api_key", Label: "Brave Search API key"},
		},
		Connections: []httpapi.ConnectionState{}, ServerConnections: []string{},
		UpdatedAt: start,
	}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("saved (-want +got):\n%s", diff)
	}
	f.ok(do("GET", nil), http.StatusOK, &st)
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("read back (-want +got):\n%s", diff)
	}

	// A stale version writes nothing.
	stale := settingsBody(0)
	stale["set_keys"] = map[string]string{"brave_api_key": key}
	r = do("PUT", stale)
	wantError(t, r, http.StatusConflict, "conflict")
	if !strings.Contains(string(r.body), settings.ErrConflict.Error()) {
		t.Errorf("the conflict does not carry the settings' message: %s", r.body)
	}
	f.ok(do("GET", nil), http.StatusOK, &st)
	if st.Version != 1 || st.Keys[1].Set {
		t.Errorf("a stale write changed the settings: %+v", st)
	}

	// The engine's refusals and the schema's are 400s; neither echoes a key.
	for _, tc := range []struct {
		name string
		body map[string]any
	}{
		{"engine refuses the URL", with(settingsBody(1), "web", map[string]any{"disabled": false, "searxng_url": "ftp://x", "iask_url": "", "duckduckgo_disabled": false, "exclude_providers": []string{}})},
		{"unknown key name", with(settingsBody(1), "set_keys", map[string]string{"nope_api_key": key})},
		{"unknown network mode", with(with(settingsBody(1), "network_mode", "intranet"), "set_keys", map[string]string{"openai_api_key": key})},
		{"version missing", with(with(settingsBody(1), "version", nil), "set_keys", map[string]string{"openai_api_key": key})},
		{"unknown field", with(with(settingsBody(1), "openai_api_key", key), "set_keys", map[string]string{"openai_api_key": key})},
		{"negative version", with(settingsBody(-1), "set_keys", map[string]string{"openai_api_key": key})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := do("PUT", tc.body)
			wantError(t, r, http.StatusBadRequest, "invalid_request")
			if tc.name == "engine refuses the URL" && !strings.Contains(string(r.body), "searxng_url") {
				t.Errorf("the engine's message is not shown: %s", r.body)
			}
		})
	}
	wantError(t, do("PUT", with(settingsBody(1), "switches", map[string]bool{"boom": true})), http.StatusInternalServerError, "internal")

	clear := settingsBody(1)
	clear["clear_keys"] = []string{"openai_api_key"}
	f.ok(do("PUT", clear), http.StatusOK, &st)
	if st.Version != 2 || st.Keys[0].Set {
		t.Errorf("after clear_keys %+v", st)
	}

	for _, b := range bodies {
		if bytes.Contains(b, []byte(key)) {
			t.Errorf("a response echoes the key: %s", b)
		}
	}
	if strings.Contains(f.logs.String(), key) {
		t.Error("the log holds the key")
	}
}

// with returns m with k set to v (deleted when v is nil).
func with(m map[string]any, k string, v any) map[string]any {
	if v == nil {
		delete(m, k)
	} else {
		m[k] = v
	}
	return m
}
