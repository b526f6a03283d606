package storetest

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quiverhq/quiver/store"
)

// rateLimitCases checks the RateLimits repository on keys of their own.
func rateLimitCases() []suiteCase {
	return []suiteCase{
		{"Burst", testRateBurst},
		{"Refill", testRateRefill},
		{"ClockStepsBack", testRateClockStepsBack},
		{"KeysIndependent", testRateKeysIndependent},
		{"ConcurrentTakers", testRateConcurrentTakers},
		{"RefusesBadInput", testRateRefusesBadInput},
	}
}

// rateLimitAloneCases delete buckets of every key, so they run alone.
func rateLimitAloneCases() []suiteCase {
	return []suiteCase{
		{"DeleteBefore", testRateDeleteBefore},
		{"DeleteRefusesZeroCutoff", testRateDeleteRefusesZeroCutoff},
	}
}

// take is one TakeToken call and what it should answer.
type take struct {
	at   time.Time
	ok   bool
	wait time.Duration // when refused
}

// takes runs the calls on key's bucket (burst, every) in order, failing
// at the first answer that is not the one wanted.
func (f *fixture) takes(t *testing.T, key string, burst int, every time.Duration, calls ...take) {
	t.Helper()
	for i, c := range calls {
		wait, ok, err := f.TakeToken(t.Context(), key, burst, every, c.at)
		if err != nil {
			t.Fatalf("take %d at %v: %v", i+1, c.at, err)
		}
		if want := c.wait; ok != c.ok || (!c.ok && wait != want) || (c.ok && wait != 0) {
			t.Fatalf("take %d at %v = %v, %v; want %v, %v", i+1, c.at, wait, ok, want, c.ok)
		}
	}
}

// granted and refused build the takes of f.takes.
func granted(when time.Time) take                     { return take{at: when, ok: true} }
func refused(when time.Time, wait time.Duration) take { return take{at: when, wait: wait} }

// testRateBurst: a new key starts full: burst takes at one instant, then
// a refusal that waits one interval.
func testRateBurst(t *testing.T, f *fixture) {
	now := at(0)
	f.takes(t, f.id("key"), 3, time.Minute,
		granted(now), granted(now), granted(now), refused(now, time.Minute), refused(now, time.Minute))
}

// testRateRefill: a bucket regains one token per interval, fractions
// counted (the wait is what is left of the interval), never more than the
// burst however long it sits idle; a refused take spends nothing.
func testRateRefill(t *testing.T, f *fixture) {
	t0 := at(0)
	f.takes(t, f.id("key"), 2, time.Minute,
		granted(t0), granted(t0),
		refused(t0.Add(15*time.Second), 45*time.Second),
		refused(t0.Add(30*time.Second), 30*time.Second), // the refusal at 15s spent nothing
		granted(t0.Add(time.Minute)),
		refused(t0.Add(time.Minute), time.Minute),
		// 2.5 tokens' time, but the bucket holds 2.
		granted(t0.Add(time.Minute+150*time.Second)),
		granted(t0.Add(time.Minute+150*time.Second)),
		refused(t0.Add(time.Minute+150*time.Second), time.Minute),
		// A day idle: full, two again.
		granted(t0.Add(24*time.Hour)), granted(t0.Add(24*time.Hour)),
		refused(t0.Add(24*time.Hour), time.Minute),
	)
}

// testRateClockStepsBack: a take with a clock behind the bucket's
// (stepped back, or another replica's) refills nothing and does not move
// the bucket's time back, which would refill later takes.
func testRateClockStepsBack(t *testing.T, f *fixture) {
	t1 := at(30)
	f.takes(t, f.id("key"), 2, time.Minute,
		granted(t1),
		granted(t1.Add(-time.Hour)), // the token left is spent; no hour of refill
		refused(t1.Add(-time.Hour), time.Minute),
		refused(t1.Add(-time.Minute), time.Minute),
		// From t1, not from the earlier clocks: half a token.
		refused(t1.Add(30*time.Second), 30*time.Second),
		granted(t1.Add(time.Minute)),
	)
}

// testRateKeysIndependent: spending one key's tokens leaves another's
// alone, whatever either's burst.
func testRateKeysIndependent(t *testing.T, f *fixture) {
	now := at(0)
	a, b := f.id("a"), f.id("b")
	f.takes(t, a, 1, time.Minute, granted(now), refused(now, time.Minute))
	f.takes(t, b, 2, time.Hour, granted(now), granted(now), refused(now, time.Hour))
	f.takes(t, a, 1, time.Minute, granted(now.Add(time.Minute)))
	f.takes(t, b, 2, time.Hour, refused(now.Add(time.Minute), 59*time.Minute))
}

