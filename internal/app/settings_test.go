package app_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/llm/llmtest"
)

// apiClient is a signed-in browser-like client of a running quiver serve.
type apiClient struct {
	t    *testing.T
	base string
	c    *http.Client
	csrf string
}

// signIn trades the first-start login link for a session.
func signIn(t *testing.T, s serving) *apiClient {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	a := &apiClient{t: t, base: s.base, c: &http.Client{Jar: jar}}
	resp, err := a.c.Get(s.login)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var me struct {
		CSRF string `json:"csrf_token"`
	}
	if code, body := a.do(http.MethodGet, "/api/me", nil); code != http.StatusOK || json.Unmarshal(body, &me) != nil || me.CSRF == "" {
		t.Fatalf("sign in: %d %s", code, body)
	}
	a.csrf = me.CSRF
	return a
}

// do sends a JSON request and returns the status and body.
func (a *apiClient) do(method, path string, body any) (int, []byte) {
	a.t.Helper()
	var r io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			a.t.Fatal(err)
		}
		r = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, a.base+path, r)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-CSRF-Token", a.csrf)
	resp, err := a.c.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// settingsView is the part of GET /api/settings the tests read.
type settingsView struct {
	Version      int64           `json:"version"`
	NetworkMode  string          `json:"network_mode"`
	NetworkModes []string        `json:"network_modes"`
	Switches     map[string]bool `json:"switches"`
	Keys         []struct {
		Name, Source string
		Set          bool
	} `json:"keys"`
}

func (v settingsView) key(name string) (set bool, source string) {
	for _, k := range v.Keys {
		if k.Name == name {
			return k.Set, k.Source
		}
	}
	return false, "missing"
}

