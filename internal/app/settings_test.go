package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/quiverhq/quiver/accounts"
	"github.com/quiverhq/quiver/internal/clock"
	"github.com/quiverhq/quiver/llm/llmtest"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
)

// apiClient is a signed-in browser-like client of a running quiver serve.
type apiClient struct {
	t    *testing.T
	base string
	c    *http.Client
	csrf string
}

// signIn trades the first-start login link for a session, through
// POST /api/login (following the link only shows a sign-in page).
func signIn(t *testing.T, s serving) *apiClient {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	a := &apiClient{t: t, base: s.base, c: &http.Client{Jar: jar}}
	link, err := url.Parse(s.login)
	if err != nil {
		t.Fatal(err)
	}
	if code, body := a.do(http.MethodPost, "/api/login", map[string]string{"token": link.Query().Get("token")}); code != http.StatusOK {
		t.Fatalf("sign in: %d %s", code, body)
	}
	var me struct {
		CSRF string `json:"csrf_token"`
	}
	if code, body := a.do(http.MethodGet, "/api/me", nil); code != http.StatusOK || json.Unmarshal(body, &me) != nil || me.CSRF == "" {
		t.Fatalf("sign in: %d %s", code, body)
	}
	a.csrf = me.CSRF
	return a
}

// newConversation creates a conversation with the agent and returns its id.
func (a *apiClient) newConversation(agent string) string {
	a.t.Helper()
	var conv struct{ ID string }
	if code, body := a.do(http.MethodPost, "/api/conversations", map[string]string{"agent": agent}); code/100 != 2 || json.Unmarshal(body, &conv) != nil {
		a.t.Fatalf("create conversation: %d %s", code, body)
	}
	return conv.ID
}

