package webui_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
)

// TestAdminPagesAgainstHTTPAPI runs settings, people, the tool console and
// the no-model notice against package httpapi itself (realAPI): the
// request bodies the pages send pass its validation, and the pages read
// what it answers.
func TestAdminPagesAgainstHTTPAPI(t *testing.T) {
	const typed = "sk-real-typed-secret"
	st, eng, b := realAPI(t)

	// Settings: a key, a switch; then a save over someone else's.
	b.open("#/settings", `#settings-form`)
	b.waitText(`#key-openai_api_key-state`, "not set")
	b.do("save", chromedp.Click(chromedp.CSS(`#switch-web_search`)),
		chromedp.Click(chromedp.CSS(`#key-openai_api_key`)), chromedp.SendKeys(chromedp.CSS(`#key-openai_api_key`), typed),
		chromedp.Click(chromedp.CSS(`#settings-save`)))
	b.waitText(`#settings-status`, "Settings saved.")
	b.waitText(`#key-openai_api_key-state`, "set (settings)")
	eng.mu.Lock()
	key, sw := eng.keys["openai_api_key"], eng.saved.Switches
	eng.mu.Unlock()
	if key != typed || !cmp.Equal(sw, map[string]bool{"web_search": true}) {
		t.Errorf("engine got key %q and switches %v", key, sw)
	}
	b.noSecretInPage("after saving", typed)
	eng.otherSave()
	b.do("save over it", chromedp.Click(chromedp.CSS(`#switch-tool_use`)), chromedp.Click(chromedp.CSS(`#settings-save`)))
	b.waitText(`#settings-status .alert`, "someone else saved the settings")

	// People: invite (the link works), make admin, disable.
	b.open("#/people", `tr[data-user="ana"]`)
	b.do("invite", chromedp.SetValue(chromedp.CSS(`#invite-display_name`), "Dana Reyes"),
		chromedp.Click(chromedp.CSS(`#invite button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS(`#login-link`)))
	link := eval[string](b, `document.getElementById('login-link').value`)
	if !strings.HasPrefix(link, b.srv.URL+"/login?token=") {
		t.Fatalf("login link %q", link)
	}
	b.waitText(`.people-table`, "Dana Reyes")
	dana := eval[string](b, `[...document.querySelectorAll('tr[data-user]')].find(r => r.textContent.includes('Dana Reyes'))?.dataset.user ?? ''`)
	if dana == "" {
		t.Fatal("Dana is not listed")
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		t.Errorf("the invitation link answered %d, want 303", res.StatusCode)
	}
	row := `tr[data-user="` + dana + `"]`
	b.do("make Dana an admin", chromedp.Click(chromedp.CSS(row+` button[aria-label="Edit Dana Reyes"]`)),
		chromedp.SetValue(chromedp.CSS(`#edit-role`), "admin"), chromedp.Click(chromedp.CSS(`#edit-user button[type=submit]`)))
	b.waitText(row+` [data-label="Role"]`, "Admin")
	b.do("new link", chromedp.Click(chromedp.CSS(row+` button[aria-label="New login link for Dana Reyes"]`)))
	b.waitText(`.link-panel h2`, "Login link for Dana Reyes")
	b.do("disable Dana", chromedp.Click(chromedp.CSS(row+` button.danger`)))
	b.confirmDialog("Disable Dana Reyes?", "yes")
	b.waitText(row+` [data-label="Status"]`, "Disabled")
	if u, err := st.GetUser(context.Background(), "org_a", dana); err != nil || u.DisabledAt.IsZero() || u.Role != "admin" {
		t.Errorf("Dana in the store: %+v, %v; want a disabled admin", u, err)
	}

	// The tool console.
	b.open("#/tools?agent=assistant", `#console-tool:enabled`)
	b.do("run", chromedp.SetValue(chromedp.CSS(`#console-args`), `{"expression":"2+2"}`), chromedp.Click(chromedp.CSS(`#console-run`)))
	b.waitText(`#console-result`, "4")
	b.waitText(`#console-duration`, "calculate took 2 ms")

	// The no-model notice in a new conversation.
	eng.mu.Lock()
	eng.noModel = true
	eng.mu.Unlock()
	b.open("#/chat", `.new-conv button`)
	b.do("new conversation", chromedp.Click(chromedp.CSS(`.new-conv button`)), chromedp.WaitVisible(chromedp.CSS(`#model-notice`)))
	b.waitText(`#model-notice .help-text`, "Set the OpenAI API key in Settings.")

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
