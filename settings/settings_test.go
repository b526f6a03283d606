package settings_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/netguard"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/secret"
	"github.com/quiverhq/quiver/settings"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
)

// saved is the time every save in these tests is stamped with.
var saved = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)

// countingStore counts reads of the settings; when a wait is armed, the
// armed channel is closed at the n-th read from then on.
type countingStore struct {
	*sqlite.Store
	mu    sync.Mutex
	reads int
	left  int
	gate  chan struct{}
}

func (c *countingStore) GetOrgSettings(ctx context.Context, orgID string) (store.OrgSettings, error) {
	s, err := c.Store.GetOrgSettings(ctx, orgID)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads++
	if c.gate != nil {
		if c.left--; c.left == 0 {
			close(c.gate)
			c.gate = nil
		}
	}
	return s, err
}

// closeAfter returns a channel closed after the next n reads.
func (c *countingStore) closeAfter(n int) <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gate, c.left = make(chan struct{}), n
	return c.gate
}

// newStore opens a store in a temporary folder with organisations acme
// and other.
func newStore(t testing.TB) *countingStore {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for _, id := range []string{"acme", "other"} {
		if err := st.CreateOrg(ctx, store.Org{ID: id, Name: id, CreatedAt: saved}); err != nil {
			t.Fatal(err)
		}
	}
	return &countingStore{Store: st}
}

// keyring returns a keyring whose one key is made of b.
func keyring(t testing.TB, id string, b byte) *secret.Keyring {
	t.Helper()
	kr, err := secret.New(secret.Key{ID: id, Secret: bytes.Repeat([]byte{b}, secret.KeySize)})
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

// builds counts catalog builds and records what each was given.
type builds struct {
	mu    sync.Mutex
	cfgs  []config.Config
	keys  []map[string]string
	block func() // when set, each build calls it first
}

func (b *builds) build(cfg config.Config, keys map[string]string) *registry.Catalog {
	b.mu.Lock()
	block := b.block
	b.mu.Unlock()
	if block != nil {
		block()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cfgs, b.keys = append(b.cfgs, cfg), append(b.keys, keys)
	return registry.New()
}

func (b *builds) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.cfgs)
}

// service is a Service over st for a deployment configured as base.
func service(st settings.Repository, kr *secret.Keyring, base config.Config, b *builds) *settings.Service {
	return settings.New(settings.Config{
		Store: st, Keyring: kr, Base: base, Build: b.build, Now: func() time.Time { return saved },
	})
}

// publicUpdate is a valid update of a public deployment made on version.
func publicUpdate(version int64) settings.Update {
	return settings.Update{Version: version, NetworkMode: "public"}
}

// TestRuntimeBuildsOncePerVersion: many turns of one organisation asking
// for its runtime at once build its catalog once, and share it; a saved new
// version is built once more, and asking again builds nothing.
func TestRuntimeBuildsOncePerVersion(t *testing.T) {
	const n = 16
	ctx := context.Background()
	st := newStore(t)
	b := &builds{}
	s := service(st, keyring(t, "k1", 1), config.Config{}, b)
	if b.count() != 1 {
		t.Fatalf("New built %d catalogs, want the deployment's one", b.count())
	}
	concurrent := func() []*settings.Runtime {
		t.Helper()
		// Every build waits until all n callers have read the store, so
		// that all of them ask while the first build is under way.
		gate := st.closeAfter(n)
		b.mu.Lock()
		b.block = func() { <-gate }
		b.mu.Unlock()
		out := make([]*settings.Runtime, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { out[i], errs[i] = s.Runtime(ctx, "acme") })
		}
		wg.Wait()
		b.mu.Lock()
		b.block = nil
		b.mu.Unlock()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("runtime %d: %v", i, err)
			}
			if out[i] != out[0] {
				t.Fatalf("runtime %d is not the one the others got", i)
			}
		}
		return out
	}

	up := publicUpdate(0)
	up.SetKeys = map[string]string{"openai_api_key": "sk-one"}
	if _, err := s.Update(ctx, "acme", up); err != nil {
		t.Fatal(err)
	}
	first := concurrent()
	if got := b.count() - 1; got != 1 {
		t.Fatalf("%d concurrent first runtimes built %d catalogs, want 1", n, got)
	}
	if first[0].Version() != 1 || first[0].Keys()["openai_api_key"] != "sk-one" {
		t.Fatalf("runtime of version %d with keys %v", first[0].Version(), first[0].Keys())
	}

	up = publicUpdate(1)
	up.SetKeys = map[string]string{"openai_api_key": "sk-two"}
	if _, err := s.Update(ctx, "acme", up); err != nil {
		t.Fatal(err)
	}
	second := concurrent()
	if got := b.count() - 1; got != 2 {
		t.Fatalf("after a save, %d concurrent runtimes brought the builds to %d, want 2", n, got)
	}
	if second[0].Version() != 2 || second[0].Keys()["openai_api_key"] != "sk-two" || b.keys[2]["openai_api_key"] != "sk-two" {
		t.Fatalf("runtime of version %d with keys %v", second[0].Version(), second[0].Keys())
	}
	again, err := s.Runtime(ctx, "acme")
	if err != nil || again != second[0] || b.count() != 3 {
		t.Fatalf("asking again: same runtime %v, builds %d, err %v", again == second[0], b.count(), err)
	}
	// An organisation that never saved gets the deployment's runtime.
	other, err := s.Runtime(ctx, "other")
	if err != nil || other.Version() != 0 || b.count() != 3 || len(other.Keys()) != 0 {
		t.Fatalf("never-saved runtime: version %d, builds %d, err %v", other.Version(), b.count(), err)
	}
}

