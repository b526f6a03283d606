package webui_test

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/llm/llmtest"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/secret"
	"github.com/quiverhq/quiver/settings"
	"github.com/quiverhq/quiver/store"
)

// settingsEngine serves the settings endpoints from a real
// settings.Service and everything else from the scripted engine.
type settingsEngine struct {
	*scriptedEngine
	svc *settings.Service
}

func (e settingsEngine) Settings(ctx context.Context, c httpapi.Caller) (settings.View, error) {
	return e.svc.Show(ctx, c.OrgID)
}

func (e settingsEngine) UpdateSettings(ctx context.Context, c httpapi.Caller, u settings.Update) (settings.View, error) {
	return e.svc.Update(ctx, c.OrgID, u)
}

func (e settingsEngine) TestConnection(ctx context.Context, c httpapi.Caller, t settings.ConnectionTest) (settings.ConnectionReport, error) {
	return e.svc.TestConnection(ctx, c.OrgID, t)
}

// realSettings is realAPI with the organisation's settings served by a
// settings.Service of a self-hosted deployment whose own configuration
// connects a vLLM server.
func realSettings(t *testing.T) (store.Store, *settings.Service, *browser) {
	t.Helper()
	kr, err := secret.New(secret.Key{ID: "k1", Secret: bytes.Repeat([]byte{3}, secret.KeySize)})
	if err != nil {
		t.Fatal(err)
	}
	var svc *settings.Service
	st, _, b := realAPIWith(t, func(st store.Store, e *scriptedEngine) httpapi.Engine {
		svc = settings.New(settings.Config{Store: st, Keyring: kr,
			Base: config.Config{Network: config.Network{Mode: "self-hosted"},
				Providers: map[string]config.Provider{"vllm": {BaseURL: "http://10.0.0.2:8000/v1"}}},
			Build: func(config.Config, map[string]string) *registry.Catalog { return registry.New() }})
		return settingsEngine{scriptedEngine: e, svc: svc}
	})
	return st, svc, b
}

