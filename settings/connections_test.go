package settings_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/llm/llmtest"
	"github.com/quiverhq/quiver/settings"
)

// selfHosted is a deployment that lets organisations reach their own
// network, with an operator's vLLM whose key is in its environment.
var selfHosted = config.Config{
	Network:   config.Network{Mode: "self-hosted"},
	Providers: map[string]config.Provider{"vllm": {BaseURL: "http://10.1.2.3:8000/v1", APIKeyEnv: "VLLM_KEY"}, "openai": {APIKeyEnv: "OPENAI_KEY"}},
}

// local starts an OpenAI-compatible model list on loopback, answering
// only key.
func local(t *testing.T, key string, ids ...string) string {
	t.Helper()
	srv := httptest.NewServer(llmtest.Models{IDs: ids, Key: key})
	t.Cleanup(srv.Close)
	return srv.URL
}

// hosts resolves the tests' host names without DNS; any other name is
// not found (which netguard leaves to its dial check).
type hosts map[string]string

func (h hosts) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if ip, ok := h[strings.TrimSuffix(host, ".")]; ok {
		return []netip.Addr{netip.MustParseAddr(ip)}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// testHosts are the names the tests' connections use.
var testHosts = hosts{"localhost": "127.0.0.1", "models.example": "93.184.215.14", "lm.example": "93.184.215.15",
	"a.example": "93.184.215.16", "b.example": "93.184.215.17", "intranet.example": "10.20.30.40"}

// connectionsService is a Service of a deployment base with a keyring,
// resolving testHosts.
func connectionsService(t testing.TB, base config.Config, opts ...func(*settings.Config)) (*settings.Service, *countingStore) {
	t.Helper()
	st := newStore(t)
	c := settings.Config{Store: st, Keyring: keyring(t, "k1", 1), Base: base, Build: (&builds{}).build, Now: func() time.Time { return saved },
		Resolver: testHosts}
	for _, o := range opts {
		o(&c)
	}
	return settings.New(c), st
}

// TestConnectionsSaveAndApply: connections are saved with their keys
// sealed and never shown, reach the models' configuration as Guarded
// providers replacing the deployment's provider of the same name whole
// (its key variable too), and stay out of the catalog's keys.
func TestConnectionsSaveAndApply(t *testing.T) {
	ctx := context.Background()
	svc, st := connectionsService(t, selfHosted)
	v, err := svc.Update(ctx, "acme", settings.Update{NetworkMode: "self-hosted", Connections: []settings.ConnectionUpdate{
		{Name: "lmstudio", BaseURL: "http://127.0.0.1:1234/v1", Key: " sk-lm "},
		{Name: "vllm", BaseURL: "http://192.168.1.20:8000/v1"},
		{Name: "ollama", BaseURL: "http://localhost:11434"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := []settings.Connection{
		{Name: "lmstudio", BaseURL: "http://127.0.0.1:1234/v1", KeySet: true},
		{Name: "ollama", BaseURL: "http://localhost:11434"},
		{Name: "vllm", BaseURL: "http://192.168.1.20:8000/v1"},
	}
	if d := cmp.Diff(want, v.Connections); d != "" {
		t.Errorf("connections (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"vllm"}, v.ServerConnections); d != "" {
		t.Errorf("server connections (-want +got):\n%s", d)
	}
	stored, err := st.Store.GetOrgSettings(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(stored.Doc), "sk-lm") || strings.Contains(stored.Secrets["connection:lmstudio"], "sk-lm") || stored.Secrets["connection:lmstudio"] == "" {
		t.Errorf("the key is not sealed apart: doc %s, secrets %v", stored.Doc, stored.Secrets)
	}
	rt, err := svc.Runtime(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	got := rt.Config().Providers
	wantProviders := map[string]config.Provider{
		"lmstudio": {BaseURL: "http://127.0.0.1:1234/v1", APIKey: "sk-lm", Guarded: true},
		"ollama":   {BaseURL: "http://localhost:11434", Guarded: true},
		"vllm":     {BaseURL: "http://192.168.1.20:8000/v1", Guarded: true},
		"openai":   {APIKeyEnv: "OPENAI_KEY"},
	}
	if d := cmp.Diff(wantProviders, got); d != "" {
		t.Errorf("providers in force (-want +got):\n%s", d)
	}
	if names := rt.KeyNames(); len(names) != 0 {
		t.Errorf("the runtime's keys %v: a connection's key is not a backend", names)
	}

	// Removing a connection removes its key.
	if _, err := svc.Update(ctx, "acme", settings.Update{Version: 1, NetworkMode: "self-hosted", Connections: []settings.ConnectionUpdate{
		{Name: "vllm", BaseURL: "http://192.168.1.20:8000/v1"},
	}}); err != nil {
		t.Fatal(err)
	}
	if stored, _ := st.Store.GetOrgSettings(ctx, "acme"); len(stored.Secrets) != 0 {
		t.Errorf("secrets after removing lmstudio: %v", stored.Secrets)
	}
}

// TestConnectionKeyStaysWithItsServer: a saved key is not kept for a
// changed base URL (it would go to a server it was not typed for) unless
// typed again or cleared.
func TestConnectionKeyStaysWithItsServer(t *testing.T) {
	ctx := context.Background()
	svc, st := connectionsService(t, selfHosted)
	save := func(version int64, c settings.ConnectionUpdate) error {
		_, err := svc.Update(ctx, "acme", settings.Update{Version: version, NetworkMode: "self-hosted", Connections: []settings.ConnectionUpdate{c}})
		return err
	}
	if err := save(0, settings.ConnectionUpdate{Name: "lmstudio", BaseURL: "http://127.0.0.1:1234/v1", Key: "sk-lm"}); err != nil {
		t.Fatal(err)
	}
	if err := save(1, settings.ConnectionUpdate{Name: "lmstudio", BaseURL: "http://127.0.0.1:1234/v1"}); err != nil {
		t.Fatalf("the same URL keeps its key: %v", err)
	}
	err := save(2, settings.ConnectionUpdate{Name: "lmstudio", BaseURL: "http://10.0.0.9:1234/v1"})
	var inv *settings.InvalidError
	if !errors.As(err, &inv) || inv.Field != "connections.lmstudio" || !strings.Contains(inv.Msg, "type the key again, or clear it") {
		t.Fatalf("a new URL with the saved key: %v", err)
	}
	if got, _ := st.Store.GetOrgSettings(ctx, "acme"); got.Version != 2 {
		t.Errorf("the refused update was written (version %d)", got.Version)
	}
	if err := save(2, settings.ConnectionUpdate{Name: "lmstudio", BaseURL: "http://10.0.0.9:1234/v1", ClearKey: true}); err != nil {
		t.Errorf("a new URL with the key cleared: %v", err)
	}
	if err := save(3, settings.ConnectionUpdate{Name: "lmstudio", BaseURL: "http://10.0.0.8:1234/v1", Key: "sk-new"}); err != nil {
		t.Errorf("a new URL with a new key: %v", err)
	}
}

func TestConnectionsRefused(t *testing.T) {
	ctx := context.Background()
	public := config.Config{}
	one := func(c settings.ConnectionUpdate) []settings.ConnectionUpdate { return []settings.ConnectionUpdate{c} }
	many := make([]settings.ConnectionUpdate, settings.MaxConnections+1)
	for i := range many {
		many[i] = settings.ConnectionUpdate{Name: fmt.Sprintf("s%d", i), BaseURL: "https://models.example/v1"}
	}
	for _, tc := range []struct {
		name   string
		base   config.Config
		mode   string
		conns  []settings.ConnectionUpdate
		field  string
		prefix string
	}{
		{"not a provider name", public, "public", one(settings.ConnectionUpdate{Name: "LM Studio", BaseURL: "https://lm.example/v1"}),
			"connections", `"LM Studio" is not a provider name`},
		{"a provider with its own key field", public, "public", one(settings.ConnectionUpdate{Name: "openai", BaseURL: "https://proxy.example/v1"}),
			"connections", "openai has its own key field above"},
		{"twice", public, "public", []settings.ConnectionUpdate{{Name: "vllm", BaseURL: "https://a.example/v1"}, {Name: "vllm", BaseURL: "https://b.example/v1"}},
			"connections", "vllm is listed twice"},
		{"too many", public, "public", many, "connections", "at most 16 connections"},
		{"no URL", public, "public", one(settings.ConnectionUpdate{Name: "vllm"}), "connections.vllm", "the base URL is empty"},
		{"not http", public, "public", one(settings.ConnectionUpdate{Name: "vllm", BaseURL: "ftp://models.example"}), "connections.vllm", "not an http or https URL"},
		{"credentials", public, "public", one(settings.ConnectionUpdate{Name: "vllm", BaseURL: "https://me:pw@models.example/v1"}), "connections.vllm", "credentials in the URL"},
		{"not UTF-8", public, "public", one(settings.ConnectionUpdate{Name: "vllm", BaseURL: "http://\x8c"}), "connections.vllm", "not valid UTF-8"},
		{"a query", public, "public", one(settings.ConnectionUpdate{Name: "vllm", BaseURL: "https://models.example/v1?key=x"}), "connections.vllm", "the base URL must have no query"},
		{"loopback in public mode", public, "public", one(settings.ConnectionUpdate{Name: "ollama", BaseURL: "http://127.0.0.1:11434"}),
			"connections.ollama", "blocked: address not allowed: 127.0.0.1: in public network mode a connection must be a public address on port 80 or 443"},
		{"localhost in public mode", public, "public", one(settings.ConnectionUpdate{Name: "ollama", BaseURL: "http://localhost:11434"}),
			"connections.ollama", "blocked: address not allowed: localhost"},
		{"a private address in public mode on a self-hosted deployment", selfHosted, "public", one(settings.ConnectionUpdate{Name: "vllm", BaseURL: "http://10.0.0.5/v1"}),
			"connections.vllm", "blocked: address not allowed: 10.0.0.5: in public network mode"},
		{"another port in public mode", public, "public", one(settings.ConnectionUpdate{Name: "vllm", BaseURL: "https://models.example:8000/v1"}),
			"connections.vllm", "blocked: address not allowed: models.example: in public network mode"},
		{"a name of a private address in public mode", public, "public", one(settings.ConnectionUpdate{Name: "vllm", BaseURL: "https://intranet.example/v1"}),
			"connections.vllm", "blocked: address not allowed: intranet.example: in public network mode"},
		{"cloud metadata even self-hosted", selfHosted, "self-hosted", one(settings.ConnectionUpdate{Name: "vllm", BaseURL: "http://169.254.169.254/v1"}),
			"connections.vllm", "blocked: address not allowed: 169.254.169.254: not reachable in any mode"},
		{"a key of two lines", public, "public", one(settings.ConnectionUpdate{Name: "vllm", BaseURL: "https://models.example/v1", Key: "a\nb"}),
			"connections.vllm", "the key must be one line"},
		{"set and cleared", public, "public", one(settings.ConnectionUpdate{Name: "vllm", BaseURL: "https://models.example/v1", Key: "k", ClearKey: true}),
			"connections.vllm", "the key is both set and cleared"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc, st := connectionsService(t, tc.base)
			_, err := svc.Update(ctx, "acme", settings.Update{NetworkMode: tc.mode, Connections: tc.conns})
			var inv *settings.InvalidError
			if !errors.As(err, &inv) || inv.Field != tc.field || !strings.HasPrefix(inv.Msg, tc.prefix) {
				t.Fatalf("%v; want %s: %s…", err, tc.field, tc.prefix)
			}
			if got, _ := st.Store.GetOrgSettings(ctx, "acme"); got.Version != 0 {
				t.Errorf("a refused update was written (version %d)", got.Version)
			}
		})
	}
	// A public server on 443 is fine in public mode.
	svc, _ := connectionsService(t, public)
	if _, err := svc.Update(ctx, "acme", settings.Update{NetworkMode: "public", Connections: []settings.ConnectionUpdate{
		{Name: "vllm", BaseURL: "https://models.example/v1"}}}); err != nil {
		t.Errorf("a public server in public mode: %v", err)
	}
}

// TestTestConnection: a connection test asks the server for its models
// through the guarded client, with the typed key, or the saved one only
// for the URL it was saved with; what a save would refuse is refused the
// same way, and neither the report nor an error carries the key.
func TestTestConnection(t *testing.T) {
	ctx := context.Background()
	base := local(t, "sk-lm", "qwen3:8b", "llama3.2")
	svc, _ := connectionsService(t, selfHosted)
	lm := func(key, mode string) settings.ConnectionTest {
		return settings.ConnectionTest{Name: "lmstudio", BaseURL: base + "/v1", Key: key, NetworkMode: mode}
	}
	got, err := svc.TestConnection(ctx, "acme", lm("sk-lm", "self-hosted"))
	if err != nil {
		t.Fatal(err)
	}
	want := settings.ConnectionReport{URL: base + "/v1/models", Models: []string{"llama3.2", "qwen3:8b"}, KeyUsed: settings.KeyTyped}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("report (-want +got):\n%s", d)
	}
	// Without a mode, the organisation's own: public once it saves that.
	if _, err := svc.Update(ctx, "acme", settings.Update{NetworkMode: "public"}); err != nil {
		t.Fatal(err)
	}
	_, err = svc.TestConnection(ctx, "acme", lm("sk-lm", ""))
	var inv *settings.InvalidError
	if !errors.As(err, &inv) || inv.Field != "base_url" || !strings.Contains(inv.Msg, "in public network mode") {
		t.Errorf("in the organisation's public mode: %v", err)
	}
	if _, err := svc.Update(ctx, "acme", settings.Update{Version: 1, NetworkMode: "self-hosted", Connections: []settings.ConnectionUpdate{
		{Name: "lmstudio", BaseURL: base + "/v1", Key: "sk-lm"}}}); err != nil {
		t.Fatal(err)
	}
	if got, err := svc.TestConnection(ctx, "acme", lm("", "")); err != nil || got.KeyUsed != settings.KeySaved || len(got.Models) != 2 {
		t.Errorf("with the saved key: %+v, %v", got, err)
	}
	// Another URL of the same server does not get the saved key.
	other := lm("", "")
	other.BaseURL = strings.Replace(base, "127.0.0.1", "localhost", 1) + "/v1"
	_, err = svc.TestConnection(ctx, "acme", other)
	var ce *settings.ConnectionError
	if !errors.As(err, &ce) || !strings.Contains(ce.Msg, "401 Unauthorized: check the key") {
		t.Errorf("another URL without a typed key: %v, want the server's 401", err)
	}
	_, err = svc.TestConnection(ctx, "acme", lm("sk-wrong", ""))
	if !errors.As(err, &ce) || strings.Contains(err.Error(), "sk-wrong") {
		t.Errorf("a wrong key: %v", err)
	}
	for name, tc := range map[string]struct {
		t     settings.ConnectionTest
		field string
	}{
		"reserved name": {settings.ConnectionTest{Name: "openai", BaseURL: base + "/v1"}, "name"},
		"no URL":        {settings.ConnectionTest{Name: "vllm"}, "base_url"},
		"unknown mode":  {settings.ConnectionTest{Name: "vllm", BaseURL: base, NetworkMode: "intranet"}, "network_mode"},
	} {
		if _, err := svc.TestConnection(ctx, "acme", tc.t); !errors.As(err, &inv) || inv.Field != tc.field {
			t.Errorf("%s: %v, want an *InvalidError for %s", name, err, tc.field)
		}
	}
	publicSvc, _ := connectionsService(t, config.Config{})
	if _, err := publicSvc.TestConnection(ctx, "acme", lm("sk-lm", "self-hosted")); !errors.As(err, &inv) || inv.Field != "network_mode" {
		t.Errorf("self-hosted on a public deployment: %v", err)
	}
}

// TestTestConnectionTimesOut: a server that never answers fails the test
// at Config.ConnectionTimeout with that reason.
func TestTestConnectionTimesOut(t *testing.T) {
	stuck := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	t.Cleanup(stuck.Close)
	svc, _ := connectionsService(t, selfHosted, func(c *settings.Config) { c.ConnectionTimeout = 50 * time.Millisecond })
	_, err := svc.TestConnection(context.Background(), "acme", settings.ConnectionTest{Name: "vllm", BaseURL: stuck.URL + "/v1", NetworkMode: "self-hosted"})
	var ce *settings.ConnectionError
	if !errors.As(err, &ce) || ce.Msg != "the server did not answer: no answer in time" {
		t.Errorf("%v, want a connection error saying there was no answer in time", err)
	}
}

// FuzzConnectionUpdate: whatever a connection's fields hold, a save is
// either accepted or refused with an *InvalidError that writes nothing,
// and an accepted one shows the connection as sent, its key never.
func FuzzConnectionUpdate(f *testing.F) {
	for _, seed := range [][4]string{
		{"lmstudio", "http://127.0.0.1:1234/v1", "sk-1", "self-hosted"},
		{"ollama", "http://localhost:11434", "", "public"},
		{"vllm", "https://models.example/v1?x=1", "a\nb", "public"},
		{"OpenAI", "ftp://x", "", "self-hosted"},
		{"openai", "https://me:pw@models.example/v1", "k", "public"},
		{"vllm", "http://[::1]:8000/v1", "", "self-hosted"},
		{"v", "http://169.254.169.254/latest", "", "self-hosted"},
	} {
		f.Add(seed[0], seed[1], seed[2], seed[3])
	}
	ctx := context.Background()
	svc, st := connectionsService(f, selfHosted)
	f.Fuzz(func(t *testing.T, name, base, key, mode string) {
		before, err := st.Store.GetOrgSettings(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		v, err := svc.Update(ctx, "acme", settings.Update{Version: before.Version, NetworkMode: mode,
			Connections: []settings.ConnectionUpdate{{Name: name, BaseURL: base, Key: key}}})
		if err != nil {
			var inv *settings.InvalidError
			if !errors.As(err, &inv) {
				t.Fatalf("%q %q: %v, want an *InvalidError", name, base, err)
			}
			if after, _ := st.Store.GetOrgSettings(ctx, "acme"); after.Version != before.Version {
				t.Fatalf("a refused save was written")
			}
			return
		}
		if len(v.Connections) != 1 || v.Connections[0].Name != name || v.Connections[0].BaseURL != base {
			t.Fatalf("saved %+v, want %q at %q", v.Connections, name, base)
		}
		if k := strings.TrimSpace(key); len(k) > 3 && strings.Contains(fmt.Sprintf("%+v", v), k) {
			t.Fatalf("the view shows the key %q", k)
		}
	})
}
