package httpapi_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/llm/llmtest"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/secret"
	"github.com/quiverhq/quiver/settings"
)

// withSettings serves the settings endpoints from a real settings.Service
// over the fixture's store, for a self-hosted deployment with a keyring.
func withSettings(t *testing.T) func(*httpapi.Config) {
	return func(cfg *httpapi.Config) {
		kr, err := secret.New(secret.Key{ID: "k1", Secret: bytes.Repeat([]byte{7}, secret.KeySize)})
		if err != nil {
			t.Fatal(err)
		}
		svc := settings.New(settings.Config{
			Store: cfg.Store.(settings.Repository), Keyring: kr,
			Base:     config.Config{Network: config.Network{Mode: "self-hosted"}},
			Build:    func(config.Config, map[string]string) *registry.Catalog { return registry.New() },
			Resolver: loopbackNames{},
		})
		cfg.Engine = httpapi.NewEngine(httpapi.EngineConfig{Settings: svc})
	}
}

// loopbackNames resolves localhost and nothing else, without DNS.
type loopbackNames struct{}

func (loopbackNames) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if strings.TrimSuffix(host, ".") == "localhost" {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// TestConnectionsAPI: connections are saved with PUT /api/settings (their
// keys write-only) and tried with POST /api/settings/connections/test
// against a fake OpenAI-compatible server on loopback; both are admins'
// only, and one organisation's saved key never serves another.
func TestConnectionsAPI(t *testing.T) {
	const key = "sk-local-secret"
	models := httptest.NewServer(llmtest.Models{IDs: []string{"qwen3:8b", "llama3.2"}, Key: key})
	t.Cleanup(models.Close)
	base := models.URL + "/v1"
	f := newFixture(t, withSettings(t))

	test := map[string]any{"name": "lmstudio", "base_url": base, "key": key, "network_mode": "self-hosted"}
	var report httpapi.ConnectionReport
	f.ok(f.do(f.alice, "POST", "/api/settings/connections/test", test), http.StatusOK, &report)
	want := httpapi.ConnectionReport{URL: base + "/models", Models: []string{"llama3.2", "qwen3:8b"}, KeyUsed: "typed"}
	if d := cmp.Diff(want, report); d != "" {
		t.Errorf("report (-want +got):\n%s", d)
	}
	wantError(t, f.do(f.bob, "POST", "/api/settings/connections/test", test), http.StatusForbidden, "forbidden")

	put := map[string]any{"version": 0, "network_mode": "self-hosted", "connections": []map[string]any{
		{"name": "lmstudio", "base_url": base, "key": key}, {"name": "ollama", "base_url": "http://localhost:11434"}}}
	r := f.do(f.alice, "PUT", "/api/settings", put)
	var got httpapi.Settings
	f.ok(r, http.StatusOK, &got)
	wantConns := []httpapi.ConnectionState{{Name: "lmstudio", BaseURL: base, KeySet: true}, {Name: "ollama", BaseURL: "http://localhost:11434"}}
	if d := cmp.Diff(wantConns, got.Connections); d != "" {
		t.Errorf("connections (-want +got):\n%s", d)
	}
	wantError(t, f.do(f.bob, "PUT", "/api/settings", put), http.StatusForbidden, "forbidden")
	wantError(t, f.do(f.bob, "GET", "/api/settings", nil), http.StatusForbidden, "forbidden")

	// The saved key serves the saved URL; the other organisation's admin
	// testing the same server gets none of it.
	delete(test, "key")
	f.ok(f.do(f.alice, "POST", "/api/settings/connections/test", test), http.StatusOK, &report)
	if report.KeyUsed != "saved" || len(report.Models) != 2 {
		t.Errorf("with the saved key: %+v", report)
	}
	other := f.do(f.dave, "POST", "/api/settings/connections/test", test)
	wantError(t, other, http.StatusBadRequest, "connection_failed")
	if !strings.Contains(string(other.body), "401 Unauthorized: check the key") {
		t.Errorf("another organisation's test: %s", other.body)
	}

	// Refusals: a bad URL for the mode, a key kept for a changed URL.
	public := map[string]any{"name": "ollama", "base_url": "http://127.0.0.1:11434", "network_mode": "public"}
	bad := f.do(f.alice, "POST", "/api/settings/connections/test", public)
	wantError(t, bad, http.StatusBadRequest, "invalid_request")
	if !strings.Contains(string(bad.body), "base_url: blocked: address not allowed: 127.0.0.1: in public network mode") {
		t.Errorf("loopback in public mode: %s", bad.body)
	}
	moved := map[string]any{"version": 1, "network_mode": "self-hosted", "connections": []map[string]any{{"name": "lmstudio", "base_url": "http://10.9.9.9:1234/v1"}}}
	wantError(t, f.do(f.alice, "PUT", "/api/settings", moved), http.StatusBadRequest, "invalid_request")

	// No answer carried the key.
	for _, resp := range []string{string(r.body), string(other.body), string(bad.body)} {
		if strings.Contains(resp, key) {
			t.Errorf("an answer holds the key: %s", resp)
		}
	}
	var again httpapi.Settings
	getR := f.do(f.alice, "GET", "/api/settings", nil)
	f.ok(getR, http.StatusOK, &again)
	if strings.Contains(string(getR.body), key) || again.Version != 1 {
		t.Errorf("GET /api/settings: version %d; body %s", again.Version, getR.body)
	}
}