// TestConnectionsTestSaveRemove: an admin adds an LM Studio connection
// with a key, tests it (refused in public mode, the models listed in
// self-hosted mode, against a fake OpenAI-compatible server on
// loopback), saves it (the key write-only from then on, and reaching the
// models' configuration as a guarded provider), tests it again with the
// saved key, and removes it; at desktop and phone width.
func TestConnectionsTestSaveRemove(t *testing.T) {
	const typed = "sk-lm-typed-secret"
	models := httptest.NewServer(llmtest.Models{IDs: []string{"qwen3:8b", "llama3.2"}, Key: typed})
	t.Cleanup(models.Close)
	base := models.URL + "/v1"
	eachWidth(t, func(t *testing.T, vp width) {
		ctx := context.Background()
		st, svc, b := realSettings(t)
		b.use(vp)
		b.open("#/settings", `#connections`)
		b.WaitText(`#connections`, "No model servers connected.")
		b.WaitText(`#server-connections`, "The server's configuration also connects vllm")

		b.Do("add LM Studio", chromedp.SetValue(chromedp.CSS(`#connection-preset`), "lmstudio"),
			chromedp.Click(chromedp.CSS(`#connection-add`)), chromedp.WaitVisible(chromedp.CSS(`#conn-1-name`)))
		type fields struct{ Name, URL, Focus string }
		if got := eval[fields](b, `({ Name: document.getElementById('conn-1-name').value, URL: document.getElementById('conn-1-url').value,
			Focus: document.activeElement.id })`); got != (fields{"lmstudio", "http://localhost:1234/v1", "conn-1-name"}) {
			t.Errorf("the added connection %+v, want LM Studio's name and URL, focused", got)
		}
		b.Do("point it at the server", chromedp.SetValue(chromedp.CSS(`#conn-1-url`), base),
			chromedp.Click(chromedp.CSS(`#conn-1-key`)), chromedp.SendKeys(chromedp.CSS(`#conn-1-key`), typed))

		// Public mode refuses a loopback server, before any request to it.
		b.Do("test in public mode", chromedp.Click(chromedp.CSS(`#mode-public`)), chromedp.Click(chromedp.CSS(`#conn-1-test`)))
		b.WaitText(`#conn-1-result .alert`, "Connection failed: base_url: blocked: address not allowed: 127.0.0.1: in public network mode")
		b.Do("test in self-hosted mode", chromedp.Click(chromedp.CSS(`#mode-self-hosted`)), chromedp.Click(chromedp.CSS(`#conn-1-test`)))
		b.WaitText(`#conn-1-result`, "Connected to "+base+"/models with the key typed here: 2 models. Agents use them as:")
		if got := eval[[]string](b, `[...document.querySelectorAll('#conn-1-result .model-list li')].map(li => li.textContent)`); !cmp.Equal(got, []string{"lmstudio:llama3.2", "lmstudio:qwen3:8b"}) {
			t.Errorf("models shown %q", got)
		}
		tests := b.requests("POST", "/api/settings/connections/test")
		if len(tests) != 2 || !cmp.Equal(tests[1].Body, map[string]any{"name": "lmstudio", "base_url": base, "key": typed, "network_mode": "self-hosted"}) {
			t.Fatalf("connection tests sent %+v", tests)
		}
		b.fits(vp, "a tested connection")
		b.shotOf(`#connections`, "tested")

		b.Do("save", chromedp.Click(chromedp.CSS(`#settings-save`)))
		b.WaitText(`#settings-status`, "Settings saved.")
		b.WaitText(`#connections`, "Connection lmstudio")
		b.WaitText(`#conn-1-key-state`, "key set")
		if got := b.sent("PUT", "/api/settings").Body["connections"]; !cmp.Equal(got, []any{map[string]any{"name": "lmstudio", "base_url": base, "key": typed}}) {
			t.Errorf("connections saved %v", got)
		}
		b.noSecretInPage("after saving", typed)
		rt, err := svc.Runtime(ctx, "org_a")
		if err != nil {
			t.Fatal(err)
		}
		if got := rt.Config().Providers["lmstudio"]; got != (config.Provider{BaseURL: base, APIKey: typed, Guarded: true}) {
			t.Errorf("the models' configuration has lmstudio as %+v", got)
		}

		// The saved key serves the saved URL.
		b.Do("test the saved one", chromedp.Click(chromedp.CSS(`#conn-1-test`)))
		b.WaitText(`#conn-1-result`, "with the saved key: 2 models")
		b.shotOf(`#connections`, "saved")

		b.Do("remove", chromedp.Click(chromedp.CSS(`#conn-1-remove`)), chromedp.WaitNotPresent(chromedp.CSS(`#conn-1-name`)))
		if got := eval[string](b, `document.activeElement.id`); got != "connection-preset" {
			t.Errorf("focus after removing on %q, want the server picker", got)
		}
		b.Do("save again", chromedp.Click(chromedp.CSS(`#settings-save`)))
		b.WaitText(`#settings-status`, "Settings saved.")
		b.WaitText(`#connections`, "No model servers connected.")
		if stored, err := st.GetOrgSettings(ctx, "org_a"); err != nil || len(stored.Secrets) != 0 || stored.Version != 2 {
			t.Errorf("after removing: version %d, secrets %v, %v", stored.Version, stored.Secrets, err)
		}
		for _, x := range b.rec.exchanges() {
			if strings.Contains(x.Response, typed) {
				t.Errorf("%s %s answered with the key", x.Method, x.Path)
			}
		}
		// The fieldset in Vietnamese, from the catalog.
		b.Do("choose Vietnamese", chromedp.SetValue(chromedp.CSS(`#lang`), "vi"))
		b.WaitText(`#connections legend`, "Máy chủ mô hình")
		b.WaitText(`#connections`, "Chưa kết nối máy chủ mô hình nào.")
		b.WaitText(`#connection-add`, "Thêm kết nối")
	})
}
