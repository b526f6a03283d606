package webui_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
)

// keyStates reads each key's shown state by name.
func (b *browser) keyStates() map[string]string {
	b.t.Helper()
	return eval[map[string]string](b, `Object.fromEntries([...document.querySelectorAll('.key')].map(k =>
		[k.dataset.key, k.querySelector('.key-state').textContent]))`)
}

// switchStates reads each switch as "mixed", "checked" or "unchecked"
// and the state it shows beside it.
func (b *browser) switchStates() map[string]string {
	b.t.Helper()
	return eval[map[string]string](b, `Object.fromEntries([...document.querySelectorAll('.switch')].map(s => {
		const box = s.querySelector('input');
		return [s.dataset.switch, (box.indeterminate ? 'mixed' : box.checked ? 'checked' : 'unchecked') + ': ' +
			s.querySelector('.switch-state').textContent];
	}))`)
}

// noSecretInPage fails the test if a secret is in the page's markup, in
// a field's value or in the page's storage.
func (b *browser) noSecretInPage(when string, secrets ...string) {
	b.t.Helper()
	for _, secret := range secrets {
		type where struct{ DOM, Values, Storage bool }
		got := eval[where](b, fmt.Sprintf(`(() => { const s = %q; return {
			DOM: document.documentElement.outerHTML.includes(s),
			Values: [...document.querySelectorAll('input, textarea')].some(e => e.value.includes(s)),
			Storage: JSON.stringify({ ...localStorage }).includes(s) || JSON.stringify({ ...sessionStorage }).includes(s) }; })()`, secret))
		if got != (where{}) {
			b.t.Errorf("%s: the key %q is in the page: %+v", when, secret, got)
		}
	}
}

func TestSettingsSaveKeepsKeysWriteOnly(t *testing.T) {
	const typed = "sk-ant-typed-secret-42"
	api := newStubAPI()
	b := newBrowser(t, api)
	b.login()
	b.open("#/settings", `#settings-form`)

	if d := cmp.Diff(map[string]string{
		"openai_api_key": "set (settings)", "anthropic_api_key": "not set", "brave_api_key": "set (environment)",
	}, b.keyStates()); d != "" {
		t.Errorf("key states (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]string{
		"tool_use": "mixed: not set", "personal_memories": "mixed: not set", "emoji_usage": "checked: on",
		"web_search": "mixed: not set", "image_generation": "mixed: not set", "time_awareness": "mixed: not set",
	}, b.switchStates()); d != "" {
		t.Errorf("switches (-want +got):\n%s", d)
	}
	// Only a key saved in settings can be cleared.
	clears := eval[[]string](b, `[...document.querySelectorAll('.key button')].map(x => x.getAttribute('aria-label'))`)
	if d := cmp.Diff([]string{"Clear OpenAI API key"}, clears); d != "" {
		t.Errorf("clear buttons (-want +got):\n%s", d)
	}
	b.Shot("loaded")

	b.Do("edit the settings",
		chromedp.Click(chromedp.CSS(`#switch-web_search`)),
		chromedp.Click(chromedp.CSS(`#switch-emoji_usage`)),
		chromedp.Click(chromedp.CSS(`#mode-self-hosted`)),
		chromedp.SetValue(chromedp.CSS(`#web-searxng`), "http://searx.lan:8080"),
		chromedp.SetValue(chromedp.CSS(`#web-exclude`), "iask, ollama ,"),
		chromedp.Click(chromedp.CSS(`.key[data-key="openai_api_key"] button`)),
		chromedp.Click(chromedp.CSS(`#key-anthropic_api_key`)),
		chromedp.SendKeys(chromedp.CSS(`#key-anthropic_api_key`), typed))
	b.WaitText(`#key-openai_api_key-state`, "set (settings): cleared when you save")
	if got := eval[string](b, `document.getElementById('key-anthropic_api_key').value`); got != typed {
		t.Fatalf("typed key %q, want %q", got, typed)
	}
	if got := eval[string](b, `document.getElementById('key-anthropic_api_key').type`); got != "password" {
		t.Errorf("key field type %q, want password", got)
	}
	b.Do("save", chromedp.Click(chromedp.CSS(`#settings-save`)))
	b.WaitText(`#settings-status`, "Settings saved.")
	b.WaitText(`#settings-form`, "Version 4")

	put := b.sent("PUT", "/api/settings")
	want := map[string]any{
		"version":      float64(3),
		"switches":     map[string]any{"emoji_usage": false, "web_search": true},
		"network_mode": "self-hosted",
		"web": map[string]any{"disabled": false, "searxng_url": "http://searx.lan:8080", "iask_url": "",
			"duckduckgo_disabled": false, "exclude_providers": []any{"iask", "ollama"}},
		"set_keys":    map[string]any{"anthropic_api_key": typed},
		"clear_keys":  []any{"openai_api_key"},
		"connections": []any{},
	}
	if d := cmp.Diff(want, put.Body); d != "" {
		t.Errorf("PUT /api/settings body (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]string{
		"openai_api_key": "not set", "anthropic_api_key": "set (settings)", "brave_api_key": "set (environment)",
	}, b.keyStates()); d != "" {
		t.Errorf("key states after saving (-want +got):\n%s", d)
	}
	if got := eval[bool](b, `document.getElementById('mode-self-hosted').checked`); !got {
		t.Error("self-hosted mode not shown after saving")
	}
	b.Shot("saved")

	b.noSecretInPage("after saving", typed, stubSecret)

	// The page again, from a new GET.
	b.open("#/chat", `.new-conv`)
	b.open("#/settings", `#settings-form`)
	b.WaitText(`#key-anthropic_api_key-state`, "set (settings)")
	b.noSecretInPage("after reloading", typed, stubSecret)
	// No response carried a key, and only the PUT carried the typed one.
	gets := 0
	for _, x := range b.rec.exchanges() {
		if x.Method == "GET" && x.Path == "/api/settings" && strings.Contains(x.Response, `"anthropic_api_key"`) {
			gets++
		}
		for _, secret := range []string{typed, stubSecret} {
			if strings.Contains(x.Response, secret) {
				t.Errorf("%s %s answered with the key %q", x.Method, x.Path, secret)
			}
		}
		raw, _ := json.Marshal(x.Body)
		if x.Method != "PUT" && (strings.Contains(string(raw), typed) || strings.Contains(x.Query, typed)) {
			t.Errorf("%s %s?%s sent the key", x.Method, x.Path, x.Query)
		}
	}
	if gets != 2 {
		t.Errorf("%d GET /api/settings answers recorded, want 2 (before and after saving)", gets)
	}
	b.checkHeaders(stubCSRF)
}

