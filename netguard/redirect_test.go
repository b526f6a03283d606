package netguard

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// redirectTargets are where a public-looking host redirects to; each must be
// refused, with only the first (public) address ever dialled.
var redirectTargets = []struct{ name, location string }{
	{"to private", "http://10.0.0.1/"},
	{"to imds", "http://169.254.169.254/latest/meta-data/iam/"},
	{"to localhost", "http://localhost:80/"},
	{"to decimal loopback", "http://2130706433/"},
	{"to name resolving private", "http://private.example/"},
	{"to ipv6 loopback", "http://[::1]/"},
	{"to nat64 imds", "http://[64:ff9b::a9fe:a9fe]/"},
	{"to file scheme", "file:///etc/passwd"},
	{"to userinfo", "http://user:pw@example.com/"},
	{"to gcp metadata", "http://metadata.google.internal/"},
}

func TestRedirectIntoPrivateSpace(t *testing.T) {
	for _, tc := range redirectTargets {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, tc.location, http.StatusFound)
			}))
			defer srv.Close()
			res := newStub(publicAnswers)
			res.add("private.example", "192.168.1.10")
			c, d := testClient(t, Config{}, res, srv)
			_, err := get(t, c, "http://example.com/start")
			if !errors.Is(err, ErrBlocked) {
				t.Fatalf("redirect to %q: err = %v, want ErrBlocked", tc.location, err)
			}
			if got := d.dialled(); len(got) != 1 || got[0].String() != "93.184.215.14:80" {
				t.Fatalf("dialled %v, want only the public start", got)
			}
		})
	}
}

func TestRedirectCap(t *testing.T) {
	var hits int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits++
		http.Redirect(w, r, fmt.Sprintf("/r%d", hits), http.StatusFound)
	}))
	defer srv.Close()
	c, _ := testClient(t, Config{MaxRedirects: 50}, nil, srv)
	_, err := get(t, c, "http://example.com/")
	if !errors.Is(err, ErrTooManyRedirects) {
		t.Fatalf("err = %v, want ErrTooManyRedirects", err)
	}
	if hits != 1+DefaultMaxRedirects {
		t.Fatalf("server saw %d requests, want %d (MaxRedirects above 5 is lowered to 5)", hits, 1+DefaultMaxRedirects)
	}
}

func TestRedirectsWithinCapFollowed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n := len(r.URL.Path); n < 4 {
			http.Redirect(w, r, r.URL.Path+"x", http.StatusFound)
			return
		}
		io.WriteString(w, "done")
	}))
	defer srv.Close()
	c, _ := testClient(t, Config{}, nil, srv)
	resp, err := get(t, c, "http://example.com/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, _ := io.ReadAll(resp.Body); string(b) != "done" {
		t.Fatalf("body %q", b)
	}
}

func TestRedirectsNotFollowedWhenNegative(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://10.0.0.1/", http.StatusFound)
	}))
	defer srv.Close()
	c, d := testClient(t, Config{MaxRedirects: -1}, nil, srv)
	resp, err := get(t, c, "http://example.com/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || !strings.HasPrefix(resp.Header.Get("Location"), "http://10.") {
		t.Fatalf("status %d location %q, want the 302 itself", resp.StatusCode, resp.Header.Get("Location"))
	}
	if n := len(d.dialled()); n != 1 {
		t.Fatalf("dialled %d times, want 1", n)
	}
}
