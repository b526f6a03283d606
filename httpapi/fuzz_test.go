package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/quiverhq/quiver/accounts"
	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
	"github.com/quiverhq/quiver/turn"
)

// FuzzAuthentication: whatever credentials and zone a request carries,
// the answer is a success for the one real token or a 400/401/403 in the
// error shape; never a 500 or a panic.
func FuzzAuthentication(f *testing.F) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	defer st.Close()
	if err := st.CreateOrg(ctx, store.Org{ID: "org_a", Name: "Acme", CreatedAt: start}); err != nil {
		f.Fatal(err)
	}
	if err := st.CreateUser(ctx, store.User{ID: "bob", OrgID: "org_a", Role: store.RoleMember, CreatedAt: start}); err != nil {
		f.Fatal(err)
	}
	tok, err := (&accounts.Service{Store: st}).Issue(ctx, store.Credential{Kind: store.CredAPIToken, OrgID: "org_a", UserID: "bob", CreatedAt: start})
	if err != nil {
		f.Fatal(err)
	}
	h := httpapi.New(httpapi.Config{Store: st, Engine: &fakeEngine{}, Now: (&clock{t: start}).Now})

	f.Add("Bearer "+tok, "", "", "Europe/Paris", "GET")
	f.Add("bearer  "+tok+" ", "", "", "", "POST")
	f.Add("", "quiver_session=abc", "", "", "GET")
	f.Add("", "quiver_session="+tok, "x", "", "DELETE")
	f.Add("Basic Ym9iOnB3", "", "", "", "GET")
	f.Add("Bearer", "", "", "../../etc/zoneinfo", "GET")
	f.Add("Bearer "+tok, "", "", "Local", "GET")
	f.Add("Bearer \x00", "quiver_session=\"\"", "", "UTC", "PUT")
	f.Add("Bearer "+tok, "", "", "Asia/Tokyo", "PATCH")
	f.Add("", "quiver_session="+tok, "", "", "PATCH")
	f.Fuzz(func(t *testing.T, authz, cookie, csrf, tz, method string) {
		switch method {
		case "GET", "POST", "PUT", "PATCH", "DELETE":
		default:
			method = "GET"
		}
		req := httptest.NewRequest(method, "/api/me", nil)
		for k, v := range map[string]string{"Authorization": authz, "Cookie": cookie, "X-CSRF-Token": csrf, "X-Timezone": tz} {
			if v != "" {
				req.Header[k] = []string{v}
			}
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusOK, http.StatusMethodNotAllowed:
			return
		case http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden:
		default:
			t.Fatalf("status %d for %q %q %q %q: %s", rec.Code, authz, cookie, csrf, tz, rec.Body)
		}
		var body struct{ Error httpapi.ErrorInfo }
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Error.Code == "" || body.Error.Message == "" {
			t.Fatalf("body %q is not an error", rec.Body)
		}
	})
}

// bodyTargets are the operations FuzzRequestBodies sends bodies to, as
// an admin: every new body parsed by httpapi itself or by huma for it.
var bodyTargets = []struct{ method, path string }{
	{"PATCH", "/api/me"},
	{"POST", "/api/users"},
	{"PATCH", "/api/users/bob"},
	{"POST", "/api/console/run"},
	{"PUT", "/api/settings"},
	{"POST", "/api/conversations"},
}

// FuzzRequestBodies: whatever body an operation gets, the answer is a
// success or a 4xx in the error shape, never a 5xx; and what is stored
// about people stays valid (a name is never blank, no field holds a
// control character, a zone always loads).
func FuzzRequestBodies(f *testing.F) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	defer st.Close()
	if err := st.CreateOrg(ctx, store.Org{ID: "org_a", Name: "Acme", CreatedAt: start}); err != nil {
		f.Fatal(err)
	}
	for id, role := range map[string]string{"alice": store.RoleAdmin, "bob": store.RoleMember} {
		if err := st.CreateUser(ctx, store.User{ID: id, OrgID: "org_a", DisplayName: id, Role: role, CreatedAt: start}); err != nil {
			f.Fatal(err)
		}
	}
	if err := st.PutAgent(ctx, store.StoredAgent{OrgID: "org_a", Name: "helper", Definition: []byte("name: helper\n"), CreatedAt: start, UpdatedAt: start}); err != nil {
		f.Fatal(err)
	}
	tok, err := (&accounts.Service{Store: st}).Issue(ctx, store.Credential{Kind: store.CredAPIToken, OrgID: "org_a", UserID: "alice", CreatedAt: start})
	if err != nil {
		f.Fatal(err)
	}
	h := httpapi.New(httpapi.Config{Store: st, Engine: &fakeEngine{}, Now: (&clock{t: start}).Now, RateLimit: httpapi.RateLimit{Burst: -1}})

	for i, body := range [][]string{
		{`{"display_name":"Al","department":"Ops","timezone":"Europe/Paris"}`, `{"timezone":""}`, `{"display_name":"A\u2028B"}`, `{"role":"admin"}`, `{}`},
		{`{"display_name":"Eve"}`, `{"display_name":" Eve ","role":"admin","timezone":"Local"}`, `{"display_name":"\t"}`, `{"display_name":"x","id":"root"}`},
		{`{"role":"admin"}`, `{"department":"\u0000"}`, `{"timezone":"+07:00"}`, `{"display_name":null}`},
		{`{"agent":"helper","tool":"calculate","arguments":{"expression":"1+1"}}`, `{"agent":"helper","tool":"fail"}`, `{"agent":"helper","tool":"calculate","arguments":[]}`, `{"agent":"nope","tool":"x","arguments":null}`},
		{`{"version":0,"network_mode":"public","set_keys":{"openai_api_key":"sk"}}`, `{"version":1,"network_mode":"self-hosted","web":{"searxng_url":"ftp:"},"clear_keys":["x"]}`, `{"version":-1}`},
		{`{"agent":"helper","title":"T"}`, `{"agent":""}`},
	} {
		for _, b := range body {
			f.Add(uint8(i), []byte(b))
		}
	}
	f.Fuzz(func(t *testing.T, target uint8, body []byte) {
		op := bodyTargets[int(target)%len(bodyTargets)]
		if bytes.Contains(body, []byte("boom")) {
			return // the fake engine's internal error, on purpose
		}
		req := httptest.NewRequest(op.method, op.path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %s %q: status %d: %s", op.method, op.path, body, rec.Code, rec.Body)
		}
		if rec.Code >= 400 {
			var e struct{ Error httpapi.ErrorInfo }
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
				t.Fatalf("body %q is not an error", rec.Body)
			}
		}
		users, err := st.ListUsers(ctx, "org_a")
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range users {
			if strings.TrimSpace(u.DisplayName) == "" || strings.ContainsFunc(u.DisplayName+u.Department+u.Timezone, unicode.IsControl) {
				t.Fatalf("stored %+v after %s %s %q", u, op.method, op.path, body)
			}
			if u.Timezone != "" {
				if _, err := turn.LoadZone(u.Timezone); err != nil {
					t.Fatalf("stored zone %q: %v", u.Timezone, err)
				}
			}
		}
	})
}

