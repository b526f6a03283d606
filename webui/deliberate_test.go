package webui_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
)

// triggers reads the custom triggers as listed: target → phrases.
func (b *browser) triggers() map[string][]string {
	b.t.Helper()
	return eval[map[string][]string](b, `Object.fromEntries([...document.querySelectorAll('.trigger-group')].map(g =>
		[g.dataset.target, [...g.querySelectorAll('li')].map(li => li.querySelector('.phrase').textContent)]))`)
}

// dtmForm reads the Deliberate Tool Mode form: the toggle, the chosen
// depth's label, the always-on choice and the classifier shift's label.
func (b *browser) dtmForm() string {
	b.t.Helper()
	return eval[string](b, `(() => { const s = document.getElementById('dtm-history'), c = document.getElementById('dtm-shift');
		return (document.getElementById('dtm-enabled').checked ? 'on' : 'off') + ', ' + s.options[s.selectedIndex].text +
			(document.getElementById('dtm-gate-always-on').checked ? ', gate' : ', keep') + ', ' + c.options[c.selectedIndex].text; })()`)
}

// addTrigger submits the add form.
func (b *browser) addTrigger(target, phrase string) {
	b.t.Helper()
	b.Do("add "+phrase, chromedp.SetValue(chromedp.CSS(`#trigger-target`), target),
		chromedp.SetValue(chromedp.CSS(`#trigger-phrase`), phrase), chromedp.Click(chromedp.CSS(`#trigger-add-button`)))
}