// firstTurnID returns the turn of the conversation's first stored message.
func (a *apiClient) firstTurnID(conv string) string {
	a.t.Helper()
	var msgs struct {
		Messages []struct {
			TurnID string `json:"turn_id"`
		} `json:"messages"`
	}
	if code, body := a.do(http.MethodGet, "/api/conversations/"+conv+"/messages", nil); code != http.StatusOK || json.Unmarshal(body, &msgs) != nil || len(msgs.Messages) == 0 || msgs.Messages[0].TurnID == "" {
		a.t.Fatalf("messages: %d %s", code, body)
	}
	return msgs.Messages[0].TurnID
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
	const newOrgKey = "sk-org-key-second-77a0"
	model := llmtest.Start(t, llmtest.OpenAI{}, llmtest.Reply{Text: []string{"hello"}}, llmtest.Reply{Text: []string{"hello again"}})
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
	// A new key takes over from the next turn on.
	update["version"], update["set_keys"] = st.Version, map[string]string{"openai_api_key": newOrgKey}
	if code, body = a.do(http.MethodPut, "/api/settings", update); code != http.StatusOK || json.Unmarshal(body, &st) != nil {
		t.Fatalf("change the key: %d %s", code, body)
	}
	if code, body = a.do(http.MethodPost, "/api/conversations/"+conv.ID+"/messages", map[string]string{"message": "again"}); code != http.StatusOK || !strings.Contains(string(body), `"done"`) {
		t.Fatalf("send with the new key: %d %s", code, body)
	}
	if seen := model.Seen(); len(seen) != 2 || seen[1].Header.Get("Authorization") != "Bearer "+newOrgKey {
		t.Fatal("the provider did not get the new key")
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
	code, out, stderr := runLive(t, data, nil, "", "login-link", "--config", newCfg, "--addr", strings.TrimPrefix(s.base, "http://"))
	if code != 0 {
		t.Fatalf("login-link: exit %d: %s", code, stderr)
	}
	s.login = strings.TrimSpace(out)
	a = signIn(t, s)
	if code, body = a.do(http.MethodPost, "/api/conversations/"+conv.ID+"/messages", map[string]string{"message": "hi"}); code != http.StatusOK || !strings.Contains(string(body), `"done"`) {
		t.Fatalf("send after rotation: %d %s", code, body)
	}
	if seen := model2.Seen(); len(seen) != 1 || seen[0].Header.Get("Authorization") != "Bearer "+newOrgKey {
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

// TestSettingsCeilingAndKeys runs a self-hosted deployment with its own
// IAsk endpoint and key: an organisation that points IAsk elsewhere never
// sends the deployment's key there; switching the organisation to public
// mode makes fetch_url refuse a loopback page without a request reaching
// it; and a second organisation sees none of the first's settings.
func TestSettingsCeilingAndKeys(t *testing.T) {
	const deploymentKey = "iask-deployment-secret"
	var mu sync.Mutex
	var auths []string
	hits := map[string]int{}
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		if r.URL.Path == "/iask" {
			auths = append(auths, r.Header.Get("Authorization"))
		}
		mu.Unlock()
		if r.URL.Path == "/iask" {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"answer":"forty-two","sources":[{"title":"src","url":"https://example.org/a"}]}`)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "a local page")
	}))
	defer fake.Close()
	count := func(path string) int { mu.Lock(); defer mu.Unlock(); return hits[path] }

	dir := t.TempDir()
	cfg := writeConfig(t, dir, "network:\n  mode: self-hosted\nsecrets:\n  key_file: "+writeKeyFile(t, dir, "k.key", "k")+
		"\nweb:\n  duckduckgo_disabled: true\n  iask_url: https://iask.invalid/api\n  iask_key_env: IASK_KEY\n")
	data := filepath.Join(dir, "data")
	s := startServeWith(t, map[string]string{"QUIVER_DATA": data, "IASK_KEY": deploymentKey}, "--config", cfg)
	a := signIn(t, s)
	def := "name: web\nmodel: openai:gpt-test\nprompt: Search.\ntools: [web_search, fetch_url]\n"
	if code, body := a.do(http.MethodPut, "/api/agents/web", map[string]string{"definition": def}); code/100 != 2 {
		t.Fatalf("put agent: %d %s", code, body)
	}
	var st settingsView
	if code, body := a.do(http.MethodGet, "/api/settings", nil); code != http.StatusOK || json.Unmarshal(body, &st) != nil {
		t.Fatalf("settings: %d %s", code, body)
	}
	if set, src := st.key("iask_api_key"); !set || src != "environment" || st.NetworkMode != "self-hosted" {
		t.Fatalf("deployment defaults: %+v", st)
	}
	save := func(mode, iaskURL string, ddgOff bool) (int, []byte) {
		return a.do(http.MethodPut, "/api/settings", map[string]any{
			"version": st.Version, "network_mode": mode,
			"web": map[string]any{"iask_url": iaskURL, "duckduckgo_disabled": ddgOff},
		})
	}
	// The deployment turned DuckDuckGo off: an organisation cannot turn it on.
	if code, body := save("self-hosted", "https://iask.invalid/api", false); code != http.StatusBadRequest || !strings.Contains(string(body), "duckduckgo") {
		t.Fatalf("turning DuckDuckGo back on: %d %s", code, body)
	}
	code, body := save("self-hosted", fake.URL+"/iask", true)
	if code != http.StatusOK || json.Unmarshal(body, &st) != nil {
		t.Fatalf("save own IAsk URL: %d %s", code, body)
	}
	if set, _ := st.key("iask_api_key"); set {
		t.Error("the deployment's IAsk key reads as set for another endpoint")
	}
	if r := a.run("web", "web_search", map[string]string{"query": "the answer"}); r.IsError || !strings.Contains(r.Result, "forty-two") {
		t.Fatalf("web_search through the organisation's IAsk: %+v", r)
	}
	mu.Lock()
	got := slices.Clone(auths)
	mu.Unlock()
	if len(got) != 1 || got[0] != "" {
		t.Fatalf("IAsk at the organisation's URL got Authorization %q, want none", got)
	}

	// Self-hosted: a loopback page is read. Public: refused, no request.
	if r := a.run("web", "fetch_url", map[string]string{"url": fake.URL + "/page"}); r.IsError || !strings.Contains(r.Result, "a local page") {
		t.Fatalf("fetch_url in self-hosted mode: %+v", r)
	}
	if code, body := save("public", "", true); code != http.StatusOK || json.Unmarshal(body, &st) != nil || st.NetworkMode != "public" {
		t.Fatalf("save public: %d %s", code, body)
	}
	before := count("/page")
	if r := a.run("web", "fetch_url", map[string]string{"url": fake.URL + "/page"}); !r.IsError || !strings.Contains(r.Result, "blocked") {
		t.Fatalf("fetch_url in public mode: %+v", r)
	}
	if count("/page") != before {
		t.Fatal("public mode let a request reach the loopback page")
	}

	// A second organisation sees none of this.
	other := secondOrg(t, s, data)
	var ost settingsView
	if code, body := other.do(http.MethodGet, "/api/settings", nil); code != http.StatusOK || json.Unmarshal(body, &ost) != nil {
		t.Fatalf("other org settings: %d %s", code, body)
	}
	if ost.Version != 0 || ost.NetworkMode != "self-hosted" {
		t.Fatalf("the other organisation inherited the first's settings: %+v", ost)
	}
	if set, src := ost.key("iask_api_key"); !set || src != "environment" {
		t.Errorf("other org's IAsk key: set=%v source=%q", set, src)
	}
	s.stop()
}

// secondOrg creates organisation "other" with an admin in the running
// server's database and signs that admin in.
func secondOrg(t *testing.T, s serving, data string) *apiClient {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := clock.Now() // the server checks the link on its clock
	if err := st.CreateOrg(ctx, store.Org{ID: "other", Name: "Other", CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateUser(ctx, store.User{ID: "oadmin", OrgID: "other", DisplayName: "Other admin", Role: store.RoleAdmin, CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	link, err := (&accounts.Service{Store: st, Now: clock.Now}).IssueLoginLink(ctx, "other", "oadmin")
	if err != nil {
		t.Fatal(err)
	}
	s.login = s.base + "/login?token=" + link.Secret
	return signIn(t, s)
}

// TestSettingsFollowDeploymentAndSurviveRotation: an organisation that
// saved settings still follows a later change of the deployment's config
// for what it did not set, an empty exclude list it chose stays empty, and
// a key rotation run while quiver serve is up (under a key the server was
// not started with) does not stop its turns.
func TestSettingsFollowDeploymentAndSurviveRotation(t *testing.T) {
	const orgKey = "sk-org-rotation-31c4"
	model := llmtest.Start(t, llmtest.OpenAI{}, llmtest.Reply{Text: []string{"one"}}, llmtest.Reply{Text: []string{"two"}})
	dir := t.TempDir()
	oldKey := writeKeyFile(t, dir, "old.key", "old")
	cfgWith := func(searx string) string {
		return writeConfig(t, t.TempDir(), "secrets:\n  key_file: "+oldKey+"\nweb:\n  searxng_url: "+searx+"\n  exclude_providers: [ollama]\n")
	}
	data := filepath.Join(dir, "data")
	vars := map[string]string{"QUIVER_DATA": data, "OPENAI_BASE_URL": model.URL}
	s := startServeWith(t, vars, "--config", cfgWith("https://searx-one.example"))
	a := signIn(t, s)
	code, body := a.do(http.MethodPut, "/api/settings", map[string]any{
		"version": 0, "network_mode": "public", "switches": map[string]bool{"emoji_usage": true},
		"web":      map[string]any{"searxng_url": "https://searx-one.example", "exclude_providers": []string{}},
		"set_keys": map[string]string{"openai_api_key": orgKey, "brave_api_key": "brave-org-key"},
	})
	if code != http.StatusOK {
		t.Fatalf("save: %d %s", code, body)
	}
	var conv struct{ ID string }
	if code, body = a.do(http.MethodPost, "/api/conversations", map[string]string{"agent": "assistant"}); code/100 != 2 || json.Unmarshal(body, &conv) != nil {
		t.Fatalf("create conversation: %d %s", code, body)
	}
	send := func(msg string) {
		t.Helper()
		if code, body := a.do(http.MethodPost, "/api/conversations/"+conv.ID+"/messages", map[string]string{"message": msg}); code != http.StatusOK || !strings.Contains(string(body), `"done"`) || strings.Contains(string(body), `"error"`) {
			t.Fatalf("send %q: %d %s", msg, code, body)
		}
	}
	send("before rotation")

	// Rotate while the server runs: it only has the old key.
	newKey := writeKeyFile(t, dir, "new.key", "new")
	both := writeConfig(t, t.TempDir(), "secrets:\n  keys_env: QUIVER_TEST_KEYS\n")
	if code, out, stderr := runEnv(t, data, map[string]string{"QUIVER_TEST_KEYS": keyLine(t, newKey) + "," + keyLine(t, oldKey)}, "", "secrets", "rotate", "--config", both); code != 0 || !strings.Contains(out, "2 settings key(s)") {
		t.Fatalf("rotate: exit %d: %s %s", code, out, stderr)
	}
	send("after rotation")
	if seen := model.Seen(); len(seen) != 2 || seen[1].Header.Get("Authorization") != "Bearer "+orgKey {
		t.Fatalf("after rotation the provider got %d requests, want the organisation's key on the second", len(seen))
	}
	// A real change saved now (only the OpenAI key) must not leave the old
	// key in use: this server cannot read the rotated Brave key, so its
	// turns fail until it restarts with the new keyring — never the old key.
	var cur struct{ Version int64 }
	if code, body = a.do(http.MethodGet, "/api/settings", nil); code != http.StatusOK || json.Unmarshal(body, &cur) != nil {
		t.Fatalf("settings: %d %s", code, body)
	}
	if code, body = a.do(http.MethodPut, "/api/settings", map[string]any{
		"version": cur.Version, "network_mode": "public", "switches": map[string]bool{"emoji_usage": true},
		"web":      map[string]any{"searxng_url": "https://searx-one.example", "exclude_providers": []string{}},
		"set_keys": map[string]string{"openai_api_key": "sk-changed-after-rotation"},
	}); code != http.StatusOK {
		t.Fatalf("save after rotation: %d %s", code, body)
	}
	if code, body = a.do(http.MethodPost, "/api/conversations/"+conv.ID+"/messages", map[string]string{"message": "after the change"}); code == http.StatusOK && strings.Contains(string(body), `"done"`) {
		if seen := model.Seen(); seen[len(seen)-1].Header.Get("Authorization") == "Bearer "+orgKey {
			t.Fatal("after a saved key change the provider still got the old key")
		}
	}
	s.stop()

	// The operator changes the deployment's SearXNG URL: the organisation,
	// which never chose one of its own, follows; its empty exclude list stays.
	s = startServeWith(t, vars, "--config", writeConfig(t, t.TempDir(), "secrets:\n  key_file: "+newKey+"\nweb:\n  searxng_url: https://searx-two.example\n  exclude_providers: [ollama]\n"))
	code, out, stderr := runLive(t, data, nil, "", "login-link", "--config", writeConfig(t, t.TempDir(), "secrets:\n  key_file: "+newKey+"\n"), "--addr", strings.TrimPrefix(s.base, "http://"))
	if code != 0 {
		t.Fatalf("login-link: exit %d: %s", code, stderr)
	}
	s.login = strings.TrimSpace(out)
	a = signIn(t, s)
	var st struct {
		Version int64
		Web     struct {
			SearXNGURL       string   `json:"searxng_url"`
			ExcludeProviders []string `json:"exclude_providers"`
		}
		Switches map[string]bool
	}
	if code, body = a.do(http.MethodGet, "/api/settings", nil); code != http.StatusOK || json.Unmarshal(body, &st) != nil {
		t.Fatalf("settings: %d %s", code, body)
	}
	if st.Web.SearXNGURL != "https://searx-two.example" || len(st.Web.ExcludeProviders) != 0 || !st.Switches["emoji_usage"] {
		t.Fatalf("after the deployment changed: %s", body)
	}
	s.stop()
}
