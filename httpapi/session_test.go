package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/store"
)

// loginLink stores a one-time login link for the user and returns its
// secret.
func (f *fixture) loginLink(org, user string, expires time.Time) string {
	f.t.Helper()
	tok, err := httpapi.IssueCredential(f.ctx, f.st, store.Credential{Kind: store.CredLoginLink, OrgID: org, UserID: user, CreatedAt: f.clock.Now(), ExpiresAt: expires})
	f.must(err)
	return tok
}

// login follows a login link and returns the browser's session with its
// CSRF token (from GET /api/me).
func (f *fixture) login(org, user string) *who {
	f.t.Helper()
	r := f.do(nil, "GET", "/login?token="+f.loginLink(org, user, f.clock.Now().Add(time.Hour)), nil)
	f.ok(r, http.StatusSeeOther, nil)
	w := &who{session: sessionCookieOf(f.t, r).Value}
	var me httpapi.Me
	f.ok(f.do(w, "GET", "/api/me", nil), 200, &me)
	w.csrf = me.CSRFToken
	return w
}

func sessionCookieOf(t *testing.T, r response) *http.Cookie {
	t.Helper()
	for _, c := range r.Cookies() {
		if c.Name == "quiver_session" {
			return c
		}
	}
	t.Fatalf("no quiver_session cookie in %v", r.Header.Values("Set-Cookie"))
	return nil
}

func TestLoginLink(t *testing.T) {
	f := newFixture(t, nil)
	link := f.loginLink("org_a", "bob", start.Add(time.Hour))

	r := f.do(nil, "GET", "/login?token="+link, nil)
	f.ok(r, http.StatusSeeOther, nil)
	if loc := r.Header.Get("Location"); loc != "/" {
		t.Errorf("Location %q, want /", loc)
	}
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

	wantError(t, f.do(nil, "GET", "/login?token="+link, nil), http.StatusUnauthorized, "invalid_link")
	wantError(t, f.do(nil, "GET", "/login?token=made-up", nil), http.StatusUnauthorized, "invalid_link")
	wantError(t, f.do(nil, "GET", "/login", nil), http.StatusBadRequest, "invalid_request")

	expired := f.loginLink("org_a", "bob", start.Add(time.Minute))
	f.clock.Advance(time.Minute)
	wantError(t, f.do(nil, "GET", "/login?token="+expired, nil), http.StatusUnauthorized, "invalid_link")
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
	req, err := http.NewRequestWithContext(context.Background(), "GET", srv.URL+"/login?token="+f.loginLink("org_a", "bob", start.Add(time.Hour)), nil)
	f.must(err)
	resp, err := client.Do(req)
	f.must(err)
	resp.Body.Close()
	if c := sessionCookieOf(t, response{Response: resp}); !c.Secure {
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
