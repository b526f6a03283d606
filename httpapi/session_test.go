package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/accounts"
	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/store"
)

// loginLink stores a one-time login link for the user and returns its
// secret.
func (f *fixture) loginLink(org, user string, expires time.Time) string {
	f.t.Helper()
	tok, err := (&accounts.Service{Store: f.st}).Issue(f.ctx, store.Credential{Kind: store.CredLoginLink, OrgID: org, UserID: user, CreatedAt: f.clock.Now(), ExpiresAt: expires})
	f.must(err)
	return tok
}

// login signs in with a login link through POST /api/login and returns
// the browser's session with its CSRF token.
func (f *fixture) login(org, user string) *who {
	f.t.Helper()
	r := f.do(nil, "POST", "/api/login", map[string]string{"token": f.loginLink(org, user, f.clock.Now().Add(time.Hour))})
	var me httpapi.Me
	f.ok(r, http.StatusOK, &me)
	return &who{session: sessionCookieOf(f.t, r).Value, csrf: me.CSRFToken}
}

func sessionCookieOf(t *testing.T, r response) *http.Cookie {
	t.Helper()
	c := sessionCookie(r)
	if c == nil {
		t.Fatalf("no quiver_session cookie in %v", r.Header.Values("Set-Cookie"))
	}
	return c
}

// sessionCookie is the response's quiver_session cookie, or nil.
func sessionCookie(r response) *http.Cookie { return cookieNamed(r, "quiver_session") }

