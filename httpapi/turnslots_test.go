package httpapi_test

import (
	"bufio"
	"errors"
	"net/http"
	"testing"

	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/runs"
)

// TestTurnCaps: past the turns one user may run at once, and past the
// turns the server runs, a message is refused with 429 and Retry-After,
// the engine never called and nothing written; a turn that ends frees
// its slot.
func TestTurnCaps(t *testing.T) {
	f := newFixture(t, func(c *httpapi.Config) { c.Turns = httpapi.TurnLimits{PerUser: 1, PerServer: 2} })
	f.conversation("org_a", "bob", "conv_b1")
	f.conversation("org_a", "bob", "conv_b2")
	f.conversation("org_a", "carol", "conv_c")
	f.conversation("org_b", "dave", "conv_d")
	// running are the blocking turns not yet ended, which the test's end
	// cancels (so that a failure does not leave the server waiting).
	running := map[string]bool{}
	block := func(w *who, conv string) *http.Response {
		t.Helper()
		resp := f.open(w, "/api/conversations/"+conv+"/messages", map[string]any{"message": "block"})
		if _, err := readEvent(t, bufio.NewReader(resp.Body)); err != nil {
			t.Fatal(err)
		}
		running[conv] = true
		t.Cleanup(func() {
			if running[conv] {
				f.do(w, "POST", "/api/conversations/"+conv+"/cancel", nil)
				<-f.eng.blocked
				resp.Body.Close()
			}
		})
		return resp
	}
	stop := func(w *who, conv string, resp *http.Response) {
		t.Helper()
		f.ok(f.do(w, "POST", "/api/conversations/"+conv+"/cancel", nil), http.StatusAccepted, nil)
		if err := <-f.eng.blocked; !errors.Is(err, runs.ErrCancelled) {
			t.Fatalf("the turn ended with %v", err)
		}
		running[conv] = false
		readAll(t, resp.Body)
		resp.Body.Close()
	}
	calls := func() int {
		f.eng.mu.Lock()
		defer f.eng.mu.Unlock()
		return len(f.eng.calls)
	}
	refused := func(w *who, conv, code string) {
		t.Helper()
		before := calls()
		r := f.do(w, "POST", "/api/conversations/"+conv+"/messages", map[string]any{"message": "hello"})
		wantError(t, r, http.StatusTooManyRequests, code)
		if got := r.Header.Get("Retry-After"); got != "5" {
			t.Errorf("Retry-After %q, want 5", got)
		}
		if calls() != before {
			t.Errorf("the engine ran a refused turn")
		}
		c, err := f.st.GetConversation(f.ctx, "org_a", conv)
		f.must(err)
		if c.Title != "" {
			t.Errorf("a refused message titled the conversation %q", c.Title)
		}
	}
	bob := block(f.bob, "conv_b1")
	refused(f.bob, "conv_b2", "too_many_turns")
	dave := block(f.dave, "conv_d")
	refused(f.carol, "conv_c", "server_busy")

	// Bob's turn ends: its slot is free once its stream has ended.
	stop(f.bob, "conv_b1", bob)
	f.ok(f.do(f.carol, "POST", "/api/conversations/conv_c/messages", map[string]any{"message": "hello"}), http.StatusOK, nil)
	f.ok(f.do(f.bob, "POST", "/api/conversations/conv_b2/messages", map[string]any{"message": "hello"}), http.StatusOK, nil)
	stop(f.dave, "conv_d", dave)
}
