package webui_test

import (
	"fmt"
	"strings"
	"testing"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
)

// personRow is one row of the people table as shown.
type personRow struct {
	Name, Role, Status string
	Actions            []string
}

func (b *browser) people() map[string]personRow {
	b.t.Helper()
	return eval[map[string]personRow](b, `Object.fromEntries([...document.querySelectorAll('tr[data-user]')].map(r => {
		const cell = (l) => r.querySelector('[data-label="' + l + '"]');
		return [r.dataset.user, { Name: cell('Name').textContent, Role: cell('Role').textContent, Status: cell('Status').textContent,
			Actions: [...cell('Actions').querySelectorAll('button')].map(x => x.textContent) }];
	}))`)
}

// grantClipboard lets the page read and write the clipboard.
func (b *browser) grantClipboard() {
	b.t.Helper()
	ctx, cancel := b.Step()
	defer cancel()
	for _, name := range []string{"clipboard-read", "clipboard-write"} {
		_, err := chromedp.CallBrowser(ctx, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
			Permission: &cdpbrowser.PermissionDescriptor{Name: name, AllowWithoutSanitization: true},
			Setting:    cdpbrowser.PermissionSettingGranted, Origin: b.srv.URL})
		if err != nil {
			b.t.Fatalf("grant %s: %v", name, err)
		}
	}
}

// confirmDialog answers the open confirmation dialog after checking its
// question.
func (b *browser) confirmDialog(question, answer string) {
	b.t.Helper()
	b.Do("dialog opens", chromedp.WaitVisible(chromedp.CSS(`dialog.confirm`)))
	b.WaitText(`dialog.confirm`, question)
	b.Do("answer "+answer, chromedp.Click(chromedp.CSS(fmt.Sprintf(`dialog.confirm button[value=%q]`, answer))),
		chromedp.WaitNotPresent(chromedp.CSS(`dialog.confirm`)))
}