// testRateConcurrentTakers: many goroutines taking from one key at once,
// new and then refilled, are granted exactly the tokens it holds.
func testRateConcurrentTakers(t *testing.T, f *fixture) {
	const burst, takers, each = 10, 16, 4
	key := f.id("key")
	for _, round := range []struct {
		at   time.Time
		want int
	}{
		{at(0), burst}, // a new bucket: its first insert raced
		{at(5), 5},     // five tokens regained
	} {
		var mu sync.Mutex
		got, errs := 0, 0
		var wg sync.WaitGroup
		for range takers {
			wg.Go(func() {
				for range each {
					wait, ok, err := f.TakeToken(t.Context(), key, burst, time.Minute, round.at)
					mu.Lock()
					switch {
					case err != nil:
						errs++
						t.Errorf("TakeToken: %v", err)
					case ok:
						got++
					case wait != time.Minute:
						t.Errorf("a refusal from an empty bucket waits %v, want 1m", wait)
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if got != round.want || errs != 0 {
			t.Errorf("at %v: %d of %d takes granted (%d failed), want %d", round.at, got, takers*each, errs, round.want)
		}
	}
}

// testRateRefusesBadInput: each bad argument is an error that writes
// nothing: a valid key's bucket is still full afterwards.
func testRateRefusesBadInput(t *testing.T, f *fixture) {
	now := at(0)
	tests := []struct {
		name  string
		key   string
		burst int
		every time.Duration
		now   time.Time
	}{
		{"EmptyKey", "", 1, time.Minute, now},
		{"LongKey", f.id("long") + strings.Repeat("k", store.MaxRateKey), 1, time.Minute, now},
		{"NULInKey", f.id("nul") + "\x00", 1, time.Minute, now},
		{"InvalidUTF8Key", f.id("utf8") + "\xff", 1, time.Minute, now},
		{"ZeroBurst", f.id("zero-burst"), 0, time.Minute, now},
		{"NegativeBurst", f.id("negative-burst"), -1, time.Minute, now},
		{"ZeroEvery", f.id("zero-every"), 1, 0, now},
		{"NegativeEvery", f.id("negative-every"), 1, -time.Second, now},
		{"ZeroNow", f.id("zero-now"), 1, time.Minute, time.Time{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if wait, ok, err := f.TakeToken(t.Context(), tc.key, tc.burst, tc.every, tc.now); err == nil || ok || wait != 0 {
				t.Fatalf("TakeToken = %v, %v, %v; want 0, false and an error", wait, ok, err)
			}
			if !strings.HasSuffix(tc.name, "Key") {
				f.takes(t, tc.key, 1, time.Minute, granted(now), refused(now, time.Minute))
			}
		})
	}
	// A key of MaxRateKey bytes is a key like any other.
	long := f.id("max")
	long += strings.Repeat("k", store.MaxRateKey-len(long))
	f.takes(t, long, 1, time.Minute, granted(now), refused(now, time.Minute))
}

// rateEra is when the deleting checks' buckets live: long before every
// other check's, so that their deletes (which reach every key) take no
// other check's bucket.
func rateEra() time.Time { return time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC) }

// testRateDeleteBefore: the buckets last spent before the cutoff are
// deleted and counted (their keys start full again); one spent at the
// cutoff or after is kept as it was.
func testRateDeleteBefore(t *testing.T, f *fixture) {
	t0 := rateEra()
	cutoff := t0.Add(time.Hour)
	// What an earlier run stopped half-way may have left.
	if _, err := f.DeleteRateBucketsBefore(t.Context(), t0.Add(24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	idle, edge, recent := f.id("idle"), f.id("edge"), f.id("recent")
	f.takes(t, idle, 1, time.Minute, granted(t0))
	f.takes(t, edge, 1, time.Minute, granted(cutoff))
	f.takes(t, recent, 1, time.Minute, granted(t0.Add(2*time.Hour)))
	n, err := f.DeleteRateBucketsBefore(t.Context(), cutoff)
	if err != nil || n != 1 {
		t.Fatalf("DeleteRateBucketsBefore = %d, %v; want 1", n, err)
	}
	f.takes(t, idle, 1, time.Minute, granted(t0)) // full again: deleted
	f.takes(t, edge, 1, time.Minute, refused(cutoff, time.Minute))
	f.takes(t, recent, 1, time.Minute, refused(t0.Add(2*time.Hour), time.Minute))
	if n, err := f.DeleteRateBucketsBefore(t.Context(), t0.Add(24*time.Hour)); err != nil || n != 3 {
		t.Errorf("DeleteRateBucketsBefore of the rest = %d, %v; want 3", n, err)
	}
}

// testRateDeleteRefusesZeroCutoff: a zero cutoff is an error that deletes
// nothing.
func testRateDeleteRefusesZeroCutoff(t *testing.T, f *fixture) {
	key := f.id("key")
	f.takes(t, key, 1, time.Minute, granted(rateEra()))
	if n, err := f.DeleteRateBucketsBefore(t.Context(), time.Time{}); err == nil || n != 0 {
		t.Errorf("DeleteRateBucketsBefore(zero) = %d, %v; want 0 and an error", n, err)
	}
	f.takes(t, key, 1, time.Minute, refused(rateEra(), time.Minute))
	if _, err := f.DeleteRateBucketsBefore(t.Context(), rateEra().Add(time.Hour)); err != nil {
		t.Error(err)
	}
}
