package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/quiverhq/quiver/store"
)

// leaseCases checks the Leases repository.
func leaseCases() []suiteCase {
	return []suiteCase{
		{"TakeRenewExpire", testLeaseTakeRenewExpire},
		{"ConcurrentTakers", testLeaseConcurrent},
		{"Invalid", testLeaseInvalid},
	}
}

func testLeaseTakeRenewExpire(t *testing.T, f *fixture) {
	ctx := t.Context()
	name, now := f.id("gateway"), at(0)
	l, ok, err := f.TakeLease(ctx, name, "replica-a", now, time.Minute)
	if err != nil || !ok || l.Holder != "replica-a" || !l.ExpiresAt.Equal(now.Add(time.Minute)) {
		t.Fatalf("a free lease: %+v %v %v", l, ok, err)
	}
	wantUTC(t, "lease", l.ExpiresAt)
	if l, ok, _ := f.TakeLease(ctx, name, "replica-b", now.Add(30*time.Second), time.Minute); ok || l.Holder != "replica-a" {
		t.Errorf("a held lease went to another: %+v %v", l, ok)
	}
	if l, ok, _ := f.TakeLease(ctx, name, "replica-a", now.Add(50*time.Second), time.Minute); !ok || !l.ExpiresAt.Equal(now.Add(110*time.Second)) {
		t.Errorf("a renewal: %+v %v", l, ok)
	}
	if l, ok, _ := f.TakeLease(ctx, name, "replica-b", now.Add(110*time.Second), time.Minute); !ok || l.Holder != "replica-b" {
		t.Errorf("a lapsed lease, at its end: %+v %v; want it taken over", l, ok)
	}
	if err := f.ReleaseLease(ctx, name, "replica-a"); err != nil {
		t.Fatal(err)
	}
	if l, ok, _ := f.TakeLease(ctx, name, "replica-c", now.Add(111*time.Second), time.Minute); ok || l.Holder != "replica-b" {
		t.Errorf("a release by a former holder freed the lease: %+v", l)
	}
	if err := f.ReleaseLease(ctx, name, "replica-b"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := f.TakeLease(ctx, name, "replica-c", now.Add(112*time.Second), time.Minute); !ok {
		t.Error("a released lease was not free")
	}
}

func testLeaseConcurrent(t *testing.T, f *fixture) {
	name, now := f.id("gateway"), at(0)
	var wg sync.WaitGroup
	held := make([]bool, 12)
	for i := range held {
		wg.Go(func() {
			_, ok, err := f.TakeLease(t.Context(), name, fmt.Sprintf("replica-%d", i), now, time.Minute)
			if err != nil {
				t.Errorf("take: %v", err)
			}
			held[i] = ok
		})
	}
	wg.Wait()
	n := 0
	for _, ok := range held {
		if ok {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d of 12 concurrent takers hold the lease, want exactly one", n)
	}
}

func testLeaseInvalid(t *testing.T, f *fixture) {
	now := at(0)
	for _, tc := range []struct {
		name, holder string
		ttl          time.Duration
	}{{"", "a", time.Minute}, {f.id("x"), "", time.Minute}, {f.id("x"), "a", 0}} {
		if _, _, err := f.TakeLease(t.Context(), tc.name, tc.holder, now, tc.ttl); !errors.Is(err, store.ErrLeaseInvalid) {
			t.Errorf("take %+v: %v, want ErrLeaseInvalid", tc, err)
		}
	}
}