// cookieNamed is the response's cookie of that name, or nil.
func cookieNamed(r response, name string) *http.Cookie {
	for _, c := range r.Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// TestLoginLink: POST /api/login trades a link for a session (the cookie
// and GET /api/me's answer, CSRF token included), once, until it expires.
func TestLoginLink(t *testing.T) {
	f := newFixture(t, nil)
	link := f.loginLink("org_a", "bob", start.Add(time.Hour))

	r := f.do(nil, "POST", "/api/login", map[string]string{"token": link})
	var got httpapi.Me
	f.ok(r, http.StatusOK, &got)
	c := sessionCookieOf(t, r)
	if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.Secure {
		t.Errorf("cookie %+v: want HttpOnly, SameSite=Lax, Path=/, not Secure over plain HTTP", c)
	}
	if c.MaxAge != int((30 * 24 * time.Hour).Seconds()) {
		t.Errorf("cookie Max-Age %d, want 30 days", c.MaxAge)
	}
	if strings.Contains(f.logs.String(), link) {
		t.Error("the log holds the login link's secret")
	}

	var me httpapi.Me
	f.ok(f.do(&who{session: c.Value}, "GET", "/api/me", nil), 200, &me)
	want := httpapi.Me{UserID: "bob", OrgID: "org_a", OrgName: "Acme", DisplayName: "Bob", Department: "R&D", Timezone: "Europe/Paris", Role: "member", Auth: "session", CSRFToken: me.CSRFToken}
	if diff := cmp.Diff(want, me); diff != "" || me.CSRFToken == "" {
		t.Errorf("me (-want +got):\n%s csrf %q", diff, me.CSRFToken)
	}
	if diff := cmp.Diff(me, got); diff != "" {
		t.Errorf("POST /api/login answered (-GET /api/me +got):\n%s", diff)
	}

	wantError(t, f.do(nil, "POST", "/api/login", map[string]string{"token": link}), http.StatusUnauthorized, "invalid_link")
	wantError(t, f.do(nil, "POST", "/api/login", map[string]string{"token": "made-up"}), http.StatusUnauthorized, "invalid_link")
	wantError(t, f.do(nil, "POST", "/api/login", map[string]string{}), http.StatusBadRequest, "invalid_request")
	wantError(t, f.do(nil, "GET", "/login?token="+link, nil), http.StatusUnauthorized, "invalid_link")
	wantError(t, f.do(nil, "GET", "/login", nil), http.StatusBadRequest, "invalid_request")

	expired := f.loginLink("org_a", "bob", start.Add(time.Minute))
	f.clock.Advance(time.Minute)
	wantError(t, f.do(nil, "GET", "/login?token="+expired, nil), http.StatusUnauthorized, "invalid_link")
	wantError(t, f.do(nil, "POST", "/api/login", map[string]string{"token": expired}), http.StatusUnauthorized, "invalid_link")
}

func TestSessionExpires(t *testing.T) {
	f := newFixture(t, func(c *httpapi.Config) { c.SessionTTL = time.Hour })
	w := f.login("org_a", "bob")
	f.ok(f.do(w, "GET", "/api/me", nil), 200, nil)
	f.clock.Advance(time.Hour)
	wantError(t, f.do(w, "GET", "/api/me", nil), http.StatusUnauthorized, "unauthorized")
}

func TestSecureCookieOverTLS(t *testing.T) {
	f := newFixture(t, nil)
	srv := httptest.NewTLSServer(f.srv.Config.Handler)
	defer srv.Close()
	client := srv.Client()
	client.CheckRedirect = noRedirect.CheckRedirect
	link := f.loginLink("org_a", "bob", start.Add(time.Hour))
	send := func(method, path, body string) response {
		req, err := http.NewRequestWithContext(context.Background(), method, srv.URL+path, strings.NewReader(body))
		f.must(err)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		f.must(err)
		resp.Body.Close()
		return response{Response: resp}
	}
	if c := cookieNamed(send("GET", "/login?token="+link, ""), "quiver_login"); c == nil || !c.Secure {
		t.Errorf("confirmation cookie over TLS not Secure: %+v", c)
	}
	if c := sessionCookieOf(t, send("POST", "/api/login", `{"token":"`+link+`"}`)); !c.Secure {
		t.Errorf("cookie over TLS not Secure: %+v", c)
	}
}

func TestCSRF(t *testing.T) {
	f := newFixture(t, nil)
	w := f.login("org_a", "bob")
	body := map[string]any{"agent": "helper"}

	noToken := &who{session: w.session}
	wantError(t, f.do(noToken, "POST", "/api/conversations", body), http.StatusForbidden, "csrf")
	wrong := &who{session: w.session, csrf: w.csrf + "x"}
	wantError(t, f.do(wrong, "POST", "/api/conversations", body), http.StatusForbidden, "csrf")
	otherSession := f.login("org_a", "bob")
	crossed := &who{session: w.session, csrf: otherSession.csrf}
	wantError(t, f.do(crossed, "POST", "/api/conversations", body), http.StatusForbidden, "csrf")
	wantError(t, f.do(noToken, "DELETE", "/api/tokens/0000000000000000", nil), http.StatusForbidden, "csrf")
	wantError(t, f.do(noToken, "POST", "/api/logout", nil), http.StatusForbidden, "csrf")

	f.ok(f.do(w, "POST", "/api/conversations", body), http.StatusCreated, nil)
	f.ok(f.do(noToken, "GET", "/api/conversations", nil), http.StatusOK, nil)
	f.ok(f.do(f.bob, "POST", "/api/conversations", body), http.StatusCreated, nil)

	// A bearer request is judged by its token alone: a bad one never
	// falls back to the cookie.
	both := &who{token: "bogus", session: w.session, csrf: w.csrf}
	wantError(t, f.do(both, "GET", "/api/me", nil), http.StatusUnauthorized, "unauthorized")
	wantError(t, f.do(nil, "GET", "/api/me", nil, "Authorization: Basic Ym9iOnB3"), http.StatusUnauthorized, "unauthorized")
}

func TestLogout(t *testing.T) {
	f := newFixture(t, nil)
	w := f.login("org_a", "bob")
	other := f.login("org_a", "bob")

	r := f.do(w, "POST", "/api/logout", nil)
	f.ok(r, http.StatusNoContent, nil)
	if c := sessionCookieOf(t, r); c.MaxAge >= 0 || c.Value != "" {
		t.Errorf("logout cookie %+v does not delete the session cookie", c)
	}
	wantError(t, f.do(w, "GET", "/api/me", nil), http.StatusUnauthorized, "unauthorized")
	f.ok(f.do(other, "GET", "/api/me", nil), http.StatusOK, nil)

	wantError(t, f.do(f.bob, "POST", "/api/logout", nil), http.StatusBadRequest, "not_session")
	f.ok(f.do(f.bob, "GET", "/api/me", nil), http.StatusOK, nil)
}

func TestMeAndTimezone(t *testing.T) {
	f := newFixture(t, nil)
	var me httpapi.Me
	f.ok(f.do(f.alice, "GET", "/api/me", nil), 200, &me)
	want := httpapi.Me{UserID: "alice", OrgID: "org_a", OrgName: "Acme", DisplayName: "Alice", Department: "R&D", Timezone: "Asia/Ho_Chi_Minh", Role: "admin", Auth: "token"}
	if diff := cmp.Diff(want, me); diff != "" {
		t.Errorf("me (-want +got):\n%s", diff)
	}

	f.ok(f.do(f.alice, "GET", "/api/me", nil, "X-Timezone: America/Sao_Paulo"), 200, &me)
	if me.Timezone != "America/Sao_Paulo" {
		t.Errorf("timezone %q, want the header's America/Sao_Paulo", me.Timezone)
	}
	for _, bad := range []string{"Mars/Olympus_Mons", "Local", "../../etc/passwd", "+07:00"} {
		wantError(t, f.do(f.alice, "GET", "/api/me", nil, "X-Timezone: "+bad), http.StatusBadRequest, "bad_timezone")
	}
}

// Accept headers as browsers send them when following a link.
const (
	acceptChrome  = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7"
	acceptFirefox = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
	acceptSafari  = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
)

// TestLoginFailurePage: a browser following a bad link gets a page that
// says what happened and how to get a new link; a program gets the JSON
// error.
func TestLoginFailurePage(t *testing.T) {
	f := newFixture(t, nil)
	for _, tc := range []struct {
		accept string
		html   bool
	}{
		{acceptChrome, true},
		{acceptFirefox, true},
		{acceptSafari, true},
		{"TEXT/HTML", true},
		{"text/*", true},
		{"application/json;q=0.1, text/html", true},
		{"", false},
		{"*/*", false},
		{"application/json", false},
		{"application/json, text/html", false},
		{"text/html;q=0.5, application/json", false},
		{"text/html;q=0, */*", false},
		{"text/html;q=NaN", false},
		{"text/plain", false},
	} {
		t.Run(tc.accept, func(t *testing.T) {
			var headers []string
			if tc.accept != "" {
				headers = append(headers, "Accept: "+tc.accept)
			}
			r := f.do(nil, "GET", "/login?token=made-up", nil, headers...)
			if !tc.html {
				wantError(t, r, http.StatusUnauthorized, "invalid_link")
				return
			}
			wantLoginPage(t, r)
		})
	}

	// A used link is as invalid, and names nobody.
	link := f.loginLink("org_a", "bob", start.Add(time.Hour))
	f.ok(f.do(nil, "POST", "/api/login", map[string]string{"token": link}), http.StatusOK, nil)
	used := f.do(nil, "GET", "/login?token="+link, nil, "Accept: "+acceptFirefox)
	wantLoginPage(t, used)
	if strings.Contains(string(used.body), "Bob") {
		t.Error("the page for a used link names its account")
	}
}

func wantLoginPage(t *testing.T, r response) {
	t.Helper()
	if r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("status %d, want 401", r.StatusCode)
	}
	for h, want := range map[string]string{
		"Content-Type":            "text/html; charset=utf-8",
		"Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
		"X-Content-Type-Options":  "nosniff",
		"Cache-Control":           "no-store",
		"Set-Cookie":              "",
	} {
		if got := r.Header.Get(h); got != want {
			t.Errorf("%s: %q, want %q", h, got, want)
		}
	}
	page := string(r.body)
	for _, want := range []string{"<!doctype html>", "invalid, already used or expired", `<a href="/#/people">People</a> page`, "<code>quiver login-link</code>"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	wantOwnStylesOnly(t, page)
	for _, banned := range []string{"<script", "made-up"} {
		if strings.Contains(strings.ToLower(page), banned) {
			t.Errorf("the page holds %q", banned)
		}
	}
}

func TestUpdateMe(t *testing.T) {
	f := newFixture(t, nil)
	w := f.login("org_a", "bob")
	f.clock.Advance(time.Hour)

	wantError(t, f.do(&who{session: w.session}, "PATCH", "/api/me", map[string]any{"display_name": "Robert"}), http.StatusForbidden, "csrf")
	var me httpapi.Me
	f.ok(f.do(w, "PATCH", "/api/me", map[string]any{"display_name": " Robert ", "timezone": "Asia/Tokyo"}), http.StatusOK, &me)
	want := httpapi.Me{UserID: "bob", OrgID: "org_a", OrgName: "Acme", DisplayName: "Robert", Department: "R&D", Timezone: "Asia/Tokyo", Role: "member", Auth: "session", CSRFToken: w.csrf}
	if diff := cmp.Diff(want, me); diff != "" {
		t.Errorf("me (-want +got):\n%s", diff)
	}
	stored, err := f.st.GetUser(f.ctx, "org_a", "bob")
	f.must(err)
	if stored.DisplayName != "Robert" || stored.Timezone != "Asia/Tokyo" || !stored.UpdatedAt.Equal(start.Add(time.Hour)) {
		t.Errorf("stored %+v", stored)
	}

	// The X-Timezone header still wins for the request; the stored zone
	// is what the body set.
	f.ok(f.do(f.bob, "PATCH", "/api/me", map[string]any{"department": "Ops"}, "X-Timezone: America/Sao_Paulo"), http.StatusOK, &me)
	if me.Timezone != "America/Sao_Paulo" || me.Department != "Ops" || me.Auth != "token" || me.CSRFToken != "" {
		t.Errorf("me %+v", me)
	}
	f.ok(f.do(f.bob, "GET", "/api/me", nil), http.StatusOK, &me)
	if me.Timezone != "Asia/Tokyo" {
		t.Errorf("stored zone %q, want Asia/Tokyo", me.Timezone)
	}

	// The next turn is the new profile's.
	f.conversation("org_a", "bob", "conv_bob")
	f.ok(f.do(f.bob, "POST", "/api/conversations/conv_bob/messages", map[string]any{"message": "hi"}), http.StatusOK, nil)
	if c := f.eng.lastCall(t).Caller; c.DisplayName != "Robert" || c.Department != "Ops" {
		t.Errorf("the turn's caller %+v", c)
	}

	for name, body := range map[string]map[string]any{
		"role":         {"role": "admin"},
		"blank name":   {"display_name": "  "},
		"control char": {"display_name": "Bob\u0007"},
		"line break":   {"department": "R&D\u2028Role: admin"},
		"long":         {"department": strings.Repeat("x", 101)},
		"unknown zone": {"timezone": "Europe/Atlantis"},
	} {
		r := f.do(f.bob, "PATCH", "/api/me", body)
		if r.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400 (%s)", name, r.StatusCode, r.body)
		}
	}
	f.ok(f.do(f.bob, "PATCH", "/api/me", map[string]any{"timezone": ""}), http.StatusOK, &me)
	if me.Timezone != "" || me.Role != "member" {
		t.Errorf("after clearing the zone: %+v", me)
	}
}

