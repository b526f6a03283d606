package httpapi_test

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/accounts"
	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/webui"
)

// signInPage opens a link's sign-in page as a browser (as w; nil:
// without a session) and returns it with the confirmation cookie it set.
func (f *fixture) signInPage(w *who, link string) (response, *http.Cookie) {
	f.t.Helper()
	r := f.do(w, "GET", "/login?token="+url.QueryEscape(link), nil, "Accept: "+acceptChrome)
	f.ok(r, http.StatusOK, nil)
	c := cookieNamed(r, "quiver_login")
	if c == nil {
		f.t.Fatalf("the sign-in page set no quiver_login cookie: %v", r.Header.Values("Set-Cookie"))
	}
	return r, c
}

// postSignIn sends the sign-in form (token and confirm) as w, with the
// confirmation cookie when non-nil and the headers "Name: value".
func (f *fixture) postSignIn(w *who, token, confirm string, cookie *http.Cookie, headers ...string) response {
	f.t.Helper()
	form := url.Values{"token": {token}, "confirm": {confirm}}
	req := f.request(w, "POST", "/login", form.Encode(), headers...)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if cookie != nil {
		req.AddCookie(&http.Cookie{Name: cookie.Name, Value: cookie.Value})
	}
	return f.send(req)
}

// sameOrigin are the headers a browser sends with a form posted from a
// page of the test server, but Accept (the answer is JSON).
func sameOrigin(f *fixture) []string {
	return []string{"Origin: " + f.srv.URL, "Sec-Fetch-Site: same-origin"}
}

// fromPage are the headers of a browser posting a form from a page of
// the test server, Accept included (a failure is a page).
func fromPage(f *fixture) []string {
	return append(sameOrigin(f), "Accept: "+acceptChrome)
}

// follow signs in as a browser does with a login link (path: the
// /login?token=… the API hands out): it opens the sign-in page and
// presses Sign in, and returns the answer to that.
func (f *fixture) follow(path string) response {
	f.t.Helper()
	u, err := url.Parse(path)
	f.must(err)
	token := u.Query().Get("token")
	_, c := f.signInPage(nil, token)
	return f.postSignIn(nil, token, c.Value, c, fromPage(f)...)
}

// linkUnused fails the test unless the link can still be used.
func (f *fixture) linkUnused(link string) {
	f.t.Helper()
	if _, err := f.st.LookupCredential(f.ctx, store.CredLoginLink, accounts.HashSecret(link), f.clock.Now()); err != nil {
		f.t.Fatalf("the login link was used or lost: %v", err)
	}
}

var confirmInput = regexp.MustCompile(`<input type="hidden" name="confirm" value="([^"]*)">`)

// TestLoginPageChangesNothing: following a link, as a browser or as a
// link preview (twice, any Accept), shows the sign-in page and leaves
// everything as it was: no session, no session cookie, the link usable.
func TestLoginPageChangesNothing(t *testing.T) {
	f := newFixture(t, nil)
	link := f.loginLink("org_a", "bob", start.Add(time.Hour))
	for i, accept := range []string{acceptChrome, "*/*", "", acceptChrome} {
		var headers []string
		if accept != "" {
			headers = append(headers, "Accept: "+accept)
		}
		r := f.do(nil, "GET", "/login?token="+link, nil, headers...)
		f.ok(r, http.StatusOK, nil)
		if c := sessionCookie(r); c != nil {
			t.Errorf("GET %d (Accept %q) set a session cookie %+v", i, accept, c)
		}
		if !strings.Contains(string(r.body), "Bob") {
			t.Errorf("GET %d (Accept %q): the page does not name Bob:\n%s", i, accept, r.body)
		}
		f.linkUnused(link)
	}
	if s, err := f.st.ListCredentials(f.ctx, "org_a", "bob", store.CredSession); err != nil || len(s) != 0 {
		t.Errorf("bob has %d sessions after the GETs (%v), want none", len(s), err)
	}
	// And it still signs in, once.
	f.ok(f.do(nil, "POST", "/api/login", map[string]string{"token": link}), http.StatusOK, nil)
	wantError(t, f.do(nil, "POST", "/api/login", map[string]string{"token": link}), http.StatusUnauthorized, "invalid_link")
}