func TestPeopleInviteChangeRoleDisable(t *testing.T) {
	api := newStubAPI()
	b := newBrowser(t, api)
	b.grantClipboard()
	b.login()
	b.open("#/people", `tr[data-user="u3"]`)
	want := map[string]personRow{
		"u1": {"Ana Lima (you)", "Admin", "Active", []string{"Edit", "New login link"}},
		"u2": {"Bruno Costa", "Member", "Active", []string{"Edit", "New login link", "Disable", "Erase"}},
		"u3": {"Chi Nguyen", "Member", "Disabled", []string{"Enable", "Erase"}},
	}
	if d := cmp.Diff(want, b.people()); d != "" {
		t.Errorf("people (-want +got):\n%s", d)
	}

	// The last admin cannot step down: the API's message is shown.
	b.Do("edit yourself", chromedp.Click(chromedp.CSS(`tr[data-user="u1"] button[aria-label="Edit Ana Lima"]`)),
		chromedp.SetValue(chromedp.CSS(`#edit-role`), "member"), chromedp.Click(chromedp.CSS(`#edit-user button[type=submit]`)))
	b.confirmDialog("Make yourself a member?", "yes")
	b.WaitText(`#people-status .alert`, "Ana Lima not saved: this is the organisation's last admin: make another user an admin first")
	if r := b.sent("PATCH", "/api/users/u1"); r.Status != 409 {
		t.Errorf("PATCH /api/users/u1 answered %d, want 409", r.Status)
	}
	b.WaitText(`tr[data-user="u1"] [data-label="Role"]`, "Admin")
	b.Shot("last-admin")
	b.Do("cancel the edit", chromedp.Click(chromedp.CSS(`#edit-user button[type=button]`)), chromedp.WaitNotPresent(chromedp.CSS(`#edit-user`)))

	// Invite: the link is shown once, absolute, with a copy button.
	b.Do("invite",
		chromedp.SetValue(chromedp.CSS(`#invite-display_name`), "Dana Reyes"),
		chromedp.SetValue(chromedp.CSS(`#invite-department`), "Operations"),
		chromedp.Click(chromedp.CSS(`#invite button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#login-link`)))
	link := b.srv.URL + "/login?token=invite-u4-secret"
	if got := eval[string](b, `document.getElementById('login-link').value`); got != link {
		t.Errorf("login link %q, want %q", got, link)
	}
	b.WaitText(`.link-panel h2`, "Login link for Dana Reyes")
	b.WaitText(`.link-panel`, "this is the only time it is shown")
	if got := eval[string](b, `document.activeElement.className`); got != "link-panel" {
		t.Errorf("focus on %q, want the link panel", got)
	}
	if d := cmp.Diff(map[string]any{"display_name": "Dana Reyes", "department": "Operations", "timezone": testZone, "role": "member"},
		b.sent("POST", "/api/users").Body); d != "" {
		t.Errorf("invite body (-want +got):\n%s", d)
	}
	b.Do("Dana listed", chromedp.WaitVisible(chromedp.CSS(`tr[data-user="u4"]`)))
	b.Do("copy", chromedp.Click(chromedp.CSS(`#copy-link`)))
	b.WaitText(`#copy-status`, "Copied.")
	ctx, cancel := b.Step()
	clip, err := chromedp.Run(ctx, chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise))
	cancel()
	if err != nil || clip != link {
		t.Errorf("clipboard %q (%v), want %q", clip, err, link)
	}
	b.Shot("invited")
	b.Do("done", chromedp.Click(chromedp.CSS(`.link-panel .row:last-child button`)), chromedp.WaitNotPresent(chromedp.CSS(`#login-link`)))
	b.open("#/chat", `.new-conv`)
	b.open("#/people", `tr[data-user="u4"]`)
	if eval[bool](b, `document.documentElement.outerHTML.includes('invite-u4-secret')`) {
		t.Error("the invitation link is shown again")
	}
	for _, x := range b.rec.exchanges() {
		if x.Method == "GET" && strings.Contains(x.Response, "token=") {
			t.Errorf("GET %s answered a login link", x.Path)
		}
	}

	// Make Bruno an admin.
	b.Do("edit Bruno", chromedp.Click(chromedp.CSS(`tr[data-user="u2"] button[aria-label="Edit Bruno Costa"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#edit-user`)))
	if got := eval[string](b, `document.activeElement.id`); got != "edit-display_name" {
		t.Errorf("focus on %q, want the edit form's first field", got)
	}
	b.Do("make admin", chromedp.SetValue(chromedp.CSS(`#edit-role`), "admin"), chromedp.Click(chromedp.CSS(`#edit-user button[type=submit]`)),
		chromedp.WaitNotPresent(chromedp.CSS(`#edit-user`)))
	b.WaitText(`tr[data-user="u2"] [data-label="Role"]`, "Admin")
	if d := cmp.Diff(map[string]any{"role": "admin"}, b.sent("PATCH", "/api/users/u2").Body); d != "" {
		t.Errorf("PATCH body (-want +got):\n%s", d)
	}

	// A new login link for Bruno.
	b.Do("new link", chromedp.Click(chromedp.CSS(`tr[data-user="u2"] button[aria-label="New login link for Bruno Costa"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#login-link`)))
	b.WaitText(`.link-panel h2`, "Login link for Bruno Costa")
	if got := eval[string](b, `document.getElementById('login-link').value`); got != b.srv.URL+"/login?token=relink-u2-secret" {
		t.Errorf("new login link %q", got)
	}

	// Disable Bruno: first keep him, then confirm.
	disable := chromedp.Click(chromedp.CSS(`tr[data-user="u2"] button.danger`))
	b.Do("disable Bruno", disable)
	b.confirmDialog("Disable Bruno Costa?", "no")
	if n := len(b.requests("DELETE", "/api/users/u2")); n != 0 {
		t.Fatalf("kept user disabled (%d requests)", n)
	}
	b.Do("disable Bruno", disable)
	b.Shot("confirm-disable")
	b.confirmDialog("Disable Bruno Costa?", "yes")
	b.WaitText(`tr[data-user="u2"] [data-label="Status"]`, "Disabled")
	b.WaitText(`#people-status`, "Disabled Bruno Costa.")
	if r := b.sent("DELETE", "/api/users/u2"); r.Status != 204 {
		t.Errorf("DELETE /api/users/u2 answered %d", r.Status)
	}
	if got := b.people()["u2"]; !cmp.Equal(got.Actions, []string{"Enable", "Erase"}) {
		t.Errorf("a disabled user has actions %v, want Enable and Erase", got.Actions)
	}
	b.Shot("disabled")
	b.checkHeaders(stubCSRF)
}

