package fetch

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/quiverhq/quiver/tool"
)

// fakeCrawl4AI is a loopback stand-in for Crawl4AI's POST /md. It records
// the requests it gets and answers with status and body.
type fakeCrawl4AI struct {
	status int
	body   string
	calls  atomic.Int64
	got    atomic.Pointer[crawl4AIRequest]
	auth   atomic.Pointer[string]
}

func (f *fakeCrawl4AI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/md" || r.Header.Get("Content-Type") != "application/json" {
		http.Error(w, "unexpected request "+r.Method+" "+r.URL.Path, http.StatusTeapot)
		return
	}
	f.calls.Add(1)
	var req crawl4AIRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusUnprocessableEntity)
		return
	}
	f.got.Store(&req)
	auth := r.Header.Get("Authorization")
	f.auth.Store(&auth)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(f.status)
	w.Write([]byte(f.body))
}

func TestCrawl4AI(t *testing.T) {
	target, hits := serve(t, map[string]page{"/story": {contentType: "text/plain", body: []byte("direct body")}})
	okBody := `{"url":"` + target.URL + `/story","filter":"fit","query":null,"cache":"0","markdown":"# Story title\n\nRendered by the browser.\n\n\n\nMore.","success":true}`
	tests := []struct {
		name       string
		status     int
		body       string
		down       bool
		want       string
		wantDirect int64
	}{
		{name: "sidecar answers", status: 200, body: okBody,
			want: "Title: Story title\nContent (markdown): characters 0–46 of 46\n\n# Story title\n\nRendered by the browser.\n\nMore."},
		{name: "sidecar error status falls back", status: 500, body: `{"detail":"browser crashed"}`, want: "direct body", wantDirect: 1},
		{name: "sidecar success false falls back", status: 200, body: `{"markdown":"","success":false}`, want: "direct body", wantDirect: 1},
		{name: "sidecar malformed answer falls back", status: 200, body: `<html>`, want: "direct body", wantDirect: 1},
		{name: "sidecar down falls back", down: true, want: "direct body", wantDirect: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := &fakeCrawl4AI{status: tc.status, body: tc.body}
			side := httptest.NewServer(fake)
			t.Cleanup(side.Close)
			if tc.down {
				side.Close()
			}
			before := hits.get("/story")
			tl := FetchTool(Config{Client: target.Client(), SelfHosted: true, Crawl4AIURL: side.URL + "/", Crawl4AIToken: "sidecar-token", CacheEntries: -1, Logger: slog.New(slog.DiscardHandler)})
			got, err := call(t, tl, tool.Scope{}, map[string]any{"url": target.URL + "/story#section"})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(got, tc.want) {
				t.Errorf("answer lacks %q:\n%s", tc.want, got)
			}
			if n := hits.get("/story") - before; n != tc.wantDirect {
				t.Errorf("direct fetches = %d, want %d", n, tc.wantDirect)
			}
			if tc.down {
				return
			}
			if fake.calls.Load() != 1 {
				t.Fatalf("sidecar calls = %d, want 1", fake.calls.Load())
			}
			want := crawl4AIRequest{URL: target.URL + "/story", Filter: "fit", Cache: "0"}
			if diff := cmp.Diff(&want, fake.got.Load()); diff != "" {
				t.Errorf("sidecar request mismatch (-want +got):\n%s", diff)
			}
			if auth := *fake.auth.Load(); auth != "Bearer sidecar-token" {
				t.Errorf("Authorization = %q, want the bearer token", auth)
			}
		})
	}
}

// TestCrawl4AIAsksTheGuardFirst: the sidecar's browser dials outside the
// guarded client, so a destination the guard refuses never reaches it.
func TestCrawl4AIAsksTheGuardFirst(t *testing.T) {
	fake := &fakeCrawl4AI{status: 200, body: `{"markdown":"metadata","success":true}`}
	side := httptest.NewServer(fake)
	t.Cleanup(side.Close)
	refuse := func(_ context.Context, raw string) error {
		return errors.New("blocked: address not allowed (169.254.169.254)")
	}
	tl := FetchTool(Config{Client: side.Client(), SelfHosted: true, Crawl4AIURL: side.URL, CheckURL: refuse, CacheEntries: -1, Logger: slog.New(slog.DiscardHandler)})
	_, err := call(t, tl, tool.Scope{}, map[string]any{"url": "http://169.254.169.254/latest/meta-data/"})
	if err == nil || !strings.Contains(err.Error(), "blocked: address not allowed") {
		t.Errorf("err = %v, want the guard's refusal", err)
	}
	if n := fake.calls.Load(); n != 0 {
		t.Errorf("sidecar asked %d times for a refused destination", n)
	}
}