// TestRuntimeAppliesSettingsUnderCeiling: the runtime's configuration is
// the deployment's with the organisation's choices applied, never wider:
// the chosen network mode, the organisation's own IAsk URL without the
// deployment's IAsk key, its model keys as provider keys; agents' own
// switches win over the organisation's.
func TestRuntimeAppliesSettingsUnderCeiling(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	b := &builds{}
	base := config.Config{
		Network: config.Network{Mode: "self-hosted"},
		Web: config.Web{
			IAskURL: "https://iask.deployment/api", IAskKeyEnv: "IASK_KEY", SearXNGURL: "https://searx.deployment",
			ExcludeProviders: []string{"ollama"},
		},
		Providers: map[string]config.Provider{"openai": {BaseURL: "https://openai.deployment"}},
	}
	s := service(st, keyring(t, "k1", 1), base, b)
	if rt, err := s.Runtime(ctx, "acme"); err != nil || rt.Mode() != netguard.SelfHosted || rt.Config().Web.IAskKeyEnv != "IASK_KEY" {
		t.Fatalf("never saved: %+v %v", rt, err)
	}
	_, err := s.Update(ctx, "acme", settings.Update{
		NetworkMode: "public", Switches: map[string]bool{"emoji_usage": true, "web_search": false},
		Web:     settings.Web{IAskURL: "https://iask.org/api", SearXNGURL: "https://searx.deployment", ExcludeProviders: []string{}},
		SetKeys: map[string]string{"anthropic_api_key": "  sk-ant-org  ", "brave_api_key": "brave-org"},
	})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := s.Runtime(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	cfg := rt.Config()
	if cfg.Network.Mode != "public" || rt.Mode() != netguard.Public {
		t.Errorf("network mode %q (%v), want public", cfg.Network.Mode, rt.Mode())
	}
	if cfg.Web.IAskURL != "https://iask.org/api" || cfg.Web.IAskKeyEnv != "" {
		t.Errorf("IAsk %q with key env %q: the deployment's key must not go to the organisation's URL", cfg.Web.IAskURL, cfg.Web.IAskKeyEnv)
	}
	if cfg.Web.SearXNGURL != "https://searx.deployment" || cfg.Web.ExcludeProviders == nil || len(cfg.Web.ExcludeProviders) != 0 {
		t.Errorf("web %+v, want the deployment's SearXNG and the chosen empty exclude list", cfg.Web)
	}
	if p := cfg.Providers["anthropic"]; p.APIKey != "sk-ant-org" {
		t.Errorf("anthropic key %q, want the organisation's, trimmed", p.APIKey)
	}
	if p := cfg.Providers["openai"]; p.BaseURL != "https://openai.deployment" || p.APIKey != "" {
		t.Errorf("openai provider %+v, want the deployment's untouched", p)
	}
	if base.Providers["anthropic"].APIKey != "" {
		t.Error("the deployment's configuration was changed")
	}
	cfg.Providers["anthropic"] = config.Provider{APIKey: "changed"}
	if rt.Config().Providers["anthropic"].APIKey != "sk-ant-org" {
		t.Error("changing a returned configuration changed the runtime")
	}
	if d := cmp.Diff(map[string]string{"anthropic_api_key": "sk-ant-org", "brave_api_key": "brave-org"}, rt.Keys()); d != "" {
		t.Errorf("keys (-want +got):\n%s", d)
	}
	got := rt.Switches()
	if d := cmp.Diff(map[string]bool{"emoji_usage": true, "web_search": false}, got); d != "" {
		t.Errorf("switches (-want +got):\n%s", d)
	}
	got["web_search"] = true
	if rt.Switches()["web_search"] {
		t.Error("changing the returned switches changed the organisation's")
	}

	// The operator changes the deployment: what the organisation did not
	// choose follows; what it chose stays.
	base.Web.SearXNGURL = "https://searx-two.deployment"
	s2 := service(st, keyring(t, "k1", 1), base, &builds{})
	rt, err = s2.Runtime(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if w := rt.Config().Web; w.SearXNGURL != "https://searx-two.deployment" || w.IAskURL != "https://iask.org/api" || len(w.ExcludeProviders) != 0 {
		t.Errorf("after the deployment changed: %+v", w)
	}
	// A deployment narrowed to public makes a saved self-hosted choice
	// public.
	_, err = s2.Update(ctx, "other", settings.Update{NetworkMode: "self-hosted", Web: settings.Web{ExcludeProviders: []string{"ollama"}}})
	if err != nil {
		t.Fatal(err)
	}
	base.Network.Mode = "public"
	rt, err = service(st, nil, base, &builds{}).Runtime(ctx, "other")
	if err != nil || rt.Mode() != netguard.Public {
		t.Fatalf("self-hosted saved, deployment public: mode %v, err %v", rt.Mode(), err)
	}
}

// TestUpdateRefusesBadInput: every refused field is an *InvalidError
// naming the field, with the message the API shows, and writes nothing.
func TestUpdateRefusesBadInput(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	base := config.Config{Web: config.Web{Disabled: true, DuckDuckGoDisabled: true, IAskURL: "http://iask.deployment"}}
	ok := func() settings.Update {
		return settings.Update{NetworkMode: "public", Web: settings.Web{Disabled: true, DuckDuckGoDisabled: true}}
	}
	with := func(f func(*settings.Update)) settings.Update { u := ok(); f(&u); return u }
	long := "https://x.example/" + strings.Repeat("a", 500)
	cases := []struct {
		name, field, msg string
		u                settings.Update
		noKeyring        bool
	}{
		{"unknown switch", "switches", `"nope" is not a switch (known: `, with(func(u *settings.Update) { u.Switches = map[string]bool{"nope": true} }), false},
		{"self-hosted on a public deployment", "network_mode", "this deployment allows only public mode (set network.mode: self-hosted in the server's config file to allow it)", with(func(u *settings.Update) { u.NetworkMode = "self-hosted" }), false},
		{"unknown mode", "network_mode", `"intranet" is not one of public`, with(func(u *settings.Update) { u.NetworkMode = "intranet" }), false},
		{"web search back on", "web.disabled", "web search is turned off for this deployment (web.disabled in the server's config file)", with(func(u *settings.Update) { u.Web.Disabled = false }), false},
		{"DuckDuckGo back on", "web.duckduckgo_disabled", "DuckDuckGo is turned off for this deployment (web.duckduckgo_disabled in the server's config file)", with(func(u *settings.Update) { u.Web.DuckDuckGoDisabled = false }), false},
		{"SearXNG not http", "web.searxng_url", "not an http or https URL", with(func(u *settings.Update) { u.Web.SearXNGURL = "ftp://searx.example" }), false},
		{"SearXNG with credentials", "web.searxng_url", "credentials in the URL are not allowed (use the key fields)", with(func(u *settings.Update) { u.Web.SearXNGURL = "https://me:pw@searx.example" }), false},
		{"SearXNG not UTF-8", "web.searxng_url", "not valid UTF-8", with(func(u *settings.Update) { u.Web.SearXNGURL = "https://searx.example/\xff" }), false},
		{"IAsk URL too long", "web.iask_url", "longer than 500 characters", with(func(u *settings.Update) { u.Web.IAskURL = long }), false},
		{"IAsk plain http of the organisation's own", "web.iask_url", "use https (it carries the IAsk key); plain http needs network mode self-hosted", with(func(u *settings.Update) { u.Web.IAskURL = "http://iask.org" }), false},
		{"excluded provider not a name", "web.exclude_providers", `"Open AI" is not a model provider name (like openai or ollama)`, with(func(u *settings.Update) { u.Web.ExcludeProviders = []string{"Open AI"} }), false},
		{"unknown key", "set_keys", `"nope_api_key" is not a key name`, with(func(u *settings.Update) { u.SetKeys = map[string]string{"nope_api_key": "x"} }), false},
		{"empty key", "set_keys", "openai_api_key is empty (use clear_keys to remove a key)", with(func(u *settings.Update) { u.SetKeys = map[string]string{"openai_api_key": "  "} }), false},
		{"key too long", "set_keys", "openai_api_key is longer than 500 characters", with(func(u *settings.Update) { u.SetKeys = map[string]string{"openai_api_key": strings.Repeat("k", 501)} }), false},
		{"key of two lines", "set_keys", "openai_api_key must be one line", with(func(u *settings.Update) { u.SetKeys = map[string]string{"openai_api_key": "a\nb"} }), false},
		{"unknown key to clear", "clear_keys", `"nope_api_key" is not a key name`, with(func(u *settings.Update) { u.ClearKeys = []string{"nope_api_key"} }), false},
		{"set and cleared", "", "openai_api_key is both set and cleared", with(func(u *settings.Update) {
			u.SetKeys, u.ClearKeys = map[string]string{"openai_api_key": "k"}, []string{"openai_api_key"}
		}), false},
		{"key without a keyring", "", "keys cannot be stored: no encryption key is configured (secrets.key_file or secrets.keys_env)", with(func(u *settings.Update) { u.SetKeys = map[string]string{"brave_api_key": "k"} }), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			kr := keyring(t, "k1", 1)
			if tc.noKeyring {
				kr = nil
			}
			_, err := service(st, kr, base, &builds{}).Update(ctx, "acme", tc.u)
			var inv *settings.InvalidError
			if !errors.As(err, &inv) {
				t.Fatalf("got %v, want an *InvalidError", err)
			}
			want := tc.msg
			if tc.field != "" {
				want = tc.field + ": " + tc.msg
			}
			if inv.Field != tc.field || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("field %q, error %q; want field %q, error %q", inv.Field, err, tc.field, want)
			}
			if got, _ := st.Store.GetOrgSettings(ctx, "acme"); got.Version != 0 {
				t.Errorf("a refused update was written (version %d)", got.Version)
			}
		})
	}
	if _, err := service(st, nil, base, &builds{}).Update(ctx, "acme", ok()); err != nil {
		t.Fatalf("the valid update: %v", err)
	}
}