// TestPeopleDisableEnable disables Bruno, enables him again without a
// question, and makes him a new login link; then enables Chi, disabled
// from the start.
func TestPeopleDisableEnable(t *testing.T) {
	b := newBrowser(t, newStubAPI())
	b.login()
	b.open("#/people", `tr[data-user="u2"]`)
	row := `tr[data-user="u2"]`
	b.Do("disable Bruno", chromedp.Click(chromedp.CSS(row+` button.danger`)))
	b.confirmDialog("Disable Bruno Costa?", "yes")
	b.WaitText(row+` [data-label="Status"]`, "Disabled")
	b.WaitText(`#people-status .ok`, "Disabled Bruno Costa.")
	if d := cmp.Diff(personRow{"Bruno Costa", "Member", "Disabled", []string{"Enable", "Erase"}}, b.people()["u2"]); d != "" {
		t.Errorf("Bruno disabled (-want +got):\n%s", d)
	}

	b.Do("enable Bruno", chromedp.Click(chromedp.CSS(row+` button[aria-label="Enable Bruno Costa"]`)))
	b.WaitText(row+` [data-label="Status"]`, "Active")
	b.WaitText(`#people-status .ok`, "Enabled Bruno Costa. Their old sign-ins stay revoked: make them a new login link.")
	if r := b.sent("POST", "/api/users/u2/enable"); r.Status != 200 {
		t.Errorf("POST /api/users/u2/enable answered %d, want 200", r.Status)
	}
	if eval[bool](b, `!!document.querySelector('dialog.confirm')`) {
		t.Error("enabling asked a question")
	}
	if d := cmp.Diff(personRow{"Bruno Costa", "Member", "Active", []string{"Edit", "New login link", "Disable", "Erase"}}, b.people()["u2"]); d != "" {
		t.Errorf("Bruno enabled (-want +got):\n%s", d)
	}
	if got := eval[string](b, `document.activeElement.getAttribute('aria-label') ?? ''`); got != "New login link for Bruno Costa" {
		t.Errorf("focus on %q, want Bruno's New login link", got)
	}
	b.Shot("enabled")

	b.Do("new link", chromedp.Click(chromedp.CSS(row+` button[aria-label="New login link for Bruno Costa"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#login-link`)))
	if got := eval[string](b, `document.getElementById('login-link').value`); got != b.srv.URL+"/login?token=relink-u2-secret" {
		t.Errorf("login link after enabling %q", got)
	}
	if r := b.sent("POST", "/api/users/u2/login-link"); r.Status != 201 {
		t.Errorf("POST /api/users/u2/login-link answered %d, want 201", r.Status)
	}

	b.Do("enable Chi", chromedp.Click(chromedp.CSS(`tr[data-user="u3"] button[aria-label="Enable Chi Nguyen"]`)))
	b.WaitText(`tr[data-user="u3"] [data-label="Status"]`, "Active")
	b.sent("POST", "/api/users/u3/enable")
	b.checkHeaders(stubCSRF)
}

// TestPeopleErase erases Bruno (kept at first, then confirmed) and Chi,
// disabled: each row goes, and nothing offers to erase yourself.
func TestPeopleErase(t *testing.T) {
	b := newBrowser(t, newStubAPI())
	b.login()
	b.open("#/people", `tr[data-user="u2"]`)
	erase := chromedp.Click(chromedp.CSS(`tr[data-user="u2"] button.erase`))
	b.Do("erase Bruno", erase)
	b.confirmDialog("Erase Bruno Costa for good?", "no")
	if n := len(b.requests("POST", "/api/users/u2/erase")); n != 0 {
		t.Fatalf("kept user erased (%d requests)", n)
	}
	if got := eval[string](b, `document.activeElement.getAttribute('aria-label') ?? ''`); got != "Erase Bruno Costa" {
		t.Errorf("focus after keeping Bruno on %q, want his Erase", got)
	}
	b.Do("erase Bruno", erase)
	b.confirmDialog("Erase Bruno Costa for good?", "yes")
	b.WaitText(`#people-status .ok`, "Erased Bruno Costa.")
	if r := b.sent("POST", "/api/users/u2/erase"); r.Status != 204 {
		t.Errorf("POST /api/users/u2/erase answered %d, want 204", r.Status)
	}
	b.Do("erase Chi", chromedp.Click(chromedp.CSS(`tr[data-user="u3"] button[aria-label="Erase Chi Nguyen"]`)))
	b.confirmDialog("Erase Chi Nguyen for good?", "yes")
	b.WaitText(`#people-status .ok`, "Erased Chi Nguyen.")
	want := map[string]personRow{"u1": {"Ana Lima (you)", "Admin", "Active", []string{"Edit", "New login link"}}}
	if d := cmp.Diff(want, b.people()); d != "" {
		t.Errorf("people after erasing (-want +got):\n%s", d)
	}
	b.checkHeaders(stubCSRF)
}

