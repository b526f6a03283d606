package webui_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/store"
)

// wantLinkWorks opens a login link the page shows and checks that its
// sign-in page names who, then signs in with it (POST /api/login).
func (b *browser) wantLinkWorks(what, who, link string) {
	b.t.Helper()
	u, err := url.Parse(link)
	if err != nil || !strings.HasPrefix(link, b.srv.URL+"/login?token=") {
		b.t.Fatalf("%s %q, want %s/login?token=…", what, link, b.srv.URL)
	}
	res, err := http.Get(link)
	if err != nil {
		b.t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(page), `<strong id="account"><bdi>`+who+`</bdi></strong>`) {
		b.t.Errorf("%s: the sign-in page answered %d, want 200 naming %s:\n%s", what, res.StatusCode, who, page)
	}
	body, _ := json.Marshal(map[string]string{"token": u.Query().Get("token")})
	res, err = http.Post(b.srv.URL+"/api/login", "application/json", bytes.NewReader(body))
	if err != nil {
		b.t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b.t.Errorf("%s: POST /api/login answered %d, want 200", what, res.StatusCode)
	}
}

// TestAdminPagesAgainstHTTPAPI runs settings, people, the tool console and
// the no-model notice against package httpapi itself (realAPI): the
// request bodies the pages send pass its validation, and the pages read
// what it answers.
func TestAdminPagesAgainstHTTPAPI(t *testing.T) {
	const typed = "sk-real-typed-secret"
	st, eng, b := realAPI(t)

	// Settings: a key, a switch; then a save over someone else's.
	b.open("#/settings", `#settings-form`)
	b.WaitText(`#key-openai_api_key-state`, "not set")
	b.Do("save", chromedp.Click(chromedp.CSS(`#switch-web_search`)),
		chromedp.Click(chromedp.CSS(`#key-openai_api_key`)), chromedp.SendKeys(chromedp.CSS(`#key-openai_api_key`), typed),
		chromedp.Click(chromedp.CSS(`#settings-save`)))
	b.WaitText(`#settings-status`, "Settings saved.")
	b.WaitText(`#key-openai_api_key-state`, "set (settings)")
	eng.mu.Lock()
	key, sw := eng.keys["openai_api_key"], eng.saved.Switches
	eng.mu.Unlock()
	if key != typed || !cmp.Equal(sw, map[string]bool{"web_search": true}) {
		t.Errorf("engine got key %q and switches %v", key, sw)
	}
	b.noSecretInPage("after saving", typed)
	eng.otherSave()
	b.Do("save over it", chromedp.Click(chromedp.CSS(`#switch-tool_use`)), chromedp.Click(chromedp.CSS(`#settings-save`)))
	b.WaitText(`#settings-status .alert`, "someone else saved the settings")

	// People: invite (the link works), make admin, disable, enable (a new
	// link works).
	b.open("#/people", `tr[data-user="ana"]`)
	b.Do("invite", chromedp.SetValue(chromedp.CSS(`#invite-display_name`), "Dana Reyes"),
		chromedp.Click(chromedp.CSS(`#invite button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS(`#login-link`)))
	link := eval[string](b, `document.getElementById('login-link').value`)
	if !strings.HasPrefix(link, b.srv.URL+"/login?token=") {
		t.Fatalf("login link %q", link)
	}
	b.WaitText(`.people-table`, "Dana Reyes")
	dana := eval[string](b, `[...document.querySelectorAll('tr[data-user]')].find(r => r.textContent.includes('Dana Reyes'))?.dataset.user ?? ''`)
	if dana == "" {
		t.Fatal("Dana is not listed")
	}
	b.wantLinkWorks("the invitation link", "Dana Reyes", link)
	row := `tr[data-user="` + dana + `"]`
	b.Do("make Dana an admin", chromedp.Click(chromedp.CSS(row+` button[aria-label="Edit Dana Reyes"]`)),
		chromedp.SetValue(chromedp.CSS(`#edit-role`), "admin"), chromedp.Click(chromedp.CSS(`#edit-user button[type=submit]`)))
	b.WaitText(row+` [data-label="Role"]`, "Admin")
	// The invitation's panel already says "Login link for Dana Reyes":
	// wait for the new link itself, so that the panel it replaces (and
	// focuses, scrolling the page) is in place before the next click.
	b.Do("new link", chromedp.Click(chromedp.CSS(row+` button[aria-label="New login link for Dana Reyes"]`)))
	eval[bool](b, `new Promise((ok) => { const check = () => { const el = document.getElementById('login-link');
		if (el && el.value !== `+strconv.Quote(link)+`) ok(true); else setTimeout(check, 20); }; check(); })`, chromedp.EvalAwaitPromise)
	b.WaitText(`.link-panel h2`, "Login link for Dana Reyes")
	b.Do("disable Dana", chromedp.Click(chromedp.CSS(row+` button.danger`)))
	b.confirmDialog("Disable Dana Reyes?", "yes")
	b.WaitText(row+` [data-label="Status"]`, "Disabled")
	if u, err := st.GetUser(context.Background(), "org_a", dana); err != nil || u.DisabledAt.IsZero() || u.Role != "admin" {
		t.Errorf("Dana in the store: %+v, %v; want a disabled admin", u, err)
	}
	b.Do("enable Dana", chromedp.Click(chromedp.CSS(row+` button[aria-label="Enable Dana Reyes"]`)))
	b.WaitText(row+` [data-label="Status"]`, "Active")
	if u, err := st.GetUser(context.Background(), "org_a", dana); err != nil || !u.DisabledAt.IsZero() {
		t.Errorf("Dana in the store: %+v, %v; want enabled", u, err)
	}
	// The link made before disabling is revoked: close its panel first.
	b.Do("close the old link", chromedp.Click(chromedp.CSS(`.link-panel .row:last-child button`)),
		chromedp.WaitNotPresent(chromedp.CSS(`#login-link`)))
	b.Do("a link for Dana enabled", chromedp.Click(chromedp.CSS(row+` button[aria-label="New login link for Dana Reyes"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#login-link`)))
	b.wantLinkWorks("a login link after enabling", "Dana Reyes", eval[string](b, `document.getElementById('login-link').value`))
	b.Do("erase Dana", chromedp.Click(chromedp.CSS(row+` button[aria-label="Erase Dana Reyes"]`)))
	b.confirmDialog("Erase Dana Reyes for good?", "yes")
	b.WaitText(`#people-status .ok`, "Erased Dana Reyes.")
	if _, err := st.GetUser(context.Background(), "org_a", dana); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Dana in the store after erasing: %v, want not found", err)
	}

	// The tool console.
	b.open("#/tools?agent=assistant", `#console-tool:enabled`)
	b.Do("run", chromedp.SetValue(chromedp.CSS(`#console-args`), `{"expression":"2+2"}`), chromedp.Click(chromedp.CSS(`#console-run`)))
	b.WaitText(`#console-result`, "4")
	b.WaitText(`#console-duration`, "calculate took 2 ms")

	// The no-model notice in a new chat, before anything is sent.
	eng.mu.Lock()
	eng.noModel = true
	eng.mu.Unlock()
	b.open("#/chat", `.new-conv #message`)
	b.Do("notice", chromedp.WaitVisible(chromedp.CSS(`#model-notice`)))
	b.WaitText(`#model-notice .help-text`, "Set the OpenAI API key in Settings.")

	var failed []string
	for _, r := range b.rec.recorded() {
		if r.Status >= 400 {
			failed = append(failed, r.Method+" "+r.Path)
		}
	}
	if d := cmp.Diff([]string{"PUT /api/settings"}, failed); d != "" {
		t.Errorf("failed requests (-want +got):\n%s", d)
	}
}

// TestDeliberateAndPreferencesAgainstHTTPAPI runs the Deliberate Tool Mode
// section of Settings and the Preferences page against package httpapi
// itself: the mode's settings (the always-on opt-in included) and the
// triggers, normalised by package intent, are stored, and the profile and
// override reach the store.
func TestDeliberateAndPreferencesAgainstHTTPAPI(t *testing.T) {
	ctx := context.Background()
	st, _, b := realAPI(t)
	triggers := func() []string {
		t.Helper()
		ts, err := st.ListIntentTriggers(ctx, "org_a")
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, x := range ts {
			out = append(out, x.Target+": "+x.Phrase)
		}
		return out
	}

	b.open("#/settings", `#dtm-form`)
	b.WaitText(`#trigger-list`, "No custom triggers")
	b.Do("turn it on", chromedp.Click(chromedp.CSS(`#dtm-enabled`)), chromedp.SetValue(chromedp.CSS(`#dtm-history`), "2"),
		chromedp.Click(chromedp.CSS(`#dtm-gate-always-on`)), chromedp.Click(chromedp.CSS(`#dtm-save`)))
	b.WaitText(`#dtm-status .ok`, "Deliberate Tool Mode saved: on, 2 recent messages re-scanned, always-on tools gated too; classifier: The deployment's.")
	if is, err := st.GetIntentSettings(ctx, "org_a"); err != nil || !is.Enabled || is.HistoryTurns != 2 || !is.GateAlwaysOn {
		t.Errorf("stored settings %+v, %v; want on with 2, the always-on tools gated", is, err)
	}
	b.addTrigger("image", "  Profile   PIC ")
	b.WaitText(`#trigger-status .ok`, "Added “profile pic” to image.")
	if d := cmp.Diff([]string{"image: profile pic"}, triggers()); d != "" {
		t.Errorf("stored triggers (-want +got):\n%s", d)
	}
	b.addTrigger("image", "PROFILE pic")
	b.WaitText(`#trigger-status .alert`, `Not added: "profile pic" is already a image trigger`)
	b.addTrigger("image", "a|b")
	b.WaitText(`#trigger-status .alert`, "regular expression syntax")
	b.Do("remove", chromedp.Click(chromedp.CSS(`button[aria-label="Remove profile pic from image"]`)),
		chromedp.WaitNotPresent(chromedp.CSS(`.trigger-group[data-target="image"]`)))
	b.WaitText(`#trigger-status .ok`, "Removed “profile pic” from image.")
	if got := triggers(); len(got) != 0 {
		t.Errorf("stored triggers after removing: %v", got)
	}

	// Preferences: Ana has no stored zone, so the field is empty (not the
	// browser's); she takes the browser's, a department and Off.
	b.Do("open preferences", chromedp.Click(chromedp.CSS(`#who-name`)), chromedp.WaitVisible(chromedp.CSS(`#prefs-form`)))
	if got := b.profileForm(); !cmp.Equal(got, map[string]string{"name": "Ana Lima", "department": "Finance", "timezone": "", "mode": "follow"}) {
		t.Errorf("preferences %v", got)
	}
	b.Do("save", chromedp.Click(chromedp.CSS(`#pref-use-browser-zone`)), chromedp.SetValue(chromedp.CSS(`#pref-department`), "Treasury"),
		chromedp.Click(chromedp.CSS(`#pref-mode-off`)), chromedp.Click(chromedp.CSS(`#prefs-save`)))
	b.WaitText(`#prefs-status .ok`, "Preferences saved.")
	if d := cmp.Diff(map[string]any{"department": "Treasury", "timezone": testZone}, b.sent("PATCH", "/api/me").Body); d != "" {
		t.Errorf("PATCH /api/me body (-want +got):\n%s", d)
	}
	if u, err := st.GetUser(ctx, "org_a", "ana"); err != nil || u.Timezone != testZone || u.Department != "Treasury" {
		t.Errorf("Ana in the store: %+v, %v; want %s and Treasury", u, err, testZone)
	}
	if mode, err := st.GetUserIntentMode(ctx, "org_a", "ana"); err != nil || mode != "off" {
		t.Errorf("Ana's stored override %q, %v; want off", mode, err)
	}
	if got := b.profileForm(); !cmp.Equal(got, map[string]string{"name": "Ana Lima", "department": "Treasury", "timezone": testZone, "mode": "off"}) {
		t.Errorf("preferences after saving %v", got)
	}

	var failed []string
	for _, r := range b.rec.recorded() {
		if r.Status >= 400 {
			failed = append(failed, fmt.Sprintf("%s %s %d", r.Method, r.Path, r.Status))
		}
	}
	if d := cmp.Diff([]string{"POST /api/deliberate/triggers 409", "POST /api/deliberate/triggers 400"}, failed); d != "" {
		t.Errorf("failed requests (-want +got):\n%s", d)
	}
}
