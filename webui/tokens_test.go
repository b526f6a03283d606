package webui_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/store"
)

// bearerStatus is what GET /api/me answers a program sending token.
func (b *browser) bearerStatus(token string) int {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodGet, b.srv.URL+"/api/me", nil)
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// tokenRow is one listed token as the page shows it.
type tokenRow struct{ Label, Expires, Actions string }

// tokenRows reads the token list by id.
func (b *browser) tokenRows() map[string]tokenRow {
	b.t.Helper()
	return eval[map[string]tokenRow](b, `Object.fromEntries([...document.querySelectorAll('tr[data-token]')].map(r => {
		const cell = (l) => r.querySelector('[data-label="' + l + '"]').textContent;
		return [r.dataset.token, { Label: cell('Label'), Expires: cell('Expires') === 'Never' ? 'Never' : 'a date', Actions: cell('Actions') }];
	}))`)
}

// TestAPITokensCreateCopyRevoke runs the API tokens page against httpapi
// itself: a token made there is shown once (with a copy button that
// copies it), works as a bearer token, is listed without its secret, and
// stops working when revoked.
func TestAPITokensCreateCopyRevoke(t *testing.T) {
	eachWidth(t, func(t *testing.T, vp width) {
		st, _, b := realAPI(t)
		b.use(vp)
		b.grantClipboard()
		b.open("#/preferences", `#tokens-link`)
		b.Do("open API tokens", chromedp.Click(chromedp.CSS(`#tokens-link`)), chromedp.WaitVisible(chromedp.CSS(`#token-form`)))
		b.WaitText(`main h1`, "API tokens")
		b.WaitText(`#token-list`, "You have no API tokens.")
		if cur := eval[string](b, `document.getElementById('who-name').getAttribute('aria-current') ?? ''`); cur != "page" {
			t.Errorf("the header's preferences link is not current on the tokens page (%q)", cur)
		}

		b.Do("create", chromedp.SetValue(chromedp.CSS(`#token-label`), "ci"), chromedp.SetValue(chromedp.CSS(`#token-expiry`), "30"),
			chromedp.Click(chromedp.CSS(`#token-create`)), chromedp.WaitVisible(chromedp.CSS(`#new-token`)))
		b.WaitText(`#new-token-h`, "Token “ci” created")
		secret := eval[string](b, `document.getElementById('new-token').value`)
		if got := eval[string](b, `document.getElementById('token-expiry').value`); got != "90" {
			t.Errorf("the form's lifetime after creating: %q days, want back to 90", got)
		}
		if len(secret) != 43 {
			t.Fatalf("the shown token %q is not a token", secret)
		}
		if got := b.sent("POST", "/api/tokens").Body; !cmp.Equal(got, map[string]any{"label": "ci", "expires_in_days": float64(30)}) {
			t.Errorf("create body %v", got)
		}
		if got := eval[string](b, `document.activeElement.getAttribute('aria-labelledby') ?? ''`); got != "new-token-h" {
			t.Errorf("focus after creating on %q, want the new token's panel", got)
		}
		b.Do("copy", chromedp.Click(chromedp.CSS(`#copy-token`)))
		b.WaitText(`#token-copy-status`, "Copied.")
		if clip := eval[string](b, `navigator.clipboard.readText()`, chromedp.EvalAwaitPromise); clip != secret {
			t.Errorf("clipboard %q, want the token", clip)
		}
		b.fits(vp, "the new token")
		b.Shot("created")
		if got := b.bearerStatus(secret); got != http.StatusOK {
			t.Errorf("the new token: GET /api/me answered %d, want 200", got)
		}
		rows := b.tokenRows()
		if len(rows) != 1 {
			t.Fatalf("listed %v, want the one token", rows)
		}
		var id string
		for k, r := range rows {
			id = k
			if d := cmp.Diff(tokenRow{Label: "ci", Expires: "a date", Actions: "Revoke"}, r); d != "" {
				t.Errorf("the listed token (-want +got):\n%s", d)
			}
		}
		if len(id) != 16 {
			t.Errorf("token id %q, want 16 hex digits", id)
		}

		// Done drops the secret: it is nowhere in the page any more, and
		// no list answer ever carried it.
		b.Do("done", chromedp.Click(chromedp.CSS(`#token-done`)), chromedp.WaitNotPresent(chromedp.CSS(`#new-token`)))
		b.noSecretInPage("after Done", secret)
		for _, x := range b.rec.exchanges() {
			if x.Method == "GET" && strings.Contains(x.Response, secret) {
				t.Errorf("GET %s answered with the token", x.Path)
			}
		}

		// Revoke, first keeping it.
		b.Do("revoke, keep", chromedp.Click(chromedp.CSS(`tr[data-token="`+id+`"] button.danger`)))
		b.confirmDialog("Revoke the token “ci”?", "no")
		if n := len(b.requests("DELETE", "/api/tokens/"+id)); n != 0 {
			t.Fatalf("kept token revoked (%d requests)", n)
		}
		b.Do("revoke", chromedp.Click(chromedp.CSS(`tr[data-token="`+id+`"] button.danger`)))
		b.confirmDialog("Programs that use it stop working at once.", "yes")
		b.WaitText(`#tokens-status`, "Revoked “ci”.")
		b.WaitText(`#token-list`, "You have no API tokens.")
		if got := b.bearerStatus(secret); got != http.StatusUnauthorized {
			t.Errorf("the revoked token: GET /api/me answered %d, want 401", got)
		}
		b.fits(vp, "the token list")
		b.Shot("revoked")
		sessions, err := st.ListCredentials(context.Background(), "org_a", "ana", store.CredSession)
		if err != nil || len(sessions) != 1 {
			t.Fatalf("sessions %v, %v", sessions, err)
		}
		for _, r := range b.rec.recorded() {
			if r.Method != "GET" && r.CSRF != sessions[0].CSRF {
				t.Errorf("%s %s: X-CSRF-Token %q, want the session's", r.Method, r.Path, r.CSRF)
			}
		}
		// The page in Vietnamese, from the catalog.
		b.Do("choose Vietnamese", chromedp.SetValue(chromedp.CSS(`#lang`), "vi"))
		b.WaitText(`main h1`, "API token")
		b.WaitText(`#token-list`, "Bạn chưa có API token nào.")
		b.WaitText(`#token-create`, "Tạo token")
	})
}