func TestPeopleDemoteYourself(t *testing.T) {
	api := newStubAPI()
	api.users[1].Role = "admin" // Bruno: Ana is not the last admin
	b := newBrowser(t, api)
	b.login()
	b.open("#/people", `tr[data-user="u1"]`)
	b.Do("edit yourself", chromedp.Click(chromedp.CSS(`tr[data-user="u1"] button[aria-label="Edit Ana Lima"]`)),
		chromedp.SetValue(chromedp.CSS(`#edit-display_name`), "Ana M. Lima"),
		chromedp.SetValue(chromedp.CSS(`#edit-role`), "member"), chromedp.Click(chromedp.CSS(`#edit-user button[type=submit]`)))
	b.confirmDialog("Make yourself a member?", "yes")
	b.WaitText(`main h1`, "New chat")
	b.WaitText(`#who-name`, "Ana M. Lima")
	if got := eval[string](b, `document.getElementById('who-name').textContent`); got != "Ana M. Lima" {
		t.Errorf("header %q, want the new name without (admin)", got)
	}
	if !eval[bool](b, `document.querySelector('#nav a[href="#/people"]').closest('li').hidden`) {
		t.Error("People still in a member's navigation")
	}
	if d := cmp.Diff(map[string]any{"display_name": "Ana M. Lima", "role": "member"}, b.sent("PATCH", "/api/users/u1").Body); d != "" {
		t.Errorf("PATCH body (-want +got):\n%s", d)
	}
	for _, r := range b.rec.recorded() {
		if r.Status >= 400 {
			t.Errorf("%s %s answered %d", r.Method, r.Path, r.Status)
		}
	}
}

// TestBadZoneInBodyKeepsBrowserZone: a zone in the body refused with
// bad_timezone (the code a bad X-Timezone gets) is retried once without
// the header, and later requests send the browser's zone again.
func TestBadZoneInBodyKeepsBrowserZone(t *testing.T) {
	b := newBrowser(t, newStubAPI())
	b.login()
	b.open("#/people", `tr[data-user="u2"]`)
	b.Do("edit Bruno", chromedp.Click(chromedp.CSS(`tr[data-user="u2"] button[aria-label="Edit Bruno Costa"]`)),
		chromedp.SetValue(chromedp.CSS(`#edit-timezone`), "Mars/Olympus"), chromedp.Click(chromedp.CSS(`#edit-user button[type=submit]`)))
	b.WaitText(`#people-status .alert`, "Bruno Costa not saved: timezone: unknown time zone Mars/Olympus")
	b.Do("a good zone", chromedp.SetValue(chromedp.CSS(`#edit-timezone`), "Europe/Madrid"),
		chromedp.Click(chromedp.CSS(`#edit-user button[type=submit]`)), chromedp.WaitNotPresent(chromedp.CSS(`#edit-user`)))
	b.WaitText(`tr[data-user="u2"] [data-label="Timezone"]`, "Europe/Madrid")
	var got []string
	for _, r := range b.requests("PATCH", "/api/users/u2") {
		got = append(got, fmt.Sprintf("%v %q %d", r.Body["timezone"], r.Timezone, r.Status))
	}
	want := []string{`Mars/Olympus "Europe/Paris" 400`, `Mars/Olympus "" 400`, `Europe/Madrid "Europe/Paris" 200`}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("PATCH /api/users/u2: body zone, X-Timezone, status (-want +got):\n%s", d)
	}
	if rs := b.requests("GET", "/api/users"); rs[len(rs)-1].Timezone != testZone {
		t.Errorf("the list read after the refusal sent X-Timezone %q, want %q", rs[len(rs)-1].Timezone, testZone)
	}
}
