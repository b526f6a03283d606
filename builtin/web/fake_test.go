package web

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// reply is what a fake engine answers to a search. A zero status is 200.
// Hang makes the handler wait until the client gives up.
type reply struct {
	status int
	header map[string]string
	body   string
	hang   bool
}

// fake is one engine's server on loopback. It answers /healthz with
// health (zero means 200) and every other path with its current reply.
type fake struct {
	srv *httptest.Server

	mu      sync.Mutex
	reply   reply
	health  int
	hits    int
	probes  int
	lastURL string
	lastHdr http.Header
}

func newFake(t testing.TB, r reply) *fake {
	f := &fake{reply: r}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fake) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	if r.URL.Path == "/healthz" {
		f.probes++
		h := f.health
		f.mu.Unlock()
		if h == 0 {
			h = http.StatusOK
		}
		w.WriteHeader(h)
		w.Write([]byte("OK"))
		return
	}
	f.hits++
	f.lastURL, f.lastHdr = r.URL.String(), r.Header.Clone()
	rep := f.reply
	f.mu.Unlock()
	if rep.hang {
		<-r.Context().Done()
		return
	}
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	if rep.status == 0 {
		rep.status = http.StatusOK
	}
	w.WriteHeader(rep.status)
	w.Write([]byte(rep.body))
}

func (f *fake) set(r reply) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reply = r
}

func (f *fake) setHealth(status int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.health = status
}

func (f *fake) counts() (hits, probes int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hits, f.probes
}

func (f *fake) last() (string, http.Header) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lastURL, f.lastHdr
}

func fixture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Replies reproducing each engine's real answers.
func ok(t testing.TB, name string) reply { return reply{body: fixture(t, name)} }

func status(code int) reply { return reply{status: code, body: "error"} }

func rateLimited(retry string) reply {
	return reply{status: http.StatusTooManyRequests, header: map[string]string{"Retry-After": retry}, body: `{"type":"ErrorResponse"}`}
}

// fakes is one fake per engine, all healthy with real results.
type fakes struct {
	brave, searx, ddg, iask *fake
	clock                   *fakeClock
}

func newFakes(t testing.TB) *fakes {
	return &fakes{
		brave: newFake(t, ok(t, "brave_web.json")),
		searx: newFake(t, ok(t, "searxng.json")),
		ddg:   newFake(t, ok(t, "ddg_results.html")),
		iask:  newFake(t, ok(t, "iask.json")),
		clock: newClock(),
	}
}

const (
	braveKey = "BSA-secret-brave-key"
	iaskKey  = "iask-secret-key"
)

// config configures every engine against the fakes.
func (f *fakes) config() Config {
	return Config{
		Client:     &http.Client{},
		Brave:      BraveConfig{APIKey: braveKey, BaseURL: f.brave.srv.URL},
		SearXNG:    SearXNGConfig{BaseURL: f.searx.srv.URL},
		DuckDuckGo: DuckDuckGoConfig{BaseURL: f.ddg.srv.URL + "/html/"},
		IAsk:       IAskConfig{BaseURL: f.iask.srv.URL + "/search", APIKey: iaskKey},
		Timeout:    2 * time.Second,
		Now:        f.clock.Now,
	}
}

// braveLimited is Brave's 429 without Retry-After: the requests left and
// the seconds to reset per quota window, per second first, per month last.
func braveLimited(remaining, reset string) reply {
	h := map[string]string{"X-RateLimit-Limit": "1, 15000", "X-RateLimit-Reset": reset}
	if remaining != "" {
		h["X-RateLimit-Remaining"] = remaining
	}
	return reply{status: http.StatusTooManyRequests, header: h, body: `{"type":"ErrorResponse"}`}
}
