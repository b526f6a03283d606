package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func date(y int, m time.Month, d int, h int) time.Time {
	return time.Date(y, m, d, h, 0, 0, 0, time.UTC)
}

// TestEngineFormats runs each engine against a fake answering in the
// engine's real format and checks the normalised results and the request.
func TestEngineFormats(t *testing.T) {
	tests := []struct {
		name     string
		fixture  string
		engine   func(base string) Engine
		q        Query
		want     []Result
		wantPath string
		wantArgs url.Values
	}{
		{
			name: "brave web", fixture: "brave_web.json", q: Query{Text: "go generics", Count: 5},
			engine:   func(b string) Engine { return NewBrave(braveKey, b, nil, nil) },
			wantPath: "/web/search", wantArgs: url.Values{"q": {"go generics"}, "count": {"5"}, "safesearch": {"moderate"}},
			want: []Result{
				{Title: "Tutorial: Getting started with generics - The Go Programming Language", URL: "https://go.dev/doc/tutorial/generics",
					Snippet: "This tutorial introduces the basics of generics in Go.", Source: "brave", Published: date(2024, 2, 6, 0)},
				{Title: "An Introduction To Generics - The Go Programming Language", URL: "https://go.dev/blog/intro-generics",
					Snippet: "The Go 1.18 release adds support for generics.", Source: "brave"},
			},
		},
		{
			name: "brave images", fixture: "brave_images.json", q: Query{Text: "gopher", Category: Image, Count: 3},
			engine:   func(b string) Engine { return NewBrave(braveKey, b, nil, nil) },
			wantPath: "/images/search", wantArgs: url.Values{"q": {"gopher"}, "count": {"3"}, "safesearch": {"strict"}},
			want: []Result{{Title: "The Go gopher", URL: "https://go.dev/blog/gopher",
				Snippet: "image: https://go.dev/blog/gopher/header.jpg · go.dev", Source: "brave"}},
		},
		{
			name: "brave videos", fixture: "brave_videos.json", q: Query{Text: "gophercon talk", Category: Video, Count: 5},
			engine:   func(b string) Engine { return NewBrave(braveKey, b, nil, nil) },
			wantPath: "/videos/search", wantArgs: url.Values{"q": {"gophercon talk"}, "count": {"5"}, "safesearch": {"moderate"}},
			want: []Result{{Title: "GopherCon 2024: Range over func", URL: "https://www.youtube.com/watch?v=abc123",
				Snippet: "A talk about iterators. · GopherCon · 38:12", Source: "brave", Published: date(2024, 3, 3, 12)}},
		},
		{
			name: "brave news", fixture: "brave_news.json", q: Query{Text: "go release", Category: News, Count: 5},
			engine:   func(b string) Engine { return NewBrave(braveKey, b, nil, nil) },
			wantPath: "/news/search", wantArgs: url.Values{"q": {"go release"}, "count": {"5"}, "safesearch": {"moderate"}},
			want: []Result{
				{Title: "Go 1.26 is released", URL: "https://go.dev/blog/go1.26", Snippet: "The Go team is happy to announce Go 1.26.", Source: "brave", Published: date(2026, 2, 10, 17)},
				{Title: "What's new in Go", URL: "https://example.com/news/go", Snippet: "A roundup. · 1 week ago", Source: "brave"},
			},
		},
		{
			name: "searxng papers", fixture: "searxng.json", q: Query{Text: "go generics", Category: Papers, Count: 5},
			engine:   func(b string) Engine { return NewSearXNG(b, nil, nil, 0, 0) },
			wantPath: "/search", wantArgs: url.Values{"q": {"go generics"}, "format": {"json"}, "categories": {"science"}, "safesearch": {"1"}},
			want: []Result{
				{Title: "Tutorial: Getting started with generics", URL: "https://go.dev/doc/tutorial/generics", Snippet: "This tutorial introduces the basics of generics in Go.", Source: "searxng"},
				{Title: "Featherweight Generic Go", URL: "https://arxiv.org/abs/2104.00001", Snippet: "We present a formal model of generics.", Source: "searxng", Published: date(2021, 4, 1, 0)},
			},
		},
		{
			name: "searxng text capped by count", fixture: "searxng.json", q: Query{Text: "go generics", Count: 1},
			engine:   func(b string) Engine { return NewSearXNG(b, nil, nil, 0, 0) },
			wantPath: "/search", wantArgs: url.Values{"q": {"go generics"}, "format": {"json"}, "categories": {"general"}, "safesearch": {"1"}},
			want: []Result{{Title: "Tutorial: Getting started with generics", URL: "https://go.dev/doc/tutorial/generics", Snippet: "This tutorial introduces the basics of generics in Go.", Source: "searxng"}},
		},
		{
			name: "duckduckgo results page", fixture: "ddg_results.html", q: Query{Text: "go generics", Count: 5},
			engine:   func(b string) Engine { return NewDuckDuckGo(b+"/html/", "", nil, nil) },
			wantPath: "/html/", wantArgs: url.Values{"q": {"go generics"}},
			want: []Result{
				{Title: "Tutorial: Getting started with generics - The Go Programming Language", URL: "https://go.dev/doc/tutorial/generics",
					Snippet: "This tutorial introduces the basics of generics in Go. With generics, you can declare and use functions or types that are written to work with any of a set of types.", Source: "duckduckgo"},
				{Title: "An Introduction To Generics", URL: "https://go.dev/blog/intro-generics", Snippet: "The Go 1.18 release adds support for generic programming.", Source: "duckduckgo"},
			},
		},
		{
			name: "duckduckgo no-results page", fixture: "ddg_noresults.html", q: Query{Text: "zzqqxx", Count: 5},
			engine:   func(b string) Engine { return NewDuckDuckGo(b+"/html/", "", nil, nil) },
			wantPath: "/html/", wantArgs: url.Values{"q": {"zzqqxx"}}, want: []Result{},
		},
		{
			name: "iask over http", fixture: "iask.json", q: Query{Text: "when did go get generics", Count: 5},
			engine:   func(b string) Engine { return NewIAsk(NewIAskHTTP(b+"/search", iaskKey, nil, nil)) },
			wantPath: "/search", wantArgs: url.Values{"q": {"when did go get generics"}},
			want: []Result{
				{Title: "IAsk answer", URL: "https://go.dev/doc/go1.18", Snippet: "Go added generics in version 1.18 (March 2022).", Source: "iask"},
				{Title: "Go 1.18 release notes", URL: "https://go.dev/doc/go1.18", Source: "iask"},
				{Title: "An Introduction To Generics", URL: "https://go.dev/blog/intro-generics", Source: "iask"},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, ok(t, tc.fixture))
			got, err := tc.engine(f.srv.URL).Search(context.Background(), tc.q)
			if err != nil {
				t.Fatalf("Search: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("results (-want +got):\n%s", diff)
			}
			raw, _ := f.last()
			u, _ := url.Parse(raw)
			if u.Path != tc.wantPath {
				t.Errorf("path = %q, want %q", u.Path, tc.wantPath)
			}
			if diff := cmp.Diff(tc.wantArgs, u.Query()); diff != "" {
				t.Errorf("query args (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEngineHeaders checks that keys travel in headers, never in URLs,
// and that DuckDuckGo gets only Accept and User-Agent.
func TestEngineHeaders(t *testing.T) {
	ctx := context.Background()
	q := Query{Text: "x", Count: 5}
	tests := []struct {
		name    string
		fixture string
		run     func(base string) error
		header  string
		want    string
	}{
		{"brave token", "brave_web.json", func(b string) error { _, err := NewBrave(braveKey, b, nil, nil).Search(ctx, q); return err },
			"X-Subscription-Token", braveKey},
		{"iask bearer", "iask.json", func(b string) error { _, err := NewIAskHTTP(b, iaskKey, nil, nil).Ask(ctx, "x"); return err },
			"Authorization", "Bearer " + iaskKey},
		{"duckduckgo user agent", "ddg_results.html", func(b string) error { _, err := NewDuckDuckGo(b, "UA/1", nil, nil).Search(ctx, q); return err },
			"User-Agent", "UA/1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, ok(t, tc.fixture))
			if err := tc.run(f.srv.URL); err != nil {
				t.Fatal(err)
			}
			u, h := f.last()
			if got := h.Get(tc.header); got != tc.want {
				t.Errorf("%s = %q, want %q", tc.header, got, tc.want)
			}
			if strings.Contains(u, braveKey) || strings.Contains(u, iaskKey) {
				t.Errorf("key in URL %q", u)
			}
			if h.Get("Cookie") != "" {
				t.Errorf("cookie sent: %q", h.Get("Cookie"))
			}
		})
	}
}

// TestEngineFailures checks that every failure is classified, so the chain
// can hand over and cool the engine down.
func TestEngineFailures(t *testing.T) {
	engines := map[string]func(base string) Engine{
		"brave":      func(b string) Engine { return NewBrave(braveKey, b, nil, nil) },
		"searxng":    func(b string) Engine { return NewSearXNG(b, nil, nil, 0, 0) },
		"duckduckgo": func(b string) Engine { return NewDuckDuckGo(b, "", nil, nil) },
		"iask":       func(b string) Engine { return NewIAsk(NewIAskHTTP(b, iaskKey, nil, nil)) },
	}
	tests := []struct {
		name      string
		engines   []string
		reply     func(t testing.TB) reply
		wantKind  Kind
		wantRetry time.Duration
	}{
		{"429 with Retry-After seconds", []string{"brave", "searxng", "duckduckgo", "iask"},
			func(testing.TB) reply { return rateLimited("120") }, RateLimited, 120 * time.Second},
		{"429 without Retry-After", []string{"brave", "duckduckgo"},
			func(testing.TB) reply { return status(429) }, RateLimited, 0},
		{"500", []string{"brave", "searxng", "duckduckgo", "iask"}, func(testing.TB) reply { return status(500) }, Failed, 0},
		{"202 challenge", []string{"duckduckgo"}, func(testing.TB) reply { return reply{status: 202, body: "<html></html>"} }, Challenged, 0},
		{"403 challenge", []string{"duckduckgo", "brave"}, func(testing.TB) reply { return status(403) }, Challenged, 0},
		{"anomaly page with 200", []string{"duckduckgo"}, func(t testing.TB) reply { return ok(t, "ddg_anomaly.html") }, Challenged, 0},
		{"malformed json", []string{"brave", "searxng", "iask"}, func(testing.TB) reply { return reply{body: `{"web": [`} }, Malformed, 0},
		{"json of another shape", []string{"brave", "searxng", "iask"}, func(testing.TB) reply { return reply{body: `{"hello": "world"}`} }, Malformed, 0},
		{"html without results or marker", []string{"duckduckgo"}, func(testing.TB) reply { return reply{body: "<html><body>maintenance</body></html>"} }, Malformed, 0},
		{"result blocks none usable", []string{"duckduckgo"}, func(testing.TB) reply {
			return reply{body: `<div class="result"><h2 class="result__title">changed markup</h2></div>`}
		}, Malformed, 0},
		{"oversized body", []string{"brave", "duckduckgo"}, func(testing.TB) reply { return reply{body: strings.Repeat("a", MaxBody+1)} }, Failed, 0},
	}
	for _, tc := range tests {
		for _, name := range tc.engines {
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				f := newFake(t, tc.reply(t))
				_, err := engines[name](f.srv.URL).Search(context.Background(), Query{Text: "x", Count: 5})
				var ee *EngineError
				if !errors.As(err, &ee) {
					t.Fatalf("error = %v, want an *EngineError", err)
				}
				if ee.Kind != tc.wantKind || ee.RetryAfter != tc.wantRetry {
					t.Errorf("got kind %v retry %v, want %v retry %v (%v)", ee.Kind, ee.RetryAfter, tc.wantKind, tc.wantRetry, err)
				}
			})
		}
	}
}

// TestBraveRateLimitReset checks the wait Brave's 429 asks for when it
// sends no Retry-After: until the exhausted window resets, else the
// soonest reset, within a second and MaxCooldown.
func TestBraveRateLimitReset(t *testing.T) {
	tests := []struct {
		name  string
		reply reply
		want  time.Duration
	}{
		{"per-second window exhausted", braveLimited("0, 9000", "1, 1419704"), time.Second},
		{"monthly window exhausted, capped", braveLimited("1, 0", "1, 1419704"), MaxCooldown},
		{"both exhausted: the later reset", braveLimited("0, 0", "1, 1200"), 20 * time.Minute},
		{"none shows exhausted: the soonest reset", braveLimited("1, 9000", "30, 1419704"), 30 * time.Second},
		{"no remaining header: the soonest reset", braveLimited("", "30, 1419704"), 30 * time.Second},
		{"remaining unreadable: the soonest reset", braveLimited("lots", "30, 1419704"), 30 * time.Second},
		{"reset of zero waits a second", braveLimited("0, 10", "0, 100"), time.Second},
		{"one window only", braveLimited("0", "45"), 45 * time.Second},
		{"unreadable reset: the chain's default", braveLimited("0, 10", "soon"), 0},
		{"negative reset: the chain's default", braveLimited("0, 10", "-1, 100"), 0},
		{"huge reset does not overflow", braveLimited("0, 10", "99999999999999, 1"), MaxCooldown},
		{"Retry-After wins", reply{status: http.StatusTooManyRequests, header: map[string]string{"Retry-After": "120", "X-RateLimit-Remaining": "1, 0", "X-RateLimit-Reset": "1, 1419704"}}, 120 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, tc.reply)
			_, err := NewBrave(braveKey, f.srv.URL, nil, nil).Search(context.Background(), Query{Text: "x", Count: 5})
			var ee *EngineError
			if !errors.As(err, &ee) || ee.Kind != RateLimited || ee.RetryAfter != tc.want {
				t.Errorf("error = %v (%#v), want rate limited with retry %v", err, ee, tc.want)
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	now := date(2026, 3, 1, 12)
	tests := []struct {
		name, in string
		want     time.Duration
	}{
		{"absent", "", 0},
		{"seconds", "30", 30 * time.Second},
		{"negative", "-5", 0},
		{"http date", now.Add(90 * time.Second).Format(httpTimeFormat), 90 * time.Second},
		{"past date", now.Add(-time.Minute).Format(httpTimeFormat), 0},
		{"garbage", "soon", 0},
		{"huge, capped without overflow", "9999999999999", MaxCooldown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := retryAfter(tc.in, now); got != tc.want {
				t.Errorf("retryAfter(%q) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

const httpTimeFormat = "Mon, 02 Jan 2006 15:04:05 GMT"

// TestSearXNGProbeCached checks that the health probe's answer, failure
// included, is reused for the TTL and asked again after it.
func TestSearXNGProbeCached(t *testing.T) {
	f := newFake(t, ok(t, "searxng.json"))
	clock := newClock()
	s := NewSearXNG(f.srv.URL, nil, clock.Now, 30*time.Second, 0)
	ctx := context.Background()
	steps := []struct {
		name       string
		health     int
		advance    time.Duration
		want       bool
		wantProbes int
	}{
		{"first call probes", 200, 0, true, 1},
		{"within ttl reuses", 500, 10 * time.Second, true, 1},
		{"after ttl probes again and fails", 500, 25 * time.Second, false, 2},
		{"failure is cached too", 200, 10 * time.Second, false, 2},
		{"recovers after ttl", 200, 30 * time.Second, true, 3},
	}
	for _, st := range steps {
		f.setHealth(st.health)
		clock.Advance(st.advance)
		got := s.Available(ctx)
		_, probes := f.counts()
		if got != st.want || probes != st.wantProbes {
			t.Errorf("%s: Available = %v with %d probes, want %v with %d", st.name, got, probes, st.want, st.wantProbes)
		}
	}
}