func TestDeliberateToolModeSettings(t *testing.T) {
	api := newStubAPI()
	var full []stubTrigger // video at the limit
	for i := range stubMaxTriggers {
		full = append(full, stubTrigger{"video", fmt.Sprintf("clip %d", i)})
	}
	api.dtm.triggers = append(api.dtm.triggers, full...)
	b := newBrowser(t, api)
	b.login()
	b.open("#/settings", `#dtm-form`)
	if got := b.dtmForm(); got != "off, Default (4), keep, The deployment's" {
		t.Errorf("mode form %q, want off, Default (4), keep", got)
	}
	want := map[string][]string{"search": {"look it up"}, "image": {"pfp", "^"}, "video": api.triggersOf("video")}
	if d := cmp.Diff(want, b.triggers()); d != "" {
		t.Errorf("triggers (-want +got):\n%s", d)
	}
	b.WaitText(`.trigger-group[data-target="image"] h4`, "2 of 16")
	targets := eval[[]string](b, `[...document.querySelectorAll('#trigger-target option')].map(o => o.value)`)
	if d := cmp.Diff(stubTargets, targets); d != "" {
		t.Errorf("target choices (-want +got):\n%s", d)
	}
	b.Shot("loaded")

	// Added: shown as the API normalised it.
	b.addTrigger("memory", "  Remember   THIS ")
	b.WaitText(`#trigger-status .ok`, "Added “remember this” to memory.")
	if d := cmp.Diff([]string{"remember this"}, b.triggers()["memory"]); d != "" {
		t.Errorf("memory's triggers (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]any{"target": "memory", "phrase": "  Remember   THIS "},
		b.sent("POST", "/api/deliberate/triggers").Body); d != "" {
		t.Errorf("add body (-want +got):\n%s", d)
	}
	if got := eval[string](b, `document.getElementById('trigger-phrase').value`); got != "" {
		t.Errorf("phrase field %q after adding, want it empty", got)
	}
	b.Shot("added")

	// A duplicate, a bad phrase and a full target: the API's messages.
	refusals := []struct{ target, phrase, msg string }{
		{"memory", "REMEMBER this", `Not added: "remember this" is already a memory trigger`},
		{"search", "a|b", `Not added: phrase "a|b" holds regular expression syntax`},
		{"video", "one more clip", "Not added: video already has 16 custom triggers (the limit)"},
	}
	for _, r := range refusals {
		b.addTrigger(r.target, r.phrase)
		b.WaitText(`#trigger-status .alert`, r.msg)
		if got := eval[string](b, `document.getElementById('trigger-phrase').value`); got != r.phrase {
			t.Errorf("%s: phrase field %q after a refusal, want the phrase kept", r.phrase, got)
		}
	}
	b.Shot("conflict")
	var statuses []int
	for _, r := range b.requests("POST", "/api/deliberate/triggers") {
		statuses = append(statuses, r.Status)
	}
	if d := cmp.Diff([]int{201, 409, 400, 409}, statuses); d != "" {
		t.Errorf("add statuses (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"remember this"}, b.triggers()["memory"]); d != "" {
		t.Errorf("memory's triggers after the refusals (-want +got):\n%s", d)
	}

	// Removed.
	b.Do("remove", chromedp.Click(chromedp.CSS(`button[aria-label="Remove remember this from memory"]`)),
		chromedp.WaitNotPresent(chromedp.CSS(`.trigger-group[data-target="memory"]`)))
	b.WaitText(`#trigger-status .ok`, "Removed “remember this” from memory.")
	del := b.sent("DELETE", "/api/deliberate/triggers")
	q, _ := url.ParseQuery(del.Query)
	if d := cmp.Diff(url.Values{"target": {"memory"}, "phrase": {"remember this"}}, q); del.Status != 204 || d != "" {
		t.Errorf("DELETE answered %d, query (-want +got):\n%s", del.Status, d)
	}
	if got := eval[string](b, `document.activeElement.id`); got != "triggers-h" {
		t.Errorf("focus on %q after removing, want the triggers' heading", got)
	}

	// The mode: on, re-scanning 2 messages; then the default again.
	b.Do("turn it on", chromedp.Click(chromedp.CSS(`#dtm-enabled`)), chromedp.SetValue(chromedp.CSS(`#dtm-history`), "2"),
		chromedp.Click(chromedp.CSS(`#dtm-save`)))
	b.WaitText(`#dtm-status .ok`, "Deliberate Tool Mode saved: on, 2 recent messages re-scanned, always-on tools kept; classifier: The deployment's.")
	if d := cmp.Diff(map[string]any{"enabled": true, "history_turns": float64(2), "gate_always_on": false, "classifier_shift_default": true}, b.sent("PUT", "/api/deliberate").Body); d != "" {
		t.Errorf("PUT /api/deliberate body (-want +got):\n%s", d)
	}
	b.Shot("saved")
	b.open("#/chat", `.new-conv`)
	b.open("#/settings", `#dtm-form`)
	if got := b.dtmForm(); got != "on, 2, keep, The deployment's" {
		t.Errorf("mode form after reloading %q, want on, 2, keep, The deployment's", got)
	}
	// Back to the default depth, the always-on tools gated too, and the
	// classifier opening fewer families.
	b.Do("back to the default", chromedp.SetValue(chromedp.CSS(`#dtm-history`), "-1"),
		chromedp.Click(chromedp.CSS(`#dtm-gate-always-on`)), chromedp.SetValue(chromedp.CSS(`#dtm-shift`), "0.2"),
		chromedp.Click(chromedp.CSS(`#dtm-save`)))
	b.WaitText(`#dtm-status .ok`, "Deliberate Tool Mode saved: on, the default depth (4 recent messages re-scanned), always-on tools gated too; classifier: +0.20: opens fewer.")
	if puts := b.requests("PUT", "/api/deliberate"); len(puts) != 2 ||
		!cmp.Equal(puts[1].Body, map[string]any{"enabled": true, "history_turns": float64(-1), "gate_always_on": true, "classifier_shift": 0.2}) {
		t.Errorf("PUT /api/deliberate requests %+v, want a second with history_turns -1, gate_always_on and classifier_shift 0.2", puts)
	}
	b.open("#/chat", `.new-conv`)
	b.open("#/settings", `#dtm-form`)
	if got := b.dtmForm(); got != "on, Default (4), gate, +0.20: opens fewer" {
		t.Errorf("mode form after reloading %q, want on, Default (4), gate, +0.20: opens fewer", got)
	}
	// The settings' own form saw none of it.
	if n := len(b.requests("PUT", "/api/settings")); n != 0 {
		t.Errorf("%d PUT /api/settings, want none", n)
	}
	b.checkHeaders(stubCSRF)
}

// profileForm reads the Preferences form's fields and the chosen mode.
func (b *browser) profileForm() map[string]string {
	b.t.Helper()
	return eval[map[string]string](b, `({
		name: document.getElementById('pref-display_name').value,
		department: document.getElementById('pref-department').value,
		timezone: document.getElementById('pref-timezone').value,
		mode: document.querySelector('input[name="dtm_mode"]:checked')?.value ?? '(none)' })`)
}

func TestPreferencesMemberChangesModeAndTimezone(t *testing.T) {
	api := newStubAPI()
	api.member.Store(true)
	b := newBrowser(t, api)
	b.login()
	b.Do("open from the header", chromedp.Click(chromedp.CSS(`#who-name`)), chromedp.WaitVisible(chromedp.CSS(`#prefs-form`)))
	b.WaitText(`main h1`, "Preferences")
	if got := eval[string](b, `location.hash`); got != "#/preferences" {
		t.Errorf("address %q, want #/preferences", got)
	}
	if got := eval[string](b, `document.getElementById('who-name').getAttribute('aria-current') ?? ''`); got != "page" {
		t.Errorf("header link aria-current %q, want page", got)
	}
	// The stored zone, not the browser's.
	want := map[string]string{"name": "Ana Lima", "department": "Finance", "timezone": "Asia/Ho_Chi_Minh", "mode": "follow"}
	if d := cmp.Diff(want, b.profileForm()); d != "" {
		t.Errorf("preferences (-want +got):\n%s", d)
	}
	b.WaitText(`#pref-timezone-help`, "This browser sends its own zone, "+testZone)
	b.WaitText(`#pref-mode-on-help`, "only the tool families your message plainly asks for")
	b.Shot("loaded")

	// A zone the server does not know: its message, and the edits stay.
	b.Do("a bad zone", chromedp.SetValue(chromedp.CSS(`#pref-timezone`), "Mars/Olympus"),
		chromedp.Click(chromedp.CSS(`#pref-mode-on`)), chromedp.Click(chromedp.CSS(`#prefs-save`)))
	b.WaitText(`#prefs-status .alert`, "Not saved: timezone: unknown time zone Mars/Olympus")
	if got := b.profileForm(); got["timezone"] != "Mars/Olympus" || got["mode"] != "on" {
		t.Errorf("form after a refusal %v, want the edits kept", got)
	}
	if n := len(b.requests("PUT", "/api/me/deliberate")); n != 0 {
		t.Errorf("the mode was sent after the profile was refused (%d requests)", n)
	}

	b.Do("save", chromedp.SetValue(chromedp.CSS(`#pref-timezone`), "America/Sao_Paulo"), chromedp.Click(chromedp.CSS(`#prefs-save`)))
	b.WaitText(`#prefs-status .ok`, "Preferences saved.")
	patches := b.requests("PATCH", "/api/me")
	if len(patches) != 2 {
		t.Fatalf("%d PATCH /api/me, want 2: %+v", len(patches), patches)
	}
	if d := cmp.Diff(request{Method: "PATCH", Path: "/api/me", CSRF: stubCSRF,
		Body: map[string]any{"timezone": "America/Sao_Paulo"}, Status: 200}, patches[1]); d != "" {
		t.Errorf("PATCH /api/me (-want +got):\n%s", d)
	}
	if d := cmp.Diff(request{Method: "PUT", Path: "/api/me/deliberate", CSRF: stubCSRF, Timezone: testZone,
		Body: map[string]any{"mode": "on"}, Status: 200}, b.sent("PUT", "/api/me/deliberate")); d != "" {
		t.Errorf("PUT /api/me/deliberate (-want +got):\n%s", d)
	}
	if got := eval[string](b, `document.activeElement.id`); got != "prefs-status" {
		t.Errorf("focus on %q after saving, want the status", got)
	}
	b.Shot("saved")

	// Saving again sends nothing; the page read anew shows what was saved.
	before := len(b.rec.recorded())
	b.Do("save unchanged", chromedp.Click(chromedp.CSS(`#prefs-save`)))
	b.WaitText(`#prefs-status`, "Nothing changed.")
	if got := b.rec.recorded()[before:]; len(got) != 0 {
		t.Errorf("an unchanged save sent %+v", got)
	}
	b.open("#/chat", `.new-conv`)
	b.open("#/preferences", `#prefs-form`)
	want["timezone"], want["mode"] = "America/Sao_Paulo", "on"
	if d := cmp.Diff(want, b.profileForm()); d != "" {
		t.Errorf("preferences read again (-want +got):\n%s", d)
	}

	// A new name: only it is sent, and the header shows it.
	b.Do("rename", chromedp.SetValue(chromedp.CSS(`#pref-display_name`), "Ana M. Lima"), chromedp.Click(chromedp.CSS(`#prefs-save`)))
	b.WaitText(`#prefs-status .ok`, "Preferences saved.")
	b.WaitText(`#who-name`, "Ana M. Lima")
	if patches := b.requests("PATCH", "/api/me"); len(patches) != 3 || !cmp.Equal(patches[2].Body, map[string]any{"display_name": "Ana M. Lima"}) {
		t.Errorf("PATCH /api/me requests %+v, want a third with the name alone", patches)
	}
	if n := len(b.requests("PUT", "/api/me/deliberate")); n != 1 {
		t.Errorf("%d PUT /api/me/deliberate, want the first save's alone", n)
	}

	// The profile goes without the browser's zone (so /api/me answers the
	// stored one); every other request carries it.
	for _, r := range b.rec.recorded() {
		if r.Timezone != testZone && !(r.Path == "/api/me" && r.Timezone == "") {
			t.Errorf("%s %s: X-Timezone %q, want %q", r.Method, r.Path, r.Timezone, testZone)
		}
		if r.Method != "GET" && r.CSRF != stubCSRF {
			t.Errorf("%s %s: X-CSRF-Token %q", r.Method, r.Path, r.CSRF)
		}
	}
	zoneless := 0
	for _, r := range b.requests("GET", "/api/me") {
		if r.Timezone == "" {
			zoneless++
		}
	}
	if zoneless != 2 {
		t.Errorf("%d GET /api/me without X-Timezone, want 2 (each time Preferences opened)", zoneless)
	}
	for _, r := range b.rec.recorded() {
		if strings.HasPrefix(r.Path, "/api/deliberate") {
			t.Errorf("a member's Preferences asked %s %s", r.Method, r.Path)
		}
	}
}