// TestLoginPage: the page names the account and the organisation, carries
// the web UI's security headers, keeps the token to itself, and its form
// echoes the confirmation cookie it sets (kept across pages).
func TestLoginPage(t *testing.T) {
	f := newFixture(t, nil)
	link := f.loginLink("org_a", "bob", start.Add(time.Hour))
	r, c := f.signInPage(nil, link)
	// One inline script, allowed by its hash and nothing else: it keeps
	// the button disabled for a moment (see armScript).
	scripts := inlineScript.FindAllStringSubmatch(string(r.body), -1)
	if len(scripts) != 1 || !strings.Contains(scripts[0][1], "b.disabled=true") {
		t.Fatalf("scripts %q, want the one that arms the button", scripts)
	}
	sum := sha256.Sum256([]byte(scripts[0][1]))
	csp := strings.Replace(webui.ContentSecurityPolicy, "script-src 'self'",
		"script-src 'self' 'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'", 1)
	for h, want := range map[string]string{
		"Content-Type":            "text/html; charset=utf-8",
		"Content-Security-Policy": csp,
		"X-Frame-Options":         "DENY",
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         "no-referrer",
		"Cache-Control":           "no-store",
	} {
		if got := r.Header.Get(h); got != want {
			t.Errorf("%s: %q, want %q", h, got, want)
		}
	}
	page := string(r.body)
	for _, want := range []string{
		`<strong id="account"><bdi>Bob</bdi></strong>`, `<strong id="organisation"><bdi>Acme</bdi></strong>`, `<code id="account-id">bob</code>`,
		`<form method="post" action="/login">`, `<button type="submit" class="primary" id="sign-in">Sign in as <bdi>Bob</bdi></button>`,
		`<input type="hidden" name="token" value="` + link + `">`, `<meta name="referrer" content="no-referrer">`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s:\n%s", want, page)
		}
	}
	if n := strings.Count(page, link); n != 1 {
		t.Errorf("the token is %d times in the page, want once (the form's field)", n)
	}
	wantOwnStylesOnly(t, page)
	want := http.Cookie{Name: "quiver_login", Value: c.Value, Path: "/login", MaxAge: 900, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Raw: c.Raw}
	if diff := cmp.Diff(&want, c); diff != "" {
		t.Errorf("confirmation cookie (-want +got):\n%s", diff)
	}
	if m := confirmInput.FindStringSubmatch(page); m == nil || m[1] != c.Value || len(c.Value) < 43 {
		t.Errorf("the form's confirm field %q, want the cookie's %q", m, c.Value)
	}

	// A second page in the same browser keeps the value, so the first
	// page still signs in; a browser without the cookie gets a new one.
	other := f.loginLink("org_a", "alice", start.Add(time.Hour))
	again := f.do(&who{}, "GET", "/login?token="+other, nil, "Accept: "+acceptChrome, "Cookie: quiver_login="+c.Value)
	if c2 := cookieNamed(again, "quiver_login"); c2 == nil || c2.Value != c.Value {
		t.Errorf("the second page's cookie %+v, want the value kept", c2)
	}
	if _, fresh := f.signInPage(nil, other); fresh.Value == c.Value {
		t.Error("two browsers got the same confirmation value")
	}
	f.ok(f.postSignIn(nil, link, c.Value, c, sameOrigin(f)...), http.StatusSeeOther, nil)
}

// inlineScript finds a page's inline scripts.
var inlineScript = regexp.MustCompile(`(?s)<script>(.*?)</script>`)

// pageRef finds the addresses a page links or loads.
var pageRef = regexp.MustCompile(`(?i)\b(?:href|src|action)="([^"]*)"`)

// wantOwnStylesOnly fails unless a login page is styled by the web UI's
// stylesheet alone, with no inline style, and links and loads nothing
// outside its own origin.
func wantOwnStylesOnly(t *testing.T, page string) {
	t.Helper()
	if !strings.Contains(page, `<link rel="stylesheet" href="/assets/css/app.css">`) {
		t.Error("the page does not load the web UI's stylesheet")
	}
	for _, banned := range []string{"<style", "style=", "http:", "https:", "//"} {
		if strings.Contains(strings.ToLower(strings.ReplaceAll(page, "<!doctype html>", "")), banned) {
			t.Errorf("the page holds %q", banned)
		}
	}
	for _, m := range pageRef.FindAllStringSubmatch(page, -1) {
		if !strings.HasPrefix(m[1], "/") || strings.HasPrefix(m[1], "//") {
			t.Errorf("the page refers to %q, outside its own origin", m[1])
		}
	}
}