// TestUpdateConflicts: an update made on a version that is no longer the
// stored one is ErrConflict and writes nothing.
func TestUpdateConflicts(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	s := service(st, keyring(t, "k1", 1), config.Config{}, &builds{})
	if _, err := s.Update(ctx, "acme", publicUpdate(0)); err != nil {
		t.Fatal(err)
	}
	stale := publicUpdate(0)
	stale.SetKeys = map[string]string{"openai_api_key": "sk-late"}
	_, err := s.Update(ctx, "acme", stale)
	if !errors.Is(err, settings.ErrConflict) {
		t.Fatalf("stale update: %v, want ErrConflict", err)
	}
	if got, _ := st.Store.GetOrgSettings(ctx, "acme"); got.Version != 1 || len(got.Secrets) != 0 {
		t.Errorf("the stale update was written: version %d, %d keys", got.Version, len(got.Secrets))
	}
}

// TestShowSaysWhereKeysComeFrom: the view shows the settings in force with
// [] and {} for nothing, and for every key whether it is set and where
// from, never its value; the deployment's IAsk key counts only for the
// deployment's own IAsk URL.
func TestShowSaysWhereKeysComeFrom(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	env := map[string]string{"BRAVE_API_KEY": "brave-env", "IASK_KEY": "iask-env"}
	base := config.Config{Network: config.Network{Mode: "self-hosted"}, Web: config.Web{IAskURL: "https://iask.deployment", IAskKeyEnv: "IASK_KEY"}}
	s := settings.New(settings.Config{
		Store: st, Keyring: keyring(t, "k1", 1), Base: base, Build: (&builds{}).build,
		Now:         func() time.Time { return saved },
		Getenv:      func(k string) string { return env[k] },
		ProviderKey: func(p string) string { return map[string]string{"gemini": "gm-env"}[p] },
	})
	v, err := s.Show(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if v.Version != 0 || v.Switches == nil || v.Web.ExcludeProviders == nil || v.NetworkMode != "self-hosted" || !v.UpdatedAt.IsZero() {
		t.Errorf("never saved: %+v", v)
	}
	if d := cmp.Diff([]string{"public", "self-hosted"}, v.NetworkModes); d != "" {
		t.Errorf("modes (-want +got):\n%s", d)
	}
	sources := func(v settings.View) map[string]string {
		out := map[string]string{}
		for _, k := range v.Keys {
			if k.Set != (k.Source != "") {
				t.Errorf("%s: set %v with source %q", k.Name, k.Set, k.Source)
			}
			out[k.Name] = k.Source
		}
		return out
	}
	want := map[string]string{
		"openai_api_key": "", "anthropic_api_key": "", "gemini_api_key": "environment", "openrouter_api_key": "",
		"brave_api_key": "environment", "iask_api_key": "environment",
	}
	if d := cmp.Diff(want, sources(v)); d != "" {
		t.Errorf("key sources, never saved (-want +got):\n%s", d)
	}
	if v.Keys[0].Name != "openai_api_key" || v.Keys[0].Label != "OpenAI API key" {
		t.Errorf("first key %+v", v.Keys[0])
	}

	up := settings.Update{NetworkMode: "public", Web: settings.Web{IAskURL: "https://iask.org"}, SetKeys: map[string]string{"openai_api_key": "sk-secret-value"}}
	v, err = s.Update(ctx, "acme", up)
	if err != nil {
		t.Fatal(err)
	}
	want["openai_api_key"], want["iask_api_key"] = "settings", ""
	if d := cmp.Diff(want, sources(v)); d != "" {
		t.Errorf("key sources after save (-want +got):\n%s", d)
	}
	if v.Version != 1 || !v.UpdatedAt.Equal(saved) || v.NetworkMode != "public" || v.Web.IAskURL != "https://iask.org" {
		t.Errorf("after save: %+v", v)
	}
	if strings.Contains(strings.Join([]string{v.Web.IAskURL, v.Web.SearXNGURL}, " "), "sk-secret") {
		t.Error("the view holds a key")
	}
	stored, _ := st.Store.GetOrgSettings(ctx, "acme")
	if bytes.Contains(stored.Doc, []byte("sk-secret")) || strings.Contains(stored.Secrets["openai_api_key"], "sk-secret") {
		t.Error("the key is stored in the clear")
	}
}

// TestRuntimeSurvivesRotationUnderAnotherKey: keys re-encrypted under a
// key this process lacks keep serving the keys read before (with a
// warning) until someone saves; a runtime that cannot open a saved change
// is an error, never the old keys.
func TestRuntimeSurvivesRotationUnderAnotherKey(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	var logs bytes.Buffer
	oldKR := keyring(t, "old", 1)
	s := settings.New(settings.Config{
		Store: st, Keyring: oldKR, Build: (&builds{}).build, Now: func() time.Time { return saved },
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	})
	up := publicUpdate(0)
	up.SetKeys = map[string]string{"openai_api_key": "sk-before"}
	if _, err := s.Update(ctx, "acme", up); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Runtime(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	both, err := secret.New(secret.Key{ID: "new", Secret: bytes.Repeat([]byte{2}, secret.KeySize)}, secret.Key{ID: "old", Secret: bytes.Repeat([]byte{1}, secret.KeySize)})
	if err != nil {
		t.Fatal(err)
	}
	n, err := st.RewrapOrgSecrets(ctx, func(orgID, name, sealed string) (string, error) {
		return both.Rotate(sealed, settings.SecretAAD(orgID, name))
	})
	if err != nil || n != 1 {
		t.Fatalf("rotate: %d, %v", n, err)
	}
	rt, err := s.Runtime(ctx, "acme")
	if err != nil || rt.Version() != 2 || rt.Keys()["openai_api_key"] != "sk-before" {
		t.Fatalf("after rotation: %v", err)
	}
	if !strings.Contains(logs.String(), "re-encrypted under a key this server does not have") || strings.Contains(logs.String(), "sk-before") {
		t.Errorf("log: %s", logs.String())
	}
	// A real save now keeps the rotated key it cannot read: no old keys.
	up = publicUpdate(2)
	up.SetKeys = map[string]string{"anthropic_api_key": "sk-ant"}
	if _, err := s.Update(ctx, "acme", up); err != nil {
		t.Fatal(err)
	}
	if rt, err := s.Runtime(ctx, "acme"); err == nil {
		t.Fatalf("a save this process cannot read gave a runtime with keys %v", rt.Keys())
	}
	// The new keyring reads it all.
	rt, err = settings.New(settings.Config{Store: st, Keyring: both, Build: (&builds{}).build}).Runtime(ctx, "acme")
	if err != nil || rt.Keys()["openai_api_key"] != "sk-before" || rt.Keys()["anthropic_api_key"] != "sk-ant" {
		t.Fatalf("with the new keyring: %v", err)
	}
}
