package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quiverhq/quiver/httpapi"
)

// brokenBuckets is a store whose rate buckets fail, counting the takes.
type brokenBuckets struct {
	httpapi.Repositories
	takes *int
}

func (s brokenBuckets) TakeToken(context.Context, string, int, time.Duration, time.Time) (time.Duration, bool, error) {
	*s.takes++
	return 0, false, errors.New(secretDetail)
}

// TestRateLimitStoreFailure: when the store cannot spend a token, a
// message, an answer and a console run are internal errors (logged, the
// detail hidden), not free passes: nothing runs.
func TestRateLimitStoreFailure(t *testing.T) {
	var takes int
	f := newFixture(t, func(c *httpapi.Config) { c.Store = brokenBuckets{Repositories: c.Store, takes: &takes} })
	f.conversation("org_a", "bob", "conv_bob")
	wantError(t, f.do(f.bob, "POST", "/api/conversations/conv_bob/messages", map[string]any{"message": "hi"}), http.StatusInternalServerError, "internal")
	f.pause("org_a", "bob", "conv_bob")
	wantError(t, f.do(f.bob, "POST", "/api/conversations/conv_bob/answer", map[string]any{"answer": "metres"}), http.StatusInternalServerError, "internal")
	body := map[string]any{"agent": "helper", "tool": "calculate", "arguments": map[string]any{"expression": "1+1"}}
	wantError(t, f.do(f.bob, "POST", "/api/console/run", body), http.StatusInternalServerError, "internal")
	if takes != 3 {
		t.Errorf("%d takes, want 3", takes)
	}
	f.eng.mu.Lock()
	calls, runs := len(f.eng.calls), len(f.eng.runs)
	f.eng.mu.Unlock()
	if calls != 0 || runs != 0 {
		t.Errorf("the engine ran %d turn(s) and %d console run(s) without a token", calls, runs)
	}
	if logs := f.logs.String(); strings.Count(logs, "rate limit: "+secretDetail) != 3 {
		t.Errorf("the log does not hold the three failures:\n%s", logs)
	}
}

// TestRateLimitOff: a negative Burst never asks the store for a token.
func TestRateLimitOff(t *testing.T) {
	var takes int
	f := newFixture(t, func(c *httpapi.Config) {
		c.Store = brokenBuckets{Repositories: c.Store, takes: &takes}
		c.RateLimit.Burst = -1
	})
	f.conversation("org_a", "bob", "conv_bob")
	for range 3 {
		f.ok(f.do(f.bob, "POST", "/api/conversations/conv_bob/messages", map[string]any{"message": "hi"}), http.StatusOK, nil)
	}
	if takes != 0 {
		t.Errorf("%d takes with the limit off, want 0", takes)
	}
}