func TestSettingsConflictReloads(t *testing.T) {
	api := newStubAPI()
	b := newBrowser(t, api)
	b.login()
	b.open("#/settings", `#settings-form`)
	b.WaitText(`#settings-form`, "Version 3")
	api.otherAdminSaves() // version 4, with an IAsk URL

	b.Do("save over it", chromedp.Click(chromedp.CSS(`#switch-web_search`)), chromedp.Click(chromedp.CSS(`#settings-save`)))
	b.WaitText(`#settings-status .alert`, "someone else saved the settings while you were editing")
	b.WaitText(`#settings-form`, "Version 4")
	if got := eval[string](b, `document.getElementById('web-iask').value`); got != "https://iask.example/api" {
		t.Errorf("IAsk URL %q after the conflict, want the other admin's", got)
	}
	if got := b.switchStates()["web_search"]; got != "mixed: not set" {
		t.Errorf("web_search %q after the conflict, want the stored state (not set)", got)
	}
	if got := eval[string](b, `document.activeElement.id`); got != "settings-status" {
		t.Errorf("focus on %q, want the status message", got)
	}
	var calls []string
	for _, r := range b.rec.recorded() {
		if r.Path == "/api/settings" {
			calls = append(calls, fmt.Sprintf("%s %d", r.Method, r.Status))
		}
	}
	if d := cmp.Diff([]string{"GET 200", "PUT 409", "GET 200"}, calls); d != "" {
		t.Errorf("settings requests (-want +got):\n%s", d)
	}
	b.Shot("conflict")

	b.Do("save again", chromedp.Click(chromedp.CSS(`#switch-web_search`)), chromedp.Click(chromedp.CSS(`#settings-save`)))
	b.WaitText(`#settings-status`, "Settings saved.")
	puts := b.requests("PUT", "/api/settings")
	if len(puts) != 2 {
		t.Fatalf("%d PUTs, want 2", len(puts))
	}
	got := puts[1].Body
	if got["version"] != float64(4) || got["web"].(map[string]any)["iask_url"] != "https://iask.example/api" ||
		got["switches"].(map[string]any)["web_search"] != true {
		t.Errorf("second save %v, want version 4 with the other admin's IAsk URL and web_search on", got)
	}
	b.checkHeaders(stubCSRF)
}