// FuzzLoginAccept: a bad link answers 401 whatever the Accept header: the
// page, or the JSON error.
func FuzzLoginAccept(f *testing.F) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	defer st.Close()
	h := httpapi.New(httpapi.Config{Store: st, Engine: &fakeEngine{}, Now: (&clock{t: start}).Now})
	for _, a := range []string{acceptChrome, "", "*/*", "text/html;q=0.5, application/json", "text/html;q=1e400", "text/html;q=-1", ";;,,/", "text/html;q"} {
		f.Add(a)
	}
	f.Fuzz(func(t *testing.T, accept string) {
		req := httptest.NewRequest("GET", "/login?token=bad", nil)
		req.Header.Set("Accept", accept)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusUnauthorized {
			t.Fatalf("Accept %q: status %d", accept, rec.Code)
		}
		switch ct := rec.Header().Get("Content-Type"); ct {
		case "text/html; charset=utf-8":
			if !strings.Contains(rec.Body.String(), "quiver login-link") {
				t.Fatalf("Accept %q: page %q", accept, rec.Body)
			}
		case "application/json":
			if !strings.Contains(rec.Body.String(), "invalid_link") {
				t.Fatalf("Accept %q: body %q", accept, rec.Body)
			}
		default:
			t.Fatalf("Accept %q: Content-Type %q", accept, ct)
		}
	})
}

// FuzzLoginForm: whatever form, confirmation cookie and Sec-Fetch-Site a
// sign-in POST carries without the link's secret, it is refused (401 or
// 403, never a 5xx or a redirect), sets no session cookie and leaves the
// link usable.
func FuzzLoginForm(f *testing.F) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	defer st.Close()
	if err := st.CreateOrg(ctx, store.Org{ID: "org_a", Name: "Acme", CreatedAt: start}); err != nil {
		f.Fatal(err)
	}
	if err := st.CreateUser(ctx, store.User{ID: "bob", OrgID: "org_a", DisplayName: "Bob", Role: store.RoleMember, CreatedAt: start, UpdatedAt: start}); err != nil {
		f.Fatal(err)
	}
	link, err := (&accounts.Service{Store: st}).Issue(ctx, store.Credential{Kind: store.CredLoginLink, OrgID: "org_a", UserID: "bob", CreatedAt: start, ExpiresAt: start.Add(time.Hour)})
	if err != nil {
		f.Fatal(err)
	}
	h := httpapi.New(httpapi.Config{Store: st, Engine: &fakeEngine{}, Now: (&clock{t: start}).Now})
	confirm := accounts.NewSecret()
	f.Add("token=x&confirm="+confirm, confirm, "same-origin")
	f.Add("confirm="+confirm, confirm, "")
	f.Add("token=%zz&confirm=%", "%", "cross-site")
	f.Add("token=&token=x;confirm="+confirm, confirm, "none")
	f.Fuzz(func(t *testing.T, body, cookie, site string) {
		req := httptest.NewRequest("POST", "/login", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", site)
		req.Header.Set("Cookie", "quiver_login="+cookie)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusUnauthorized && rec.Code != http.StatusForbidden && rec.Code != http.StatusBadRequest {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		for _, c := range rec.Result().Cookies() {
			if c.Name == "quiver_session" {
				t.Fatalf("a session cookie: %+v", c)
			}
		}
		if _, err := st.LookupCredential(ctx, store.CredLoginLink, accounts.HashSecret(link), start); err != nil {
			t.Fatalf("the link was used: %v", err)
		}
	})
}
