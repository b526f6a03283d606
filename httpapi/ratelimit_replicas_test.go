package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/quiverhq/quiver/httpapi"
)

// TestRateLimitSharedByReplicas: two servers over one store count one
// bucket per user: a user who spent the burst on one replica is refused
// on the other, and a token regained is spent once, wherever.
func TestRateLimitSharedByReplicas(t *testing.T) {
	p := newPair(t)
	p.a.conversation("org_a", "bob", "conv_bob")
	send := func(f *fixture, w *who) response {
		return f.do(w, "POST", "/api/conversations/conv_bob/messages", map[string]any{"message": "hi"})
	}
	run := func(f *fixture, w *who) response {
		body := map[string]any{"agent": "helper", "tool": "calculate", "arguments": map[string]any{"expression": "1+1"}}
		return f.do(w, "POST", "/api/console/run", body)
	}
	// The default burst, half on each replica: one bucket each would
	// leave both half full.
	for range httpapi.DefaultBurst / 2 {
		p.a.ok(send(p.a, p.a.bob), http.StatusOK, nil)
		p.b.ok(run(p.b, p.b.bob), http.StatusOK, nil)
	}
	for _, r := range []response{send(p.a, p.a.bob), send(p.b, p.b.bob), run(p.a, p.a.bob), run(p.b, p.b.bob)} {
		wantError(t, r, http.StatusTooManyRequests, "rate_limited")
		if ra := r.Header.Get("Retry-After"); ra != "6" {
			t.Errorf("%s %s: Retry-After %q, want 6", r.Request.Method, r.Request.URL.Path, ra)
		}
	}
	p.b.ok(run(p.b, p.b.carol), http.StatusOK, nil) // buckets are per user

	p.a.clock.Advance(httpapi.DefaultEvery) // the replicas share the clock
	p.b.ok(send(p.b, p.b.bob), http.StatusOK, nil)
	wantError(t, send(p.a, p.a.bob), http.StatusTooManyRequests, "rate_limited")
	wantError(t, run(p.a, p.a.bob), http.StatusTooManyRequests, "rate_limited")
}