// TestSettingsSwitchWithoutTool: a switch with no tool behind it yet is
// marked "No tool yet", says it changes nothing (the engine's rule) and
// is not offered; a switch that gates tools says which. At desktop and
// phone width.
func TestSettingsSwitchWithoutTool(t *testing.T) {
	atEachWidth(t, func(t *testing.T, api *stubAPI, b *browser, vp width) {
		b.open("#/settings", `#settings-form`)
		type row struct {
			Disabled bool
			Badge    string
			Effect   string
		}
		got := eval[map[string]row](b, `Object.fromEntries(['image_generation', 'web_search', 'emoji_usage'].map(n =>
			[n, { Disabled: document.getElementById('switch-' + n).disabled,
				Badge: document.querySelector('[data-switch="' + n + '"] .no-tool-badge')?.textContent ?? '',
				Effect: document.getElementById('switch-' + n + '-effect').textContent }]))`)
		want := map[string]row{
			"image_generation": {Disabled: true, Badge: "No tool yet", Effect: "No tool yet: this switch changes nothing. " +
				"It will gate the image_generation family's tools once there are some; until then capability:image_generation is never true in a prompt."},
			"web_search":  {Disabled: false, Effect: "off leaves out web_search, research_web"},
			"emoji_usage": {Disabled: false, Effect: "prompt conditions only"},
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("switch rows (-want +got):\n%s", d)
		}
		if note := eval[string](b, `document.getElementById('settings-embedding').textContent`); !strings.Contains(note, "local:ngram-512") || !strings.Contains(note, "weaker than a real embedding model") {
			t.Errorf("the embedding note %q does not say the local model is weaker", note)
		}
		if d := eval[string](b, `document.getElementById('switch-image_generation').getAttribute('aria-describedby')`); !strings.Contains(d, "switch-image_generation-effect") {
			t.Errorf("the no-tool note is not the checkbox's description: aria-describedby %q", d)
		}
		if name := eval[string](b, `document.querySelector('label[for="switch-image_generation"]').textContent`); !strings.Contains(name, "No tool yet") {
			t.Errorf("the checkbox's label %q does not say it has no tool", name)
		}
		b.fits(vp, "settings")
		b.Do("show the switch", chromedp.ScrollIntoView(chromedp.CSS(`[data-switch="image_generation"]`)))
		b.Shot("no-tool switch")
		// A click on the disabled box changes nothing, so saving sends no
		// image_generation switch.
		b.Do("save", chromedp.Click(chromedp.CSS(`#switch-web_search`)),
			chromedp.Evaluate[chromedp.Void](`document.getElementById('switch-image_generation').click()`),
			chromedp.Click(chromedp.CSS(`#settings-save`)))
		b.WaitText(`#settings-status`, "Settings saved.")
		sw := b.sent("PUT", "/api/settings").Body["switches"]
		if d := cmp.Diff(map[string]any{"emoji_usage": true, "web_search": true}, sw); d != "" {
			t.Errorf("switches sent (-want +got):\n%s", d)
		}
	})
}

func TestAdminPagesHiddenFromMembers(t *testing.T) {
	api := newStubAPI()
	api.member.Store(true)
	b := newBrowser(t, api)
	b.login()
	hidden := eval[map[string]bool](b, `Object.fromEntries([...document.querySelectorAll('#nav a')].map(a =>
		[a.getAttribute('href'), a.closest('li').hidden]))`)
	if d := cmp.Diff(map[string]bool{
		"#/chat": false, "#/inspect": false, "#/agents": false, "#/tools": false, "#/memories": false, "#/scheduled": false,
		"#/mcp": true, "#/people": true, "#/settings": true,
	}, hidden); d != "" {
		t.Errorf("navigation hidden (-want +got):\n%s", d)
	}
	b.open("#/settings", `main h1`)
	b.WaitText(`main`, "Only admins of your organisation change its settings.")
	if eval[bool](b, `!!document.getElementById('dtm')`) {
		t.Error("a member sees the Deliberate Tool Mode section")
	}
	b.open("#/people", `main h1`)
	b.WaitText(`main`, "Only admins of your organisation manage its people.")
	for _, r := range b.rec.recorded() {
		if r.Path == "/api/settings" || r.Path == "/api/users" || strings.HasPrefix(r.Path, "/api/deliberate") {
			t.Errorf("a member's page asked %s %s", r.Method, r.Path)
		}
	}
}