// TestSettingsThroughServe saves an organisation's settings through the
// API of a real quiver serve and checks each takes effect: a model key
// stored in settings (never in the environment) connects the model and is
// what the provider receives, the key is never shown again, switches reach
// the prompt under the agent's own, the network mode cannot widen past
// the deployment's, stale saves conflict, and key rotation re-encrypts the
// stored key so a restart with only the new key still uses it.
func TestSettingsThroughServe(t *testing.T) {
	const orgKey = "sk-org-key-5f1e9c"
	model := llmtest.Start(t, llmtest.OpenAI{}, llmtest.Reply{Text: []string{"hello"}})
	dir := t.TempDir()
	oldKey := writeKeyFile(t, dir, "old.key", "old")
	cfg := writeConfig(t, dir, "secrets:\n  key_file: "+oldKey+"\n")
	data := filepath.Join(dir, "data")
	vars := map[string]string{"QUIVER_DATA": data, "OPENAI_BASE_URL": model.URL}
	s := startServeWith(t, vars, "--config", cfg)
	a := signIn(t, s)

	var st settingsView
	code, body := a.do(http.MethodGet, "/api/settings", nil)
	if code != http.StatusOK || json.Unmarshal(body, &st) != nil {
		t.Fatalf("GET settings: %d %s", code, body)
	}
	if st.Version != 0 || st.NetworkMode != "public" || strings.Join(st.NetworkModes, ",") != "public" {
		t.Fatalf("defaults of a public deployment: %+v", st)
	}
	if set, _ := st.key("openai_api_key"); set {
		t.Fatal("openai_api_key reads as set before anything stored it")
	}
	// No provider key anywhere: the agent's model is not connected.
	var ms struct {
		Connected bool   `json:"connected"`
		Help      string `json:"help"`
	}
	code, body = a.do(http.MethodGet, "/api/agents/assistant/model-status", nil)
	if code != http.StatusOK || json.Unmarshal(body, &ms) != nil || ms.Connected || ms.Help == "" {
		t.Fatalf("model status before a key: %d %s", code, body)
	}

	// A public deployment refuses self-hosted, writing nothing.
	update := map[string]any{
		"version": 0, "network_mode": "self-hosted", "switches": map[string]bool{"emoji_usage": true},
		"web": map[string]any{"exclude_providers": []string{}}, "set_keys": map[string]string{"openai_api_key": orgKey},
	}
	if code, body = a.do(http.MethodPut, "/api/settings", update); code != http.StatusBadRequest || !strings.Contains(string(body), "only public") {
		t.Fatalf("self-hosted on a public deployment: %d %s", code, body)
	}
	update["network_mode"] = "public"
	code, body = a.do(http.MethodPut, "/api/settings", update)
	if code != http.StatusOK || json.Unmarshal(body, &st) != nil {
		t.Fatalf("PUT settings: %d %s", code, body)
	}
	if set, src := st.key("openai_api_key"); !set || src != "settings" || st.Version != 1 || !st.Switches["emoji_usage"] {
		t.Fatalf("after save: %+v", st)
	}
	if strings.Contains(string(body), orgKey) {
		t.Fatal("the saved key was echoed")
	}
	// A save based on the old version conflicts.
	if code, body = a.do(http.MethodPut, "/api/settings", update); code != http.StatusConflict {
		t.Fatalf("stale save: %d %s", code, body)
	}

	// The stored key connects the model, and is what the provider sees.
	code, body = a.do(http.MethodGet, "/api/agents/assistant/model-status", nil)
	if code != http.StatusOK || json.Unmarshal(body, &ms) != nil || !ms.Connected {
		t.Fatalf("model status after a key: %d %s", code, body)
	}
	var conv struct{ ID string }
	if code, body = a.do(http.MethodPost, "/api/conversations", map[string]string{"agent": "assistant"}); code/100 != 2 || json.Unmarshal(body, &conv) != nil {
		t.Fatalf("create conversation: %d %s", code, body)
	}
	if code, body = a.do(http.MethodPost, "/api/conversations/"+conv.ID+"/messages", map[string]string{"message": "hi"}); code != http.StatusOK || !strings.Contains(string(body), `"done"`) {
		t.Fatalf("send: %d %s", code, body)
	}
	seen := model.Seen()
	if len(seen) != 1 || seen[0].Header.Get("Authorization") != "Bearer "+orgKey {
		t.Fatalf("the provider did not get the organisation's key: %d requests", len(seen))
	}
	// Every later read says only "set".
	for _, path := range []string{"/api/settings", "/api/tools", "/api/me"} {
		if _, body := a.do(http.MethodGet, path, nil); strings.Contains(string(body), orgKey) {
			t.Errorf("%s shows the key", path)
		}
	}

	// Organisation switches reach the prompt; the agent's own win.
	var in struct{ System string }
	agentDef := "name: shy\nmodel: openai:gpt-test\nprompt: |\n  {{if capability:emoji_usage}}EMOJI-ON{{else}}EMOJI-OFF{{/if}}\ntools: [calculate]\n"
	for _, tc := range []struct{ def, want string }{
		{agentDef, "EMOJI-ON"},
		{agentDef + "switches:\n  emoji_usage: false\n", "EMOJI-OFF"},
	} {
		if code, body = a.do(http.MethodPut, "/api/agents/shy", map[string]string{"definition": tc.def}); code/100 != 2 {
			t.Fatalf("put agent: %d %s", code, body)
		}
		if code, body = a.do(http.MethodPost, "/api/conversations", map[string]string{"agent": "shy"}); code/100 != 2 || json.Unmarshal(body, &conv) != nil {
			t.Fatalf("create conversation: %d %s", code, body)
		}
		code, body = a.do(http.MethodGet, "/api/conversations/"+conv.ID+"/inspect?message="+url.QueryEscape("hi"), nil)
		if code != http.StatusOK || json.Unmarshal(body, &in) != nil || !strings.Contains(in.System, tc.want) {
			t.Errorf("inspect: want %s in the system prompt: %d %s", tc.want, code, body)
		}
	}
	if code := s.stop(); code != 0 {
		t.Fatalf("serve exited %d", code)
	}

	// Without a key the server refuses to start over a stored key.
	noKey := writeConfig(t, t.TempDir(), "network:\n  mode: public\n")
	if code, _, stderr := runEnv(t, data, nil, "", "serve", "--addr", "127.0.0.1:0", "--config", noKey); code == 0 || !strings.Contains(stderr, "no encryption key") {
		t.Fatalf("serve with stored keys and no key: exit %d: %s", code, stderr)
	}
	// Rotation re-encrypts the settings key; the new key alone reads it.
	newKey := writeKeyFile(t, dir, "new.key", "new")
	both := writeConfig(t, dir, "secrets:\n  keys_env: QUIVER_TEST_KEYS\n")
	keys := keyLine(t, newKey) + "," + keyLine(t, oldKey)
	if code, out, stderr := runEnv(t, data, map[string]string{"QUIVER_TEST_KEYS": keys}, "", "secrets", "rotate", "--config", both); code != 0 || !strings.Contains(out, "1 settings key(s)") {
		t.Fatalf("rotate: exit %d: %s %s", code, out, stderr)
	}
	model2 := llmtest.Start(t, llmtest.OpenAI{}, llmtest.Reply{Text: []string{"again"}})
	vars["OPENAI_BASE_URL"] = model2.URL
	newCfg := writeConfig(t, t.TempDir(), "secrets:\n  key_file: "+newKey+"\n")
	s = startServeWith(t, vars, "--config", newCfg)
	code, out, stderr := runEnv(t, data, nil, "", "login-link", "--config", newCfg, "--addr", strings.TrimPrefix(s.base, "http://"))
	if code != 0 {
		t.Fatalf("login-link: exit %d: %s", code, stderr)
	}
	s.login = strings.TrimSpace(out)
	a = signIn(t, s)
	if code, body = a.do(http.MethodPost, "/api/conversations/"+conv.ID+"/messages", map[string]string{"message": "hi"}); code != http.StatusOK || !strings.Contains(string(body), `"done"`) {
		t.Fatalf("send after rotation: %d %s", code, body)
	}
	if seen := model2.Seen(); len(seen) != 1 || seen[0].Header.Get("Authorization") != "Bearer "+orgKey {
		t.Fatal("after rotation the provider did not get the organisation's key")
	}
	s.stop()
}

// keyLine is a key file's "id:BASE64" line.
func keyLine(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(raw))
}
