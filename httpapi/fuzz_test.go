package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
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
	tok, err := httpapi.IssueCredential(ctx, st, store.Credential{Kind: store.CredAPIToken, OrgID: "org_a", UserID: "bob", CreatedAt: start})
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
	f.Fuzz(func(t *testing.T, authz, cookie, csrf, tz, method string) {
		switch method {
		case "GET", "POST", "PUT", "DELETE":
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
