// Package eventwait is the in-process side of store.TurnEvents'
// WaitTurnEvents, shared by the backends: a Hub of the waiters of one
// process, keyed by turn, that a backend wakes when an append commits
// (SQLite: after its own commit; PostgreSQL: on a notification from any
// process) and tells to look again when it may have missed a wake-up (a
// dropped LISTEN connection).
package eventwait

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"

	"github.com/quiverhq/quiver/store"
)

// Key names a turn for the Hub and for notifications between processes:
// the hex SHA-256 of the organisation and turn IDs, so that it has a fixed
// length (a PostgreSQL notification's payload is bounded) whatever the IDs
// are, and two turns never share one.
func Key(orgID, turnID string) string {
	h := sha256.New()
	h.Write([]byte(orgID))
	h.Write([]byte{0})
	h.Write([]byte(turnID))
	return hex.EncodeToString(h.Sum(nil))
}

// Hub holds the waiters of one process. The zero Hub is ready to use; it
// is safe for concurrent use. It holds at most store.MaxTurnEventWaiters
// waiters per key.
type Hub struct {
	mu    sync.Mutex
	turns map[string]map[*waiter]struct{}
}

// waiter is one Wait call.
type waiter struct {
	after int64
	// ready is closed, under Hub.mu, once a Seq above after was reported.
	ready chan struct{}
	// recheck holds a token when the waiter should read the store again.
	recheck chan struct{}
}

// Wait returns nil once has reports true, or an event with a Seq above
// after is reported for key (Notify), whichever comes first; it returns
// ctx's error when ctx ends first, has's error when has fails, and an
// error wrapping store.ErrTooManyWaiters when key has its maximum of
// waiters. It registers before it calls has, and calls has again after
// every Recheck, so an event stored after Wait began is never missed
// provided the backend notifies (or rechecks) after every commit.
func (h *Hub) Wait(ctx context.Context, key string, after int64, has func(context.Context) (bool, error)) error {
	w, err := h.register(key, after)
	if err != nil {
		return err
	}
	defer h.unregister(key, w)
	for {
		ok, err := has(ctx)
		if err != nil || ok {
			return err
		}
		select {
		case <-w.ready:
			return nil
		case <-w.recheck:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// register adds a waiter for key.
func (h *Hub) register(key string, after int64) (*waiter, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.turns == nil {
		h.turns = map[string]map[*waiter]struct{}{}
	}
	ws := h.turns[key]
	if len(ws) >= store.MaxTurnEventWaiters {
		return nil, fmt.Errorf("%w (%d)", store.ErrTooManyWaiters, len(ws))
	}
	if ws == nil {
		ws = map[*waiter]struct{}{}
		h.turns[key] = ws
	}
	w := &waiter{after: after, ready: make(chan struct{}), recheck: make(chan struct{}, 1)}
	ws[w] = struct{}{}
	return w, nil
}

// unregister removes w; a key left without waiters is dropped, so the Hub
// holds only turns someone waits on.
func (h *Hub) unregister(key string, w *waiter) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ws := h.turns[key]
	if _, ok := ws[w]; !ok {
		return // Notify removed it (and maybe its key, now another's)
	}
	delete(ws, w)
	if len(ws) == 0 {
		delete(h.turns, key)
	}
}

// Notify reports that key's turn has stored events up to seq: every
// waiter waiting for less returns. It never blocks.
func (h *Hub) Notify(key string, seq int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for w := range h.turns[key] {
		if seq > w.after {
			close(w.ready)
			delete(h.turns[key], w) // closed once: unregister finds it gone
		}
	}
	if len(h.turns[key]) == 0 {
		delete(h.turns, key)
	}
}

// RecheckAll tells every waiter to read the store again: wake-ups may
// have been missed (a listening connection dropped and came back), or
// the store is closing and the read will say so. It never blocks.
func (h *Hub) RecheckAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, ws := range h.turns {
		for w := range ws {
			select {
			case w.recheck <- struct{}{}:
			default: // one pending recheck is as good as two
			}
		}
	}
}