// TestLoginPageEscapes: a display name or organisation name written as
// HTML is shown as text.
func TestLoginPageEscapes(t *testing.T) {
	f := newFixture(t, nil)
	const name, org = `<img src=x onerror=alert(1)>"Mallory`, `<b>Evil</b> & "Co"`
	f.must(f.st.CreateOrg(f.ctx, store.Org{ID: "org_x", Name: org, CreatedAt: start}))
	f.must(f.st.CreateUser(f.ctx, store.User{ID: "mallory", OrgID: "org_x", DisplayName: name, Role: store.RoleMember, CreatedAt: start, UpdatedAt: start}))
	r, _ := f.signInPage(nil, f.loginLink("org_x", "mallory", start.Add(time.Hour)))
	page := string(r.body)
	for _, want := range []string{
		`<strong id="account"><bdi>&lt;img src=x onerror=alert(1)&gt;&#34;Mallory</bdi></strong>`,
		`<strong id="organisation"><bdi>&lt;b&gt;Evil&lt;/b&gt; &amp; &#34;Co&#34;</bdi></strong>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s:\n%s", want, page)
		}
	}
	for _, raw := range []string{"<img", "<b>"} {
		if strings.Contains(page, raw) {
			t.Errorf("the page holds %s unescaped:\n%s", raw, page)
		}
	}
}

// TestLoginFormRefused: a sign-in POST that is cross-site or lacks the
// page's confirmation is refused (403, a page for browsers), and the link
// stays usable with no session made.
func TestLoginFormRefused(t *testing.T) {
	f := newFixture(t, nil)
	link := f.loginLink("org_a", "bob", start.Add(time.Hour))
	_, c := f.signInPage(nil, link)
	wrong := &http.Cookie{Name: "quiver_login", Value: accounts.NewSecret()}
	for _, tc := range []struct {
		name    string
		confirm string
		cookie  *http.Cookie
		headers []string
		code    string
	}{
		{"no confirm field", "", c, sameOrigin(f), "login_unconfirmed"},
		{"no cookie", c.Value, nil, sameOrigin(f), "login_unconfirmed"},
		{"another cookie", c.Value, wrong, sameOrigin(f), "login_unconfirmed"},
		{"field and cookie both empty", "", &http.Cookie{Name: "quiver_login", Value: ""}, sameOrigin(f), "login_unconfirmed"},
		{"cross-site", c.Value, c, []string{"Origin: https://evil.example", "Sec-Fetch-Site: cross-site"}, "cross_origin"},
		{"same site, other origin", c.Value, c, []string{"Origin: https://evil.example", "Sec-Fetch-Site: same-site"}, "cross_origin"},
		{"other Origin, no Sec-Fetch-Site", c.Value, c, []string{"Origin: https://evil.example"}, "cross_origin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := f.postSignIn(nil, link, tc.confirm, tc.cookie, tc.headers...)
			wantError(t, r, http.StatusForbidden, tc.code)
			page := f.postSignIn(nil, link, tc.confirm, tc.cookie, append(tc.headers, "Accept: "+acceptChrome)...)
			if page.StatusCode != http.StatusForbidden || !strings.Contains(string(page.body), "has not been used") ||
				page.Header.Get("Content-Type") != "text/html; charset=utf-8" || page.Header.Get("X-Frame-Options") != "DENY" {
				t.Errorf("page: %d %v\n%s", page.StatusCode, page.Header, page.body)
			}
			wantOwnStylesOnly(t, string(page.body))
			if sessionCookie(r) != nil || sessionCookie(page) != nil {
				t.Error("a refused sign-in set a session cookie")
			}
			f.linkUnused(link)
		})
	}
	// The API path refuses another site's page too.
	wantError(t, f.do(nil, "POST", "/api/login", map[string]string{"token": link}, "Sec-Fetch-Site: cross-site"), http.StatusForbidden, "cross_origin")
	wantError(t, f.do(nil, "POST", "/api/login", `{"token":"`+link+`"}`, "Content-Type: text/plain"), http.StatusUnsupportedMediaType, "unsupported_media_type")
	// Without a type (what a no-cors fetch of an untyped Blob sends).
	wantError(t, f.do(nil, "POST", "/api/login", `{"token":"`+link+`"}`, "Content-Type: "), http.StatusUnsupportedMediaType, "unsupported_media_type")
	f.linkUnused(link)
	if s, err := f.st.ListCredentials(f.ctx, "org_a", "bob", store.CredSession); err != nil || len(s) != 0 {
		t.Errorf("bob has %d sessions (%v), want none", len(s), err)
	}
}

// TestLoginForm: the page's form, posted from the page, consumes the link
// and starts the session; the link is then used.
func TestLoginForm(t *testing.T) {
	f := newFixture(t, nil)
	link := f.loginLink("org_a", "bob", start.Add(time.Hour))
	_, c := f.signInPage(nil, link)
	r := f.postSignIn(nil, link, c.Value, c, fromPage(f)...)
	f.ok(r, http.StatusSeeOther, nil)
	if loc := r.Header.Get("Location"); loc != "/" {
		t.Errorf("Location %q, want /", loc)
	}
	s := sessionCookieOf(t, r)
	if !s.HttpOnly || s.SameSite != http.SameSiteLaxMode || s.Path != "/" {
		t.Errorf("session cookie %+v", s)
	}
	if gone := cookieNamed(r, "quiver_login"); gone == nil || gone.MaxAge >= 0 || gone.Path != "/login" {
		t.Errorf("the confirmation cookie is not deleted: %+v", gone)
	}
	var me httpapi.Me
	f.ok(f.do(&who{session: s.Value}, "GET", "/api/me", nil), http.StatusOK, &me)
	if me.UserID != "bob" || me.Auth != "session" || me.CSRFToken == "" {
		t.Errorf("me %+v", me)
	}
	if _, err := f.st.LookupCredential(f.ctx, store.CredLoginLink, accounts.HashSecret(link), f.clock.Now()); err == nil {
		t.Error("the link still works after signing in")
	}
	if strings.Contains(f.logs.String(), link) || strings.Contains(f.logs.String(), c.Value) {
		t.Error("the log holds the link's or the confirmation's secret")
	}

	// Used now: the form and the page both say so, naming nobody.
	again := f.postSignIn(nil, link, c.Value, c, fromPage(f)...)
	wantLoginPage(t, again)
	wantError(t, f.postSignIn(nil, link, c.Value, c, "Origin: "+f.srv.URL), http.StatusUnauthorized, "invalid_link")
	wantLoginPage(t, f.do(nil, "GET", "/login?token="+link, nil, "Accept: "+acceptChrome))

	// A program without browser headers may post the form too, with the
	// page's cookie.
	link2 := f.loginLink("org_a", "bob", start.Add(time.Hour))
	_, c2 := f.signInPage(nil, link2)
	f.ok(f.postSignIn(nil, link2, c2.Value, c2), http.StatusSeeOther, nil)
}

// TestLoginReplacesSession: signing in again in a browser that holds a
// session of the same user ends that session, so sign-ins do not pile up.
func TestLoginReplacesSession(t *testing.T) {
	f := newFixture(t, nil)
	first := f.do(nil, "POST", "/api/login", map[string]string{"token": f.loginLink("org_a", "bob", start.Add(time.Hour))})
	f.ok(first, http.StatusOK, nil)
	old := sessionCookieOf(t, first)
	second := f.do(&who{session: old.Value}, "POST", "/api/login", map[string]string{"token": f.loginLink("org_a", "bob", start.Add(time.Hour))})
	f.ok(second, http.StatusOK, nil)
	if s, err := f.st.ListCredentials(f.ctx, "org_a", "bob", store.CredSession); err != nil || len(s) != 1 {
		t.Fatalf("bob has %d sessions (%v), want the new one only", len(s), err)
	}
	wantError(t, f.do(&who{session: old.Value}, "GET", "/api/me", nil), http.StatusUnauthorized, "unauthorized")
	f.ok(f.do(&who{session: sessionCookieOf(t, second).Value}, "GET", "/api/me", nil), http.StatusOK, nil)
}
