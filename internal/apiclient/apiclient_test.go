package apiclient

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestSignInAndCredentials: SignIn posts the link's token, keeps the
// session cookie and the CSRF token /api/me gives, and sends both on
// later requests; WithToken sends the bearer token and no session.
func TestSignInAndCredentials(t *testing.T) {
	var got []string // "METHOD PATH cookie csrf auth body"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]string
		json.NewDecoder(r.Body).Decode(&body)
		cookie, _ := r.Cookie("s")
		c := ""
		if cookie != nil {
			c = cookie.Value
		}
		got = append(got, strings.Join([]string{r.Method, r.URL.Path, c, r.Header.Get("X-CSRF-Token"), r.Header.Get("Authorization"), body["token"] + body["x"]}, " "))
		switch r.URL.Path {
		case "/api/login":
			http.SetCookie(w, &http.Cookie{Name: "s", Value: "sess", Path: "/"})
		case "/api/me":
			json.NewEncoder(w).Encode(Me{UserID: "u1", OrgID: "o1", CSRF: "c1"})
		case "/api/thing":
			w.WriteHeader(http.StatusCreated)
		default:
			http.Error(w, "no such thing", http.StatusNotFound)
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	cl, me, err := SignIn(ctx, srv.URL, "/login?token=t1", srv.Client().Transport)
	if err != nil {
		t.Fatal(err)
	}
	if me.UserID != "u1" || me.OrgID != "o1" || cl.CSRF != "c1" {
		t.Errorf("signed in as %+v, csrf %q", me, cl.CSRF)
	}
	if err := cl.Call(ctx, http.MethodPost, "/api/thing", map[string]string{"x": "y"}, http.StatusCreated, nil); err != nil {
		t.Fatal(err)
	}
	if err := cl.WithToken("tok").Call(ctx, http.MethodGet, "/api/thing", nil, http.StatusCreated, nil); err != nil {
		t.Fatal(err)
	}
	err = cl.Call(ctx, http.MethodGet, "/api/missing", nil, http.StatusOK, nil)
	if err == nil || !strings.Contains(err.Error(), "status 404") || !strings.Contains(err.Error(), "no such thing") {
		t.Errorf("wrong status: %v, want the status and the body quoted", err)
	}
	want := []string{
		"POST /api/login    t1",
		"GET /api/me sess   ",
		"POST /api/thing sess c1  y",
		"GET /api/thing   Bearer tok ",
	}
	if strings.Join(got[:4], "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, _, err := SignIn(ctx, srv.URL, "/login", nil); err == nil {
		t.Error("a link without a token: no error")
	}
}
