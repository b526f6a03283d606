package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/store"
)

// busyStore is a store that cannot take a turn's first writes in time:
// spending a token or claiming the run fails as the store fails when its
// writer stays taken (store.ErrBusy) or as a claim past its own deadline
// does. It records the write wait each call was given.
type busyStore struct {
	httpapi.Repositories
	takeErr, claimErr error
	waits             *[]time.Duration
}

func (s busyStore) TakeToken(ctx context.Context, key string, burst int, every time.Duration, now time.Time) (time.Duration, bool, error) {
	*s.waits = append(*s.waits, store.WriteWait(ctx))
	if s.takeErr != nil {
		return 0, false, s.takeErr
	}
	return s.Repositories.TakeToken(ctx, key, burst, every, now)
}

func (s busyStore) ClaimRun(ctx context.Context, r store.Run) (*store.Run, error) {
	*s.waits = append(*s.waits, store.WriteWait(ctx))
	if s.claimErr != nil {
		return nil, s.claimErr
	}
	return s.Repositories.ClaimRun(ctx, r)
}

// TestStoreBusyIs503: a message the store cannot take in time is
// answered 503 unavailable with Retry-After and one error body, never
// 500; the engine runs nothing, the conversation gets no message and
// holds no run (the next message, the store taking it, runs); the first
// writes were given the admission wait, shorter than the default.
func TestStoreBusyIs503(t *testing.T) {
	for _, tc := range []struct {
		name              string
		takeErr, claimErr error
	}{
		{"token writer busy", fmt.Errorf("sqlite: take token: %w: the writer stayed taken", store.ErrBusy), nil},
		{"claim writer busy", nil, fmt.Errorf("sqlite: claim run: %w", store.ErrBusy)},
		{"claim past its deadline", nil, fmt.Errorf("sqlite: claim run: %w", context.DeadlineExceeded)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var waits []time.Duration
			bs := &busyStore{takeErr: tc.takeErr, claimErr: tc.claimErr, waits: &waits}
			f := newFixture(t, func(c *httpapi.Config) {
				bs.Repositories = c.Store
				c.Store = bs
			})
			f.conversation("org_a", "bob", "conv_bob")
			r := f.do(f.bob, "POST", "/api/conversations/conv_bob/messages", map[string]any{"message": "hi"})
			wantError(t, r, http.StatusServiceUnavailable, "unavailable")
			if got := r.Header.Get("Retry-After"); got != "5" {
				t.Errorf("Retry-After %q, want 5", got)
			}
			for _, w := range waits {
				if w != httpapi.AdmitWriteWait {
					t.Errorf("a first write waited up to %v, want the admission wait %v", w, httpapi.AdmitWriteWait)
				}
			}
			f.eng.mu.Lock()
			calls := len(f.eng.calls)
			f.eng.mu.Unlock()
			if calls != 0 {
				t.Errorf("the engine ran %d turn(s)", calls)
			}
			ms, err := f.st.ListMessages(f.ctx, "org_a", "conv_bob", 0)
			if err != nil || len(ms) != 0 {
				t.Errorf("the refused message left %d message(s) (%v)", len(ms), err)
			}
			if _, err := f.st.GetRun(f.ctx, "org_a", "conv_bob"); err == nil {
				t.Error("the refused message left the conversation's run held")
			}
			bs.takeErr, bs.claimErr = nil, nil
			f.ok(f.do(f.bob, "POST", "/api/conversations/conv_bob/messages", map[string]any{"message": "hi"}), http.StatusOK, nil)
		})
	}
}