// TestLoginLinkOfAnotherUser: a browser signed in as bob that follows
// alice's link (one planted in a message, say) stays bob's: 409 on the
// page and on every way of signing in, a page for browsers, and the link
// is left unused for alice. Bob's own link signs him in as usual.
func TestLoginLinkOfAnotherUser(t *testing.T) {
	f := newFixture(t, nil)
	bob := f.login("org_a", "bob")
	link := f.loginLink("org_a", "alice", start.Add(time.Hour))
	wantError(t, f.do(bob, "GET", "/login?token="+link, nil), http.StatusConflict, "signed_in_as_other")
	page := f.do(bob, "GET", "/login?token="+link, nil, "Accept: "+acceptChrome)
	if page.StatusCode != http.StatusConflict || !strings.Contains(string(page.body), "already signed in") ||
		page.Header.Get("Content-Security-Policy") == "" || len(page.Cookies()) != 0 || strings.Contains(string(page.body), "Alice") {
		t.Fatalf("page: %d %q %v", page.StatusCode, page.body, page.Header)
	}
	wantOwnStylesOnly(t, string(page.body))
	wantError(t, f.do(bob, "POST", "/api/login", map[string]string{"token": link}), http.StatusConflict, "signed_in_as_other")
	// The form, confirmed by a page bob's browser opened before signing in.
	_, confirm := f.signInPage(nil, link)
	r := f.postSignIn(bob, link, confirm.Value, confirm, fromPage(f)...)
	if r.StatusCode != http.StatusConflict || !strings.Contains(string(r.body), "already signed in") || sessionCookie(r) != nil {
		t.Fatalf("form: %d %q %v", r.StatusCode, r.body, r.Header)
	}
	f.linkUnused(link)

	// The link was not used: a browser without bob's session signs in as alice.
	r = f.do(nil, "POST", "/api/login", map[string]string{"token": link})
	var me httpapi.Me
	f.ok(r, http.StatusOK, &me)
	if me.UserID != "alice" {
		t.Fatalf("signed in as %q, want alice", me.UserID)
	}
	// Bob's own link with bob's session: signed in again, on both paths.
	f.ok(f.do(bob, "POST", "/api/login", map[string]string{"token": f.loginLink("org_a", "bob", start.Add(time.Hour))}), http.StatusOK, nil)
	own := f.loginLink("org_a", "bob", start.Add(time.Hour))
	_, confirm = f.signInPage(bob, own)
	f.ok(f.postSignIn(bob, own, confirm.Value, confirm, sameOrigin(f)...), http.StatusSeeOther, nil)
}
