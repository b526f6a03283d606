package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/store"
)

// pausingStore holds the first GetConversation of one conversation: it
// closes reached, then waits for release. A send is held there after it
// authenticated and before it registers its turn.
type pausingStore struct {
	httpapi.Repositories
	conv             string
	reached, release chan struct{}
	once             sync.Once
}

func (s *pausingStore) GetConversation(ctx context.Context, orgID, id string) (store.Conversation, error) {
	if id == s.conv {
		s.once.Do(func() {
			close(s.reached)
			<-s.release
		})
	}
	return s.Repositories.GetConversation(ctx, orgID, id)
}

// TestDisabledWhileStarting: a send that authenticated before its user
// was disabled, and registers its turn after the disable cancelled the
// user's turns, is refused with 401 and runs nothing.
func TestDisabledWhileStarting(t *testing.T) {
	ps := &pausingStore{conv: "conv_bob", reached: make(chan struct{}), release: make(chan struct{})}
	f := newFixture(t, func(c *httpapi.Config) { ps.Repositories = c.Store; c.Store = ps })
	f.conversation("org_a", "bob", "conv_bob")
	done := make(chan response)
	go func() {
		done <- f.do(f.bob, "POST", "/api/conversations/conv_bob/messages", map[string]any{"message": "hi"})
	}()
	<-ps.reached
	f.ok(f.do(f.alice, "DELETE", "/api/users/bob", nil), http.StatusNoContent, nil)
	close(ps.release)
	r := <-done
	wantError(t, r, http.StatusUnauthorized, "unauthorized")
	f.eng.mu.Lock()
	calls := len(f.eng.calls)
	f.eng.mu.Unlock()
	if calls != 0 {
		t.Errorf("the engine ran %d turn(s) for a disabled user", calls)
	}
	conv, err := f.st.GetConversation(f.ctx, "org_a", "conv_bob")
	f.must(err)
	if conv.Title != "" {
		t.Errorf("the refused send titled the conversation %q", conv.Title)
	}
}

// TestDisableCancelsConsoleRun: a console run is tracked like a turn,
// without blocking the user's conversations, and disabling the user
// cancels it (401).
func TestDisableCancelsConsoleRun(t *testing.T) {
	f := newFixture(t, nil)
	f.conversation("org_a", "bob", "conv_bob")
	reqCtx, cancelReq := context.WithCancel(f.ctx)
	defer cancelReq()
	req := f.request(f.bob, "POST", "/api/console/run", map[string]any{"agent": "helper", "tool": "block"}).WithContext(reqCtx)
	done := make(chan response, 1)
	go func() {
		resp, err := noRedirect.Do(req)
		if err != nil {
			done <- response{}
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		done <- response{Response: resp, body: body}
	}()
	runCtx := <-f.eng.toolRunning

	f.ok(f.do(f.bob, "POST", "/api/conversations/conv_bob/messages", map[string]any{"message": "hi"}), http.StatusOK, nil)
	// DELETE answers after cancelling the user's runs: no wait needed.
	f.ok(f.do(f.alice, "DELETE", "/api/users/bob", nil), http.StatusNoContent, nil)
	if runCtx.Err() == nil {
		t.Error("disabling the user left their console run running")
		cancelReq() // end it as the client leaving would
	}
	<-f.eng.blocked
	r := <-done
	if r.Response == nil {
		t.Fatal("the console run's request failed")
	}
	wantError(t, r, http.StatusUnauthorized, "unauthorized")
}
