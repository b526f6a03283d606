package eventwait

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/quiverhq/quiver/store"
)

// never is a check that finds nothing.
func never(context.Context) (bool, error) { return false, nil }

// waitAsync runs h.Wait in a goroutine and returns its answer's channel.
func waitAsync(ctx context.Context, h *Hub, key string, after int64, has func(context.Context) (bool, error)) <-chan error {
	done := make(chan error, 1)
	go func() { done <- h.Wait(ctx, key, after, has) }()
	return done
}

// registered returns a check that reports false and closes ch the first
// time it runs: by then the waiter is registered.
func registered(ch chan struct{}) func(context.Context) (bool, error) {
	var once atomic.Bool
	return func(context.Context) (bool, error) {
		if once.CompareAndSwap(false, true) {
			close(ch)
		}
		return false, nil
	}
}

func TestWaitReturnsAtOnceWhenTheStoreHasIt(t *testing.T) {
	var h Hub
	calls := 0
	err := h.Wait(t.Context(), Key("o", "t"), 0, func(context.Context) (bool, error) { calls++; return true, nil })
	if err != nil || calls != 1 {
		t.Fatalf("Wait = %v after %d checks, want nil after 1", err, calls)
	}
	if len(h.turns) != 0 {
		t.Errorf("Hub kept %d keys after Wait returned", len(h.turns))
	}
}

func TestNotifyWakesOnlyWaitersBehind(t *testing.T) {
	var h Hub
	key := Key("o", "t")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	r1, r5 := make(chan struct{}), make(chan struct{})
	behind := waitAsync(t.Context(), &h, key, 1, registered(r1))
	ahead := waitAsync(ctx, &h, key, 5, registered(r5))
	<-r1
	<-r5
	h.Notify(key, 3)
	if err := <-behind; err != nil {
		t.Errorf("waiter after 1, notified 3: %v, want nil", err)
	}
	cancel()
	if err := <-ahead; !errors.Is(err, context.Canceled) {
		t.Errorf("waiter after 5, notified 3, then cancelled: %v, want context.Canceled", err)
	}
	if len(h.turns) != 0 {
		t.Errorf("Hub kept %d keys after every Wait returned", len(h.turns))
	}
}

func TestNotifyOtherTurnDoesNotWake(t *testing.T) {
	var h Hub
	ctx, cancel := context.WithCancel(t.Context())
	reg := make(chan struct{})
	done := waitAsync(ctx, &h, Key("o", "t1"), 0, registered(reg))
	<-reg
	h.Notify(Key("o", "t2"), 9)
	h.Notify(Key("o2", "t1"), 9)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Wait = %v, want context.Canceled", err)
	}
}

// TestRecheckAllReadsAgain: a waiter told to recheck calls its check
// again and returns when the store now has the event.
func TestRecheckAllReadsAgain(t *testing.T) {
	var h Hub
	var stored atomic.Bool
	checked := make(chan struct{}, 2)
	has := func(context.Context) (bool, error) {
		ok := stored.Load()
		checked <- struct{}{} // after the read: what is stored later, it missed
		return ok, nil
	}
	done := waitAsync(t.Context(), &h, Key("o", "t"), 0, has)
	<-checked
	stored.Store(true) // stored while no notification reached the Hub
	h.RecheckAll()
	if err := <-done; err != nil {
		t.Errorf("Wait after RecheckAll = %v, want nil", err)
	}
	if n := len(checked); n != 1 {
		t.Errorf("%d checks pending, want the recheck's 1", n)
	}
}

func TestCheckErrorIsReturned(t *testing.T) {
	var h Hub
	boom := errors.New("boom")
	err := h.Wait(t.Context(), Key("o", "t"), 0, func(context.Context) (bool, error) { return false, boom })
	if !errors.Is(err, boom) {
		t.Errorf("Wait = %v, want the check's error", err)
	}
}

// TestWaitersBounded: one key takes store.MaxTurnEventWaiters waiters;
// one more is refused, and another key is not affected.
func TestWaitersBounded(t *testing.T) {
	var h Hub
	key := Key("o", "t")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var dones []<-chan error
	for range store.MaxTurnEventWaiters {
		reg := make(chan struct{})
		dones = append(dones, waitAsync(ctx, &h, key, 0, registered(reg)))
		<-reg
	}
	if err := h.Wait(ctx, key, 0, never); !errors.Is(err, store.ErrTooManyWaiters) {
		t.Errorf("Wait past the bound = %v, want store.ErrTooManyWaiters", err)
	}
	if err := h.Wait(ctx, Key("o", "other"), 0, func(context.Context) (bool, error) { return true, nil }); err != nil {
		t.Errorf("Wait on another turn = %v, want nil", err)
	}
	h.Notify(key, 1)
	for i, done := range dones {
		if err := <-done; err != nil {
			t.Errorf("waiter %d: %v, want nil", i, err)
		}
	}
}

// TestUnregisterAfterNotifyKeepsNewWaiters: a waiter that Notify
// released must not, leaving, drop a waiter registered since on the same
// key.
func TestUnregisterAfterNotifyKeepsNewWaiters(t *testing.T) {
	var h Hub
	key := Key("o", "t")
	old, err := h.register(key, 0)
	if err != nil {
		t.Fatal(err)
	}
	h.Notify(key, 1)
	fresh, err := h.register(key, 1)
	if err != nil {
		t.Fatal(err)
	}
	h.unregister(key, old)
	h.Notify(key, 2)
	select {
	case <-fresh.ready:
	default:
		t.Errorf("the waiter registered after a Notify was dropped by the old one's unregister")
	}
}

func TestKeyIsFixedAndDistinct(t *testing.T) {
	a, b := Key("ab", "c"), Key("a", "bc")
	if a == b || len(a) != 64 || len(Key("", "")) != 64 {
		t.Errorf("Key(ab, c) = %q, Key(a, bc) = %q: want distinct 64-character keys", a, b)
	}
}
