package accounts_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/quiverhq/quiver/accounts"
	"github.com/quiverhq/quiver/store"
)

// sweptStore counts the sweeps of a store.Accounts; each is answered by
// answer (the call's number from 1) when set, else by the store, and the
// sweep numbered stopAt (never when 0) cancels the sweeper's context.
type sweptStore struct {
	store.Accounts
	calls  int
	stopAt int
	cancel context.CancelFunc
	answer func(ctx context.Context, call int) (int, error)
	// buckets are the rate buckets the sweeper is given; nil for none.
	buckets store.RateLimits
}

func (s *sweptStore) DeleteExpiredCredentials(ctx context.Context, now time.Time) (int, error) {
	s.calls++
	if s.calls == s.stopAt {
		defer s.cancel()
	}
	if s.answer != nil {
		return s.answer(ctx, s.calls)
	}
	return s.Accounts.DeleteExpiredCredentials(ctx, now)
}

// sweep runs a Sweeper with period over f's store wrapped by sw (and
// sw.buckets) until one of them cancels it, and returns what it logged
// (without times).
func sweep(t *testing.T, f *fixture, sw *sweptStore, period time.Duration) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if sw.cancel == nil {
		sw.cancel = cancel
	}
	if b, ok := sw.buckets.(*sweptBuckets); ok && b.cancel == nil {
		b.cancel = cancel
	}
	sw.Accounts = f.st
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}))
	svc := *f.svc
	svc.Store = sw
	accounts.Sweeper{Accounts: &svc, RateLimits: sw.buckets, Period: period, Logger: logger}.Run(ctx)
	return logs.String()
}

// sweptBuckets counts the rate bucket sweeps of a store.RateLimits and
// their cutoffs; each is answered by fail (the call's number from 1)
// when it returns an error, else by the store, and the sweep numbered
// stopAt cancels the sweeper's context.
type sweptBuckets struct {
	store.RateLimits
	cutoffs []time.Time
	stopAt  int
	cancel  context.CancelFunc
	fail    func(call int) error
}

func (b *sweptBuckets) DeleteRateBucketsBefore(ctx context.Context, before time.Time) (int, error) {
	b.cutoffs = append(b.cutoffs, before)
	if len(b.cutoffs) == b.stopAt {
		defer b.cancel()
	}
	if b.fail != nil {
		if err := b.fail(len(b.cutoffs)); err != nil {
			return 0, err
		}
	}
	return b.RateLimits.DeleteRateBucketsBefore(ctx, before)
}

// TestSweeperDeletesIdleRateBuckets: a sweep deletes the rate buckets
// unspent for RateBucketIdle (they start full again) and keeps the
// others, after the credentials, and says how many.
func TestSweeperDeletesIdleRateBuckets(t *testing.T) {
	f := newFixture(t)
	take := func(key string, at time.Time, want bool) {
		t.Helper()
		if _, ok, err := f.st.TakeToken(f.ctx, key, 1, time.Minute, at); err != nil || ok != want {
			t.Fatalf("take of %s at %v = %v, %v; want %v", key, at, ok, err, want)
		}
	}
	take("idle", start, true)
	take("recent", start.Add(2*time.Minute), true)
	f.clock.Advance(accounts.RateBucketIdle + time.Minute)
	buckets := &sweptBuckets{RateLimits: f.st, stopAt: 1}
	logs := sweep(t, f, &sweptStore{buckets: buckets}, 0)
	if want := start.Add(time.Minute); len(buckets.cutoffs) != 1 || !buckets.cutoffs[0].Equal(want) {
		t.Errorf("cutoffs %v, want [%v]", buckets.cutoffs, want)
	}
	take("idle", start, true) // deleted: full again
	take("recent", start.Add(2*time.Minute), false)
	if want := "level=INFO msg=\"idle rate buckets deleted\" count=1\n"; logs != want {
		t.Errorf("logged %q, want %q", logs, want)
	}
}

// TestSweeperGoesOnAfterARateBucketFailure: a failed bucket sweep is
// logged with its error, the credentials are swept every time all the
// same, and the next sweep runs.
func TestSweeperGoesOnAfterARateBucketFailure(t *testing.T) {
	f := newFixture(t)
	buckets := &sweptBuckets{RateLimits: f.st, stopAt: 2, fail: func(call int) error {
		if call == 1 {
			return errors.New("disk full")
		}
		return nil
	}}
	sw := &sweptStore{buckets: buckets}
	logs := sweep(t, f, sw, time.Nanosecond)
	if sw.calls != 2 || len(buckets.cutoffs) != 2 {
		t.Errorf("%d credential and %d bucket sweeps, want 2 of each", sw.calls, len(buckets.cutoffs))
	}
	if want := `level=ERROR msg="delete idle rate buckets" err="disk full"` + "\n"; logs != want {
		t.Errorf("logged %q, want %q", logs, want)
	}
}

// TestSweeperSweepsAtOnce: the first sweep runs at start and deletes the
// expired credentials, and says how many.
func TestSweeperSweepsAtOnce(t *testing.T) {
	f := newFixture(t)
	f.link("alice")
	f.link("bob")
	f.clock.Advance(accounts.LoginLinkTTL + time.Second)
	sw := &sweptStore{stopAt: 1}
	logs := sweep(t, f, sw, 0)
	if sw.calls != 1 || len(f.creds("alice"))+len(f.creds("bob")) != 0 {
		t.Errorf("after one sweep: %d sweeps, credentials left %v %v", sw.calls, f.creds("alice"), f.creds("bob"))
	}
	if want := "level=INFO msg=\"expired credentials deleted\" count=2\n"; logs != want {
		t.Errorf("logged %q, want %q", logs, want)
	}
}

// TestSweeperRepeats: a sweep follows every period until ctx ends, and
// a sweep that deletes nothing logs nothing.
func TestSweeperRepeats(t *testing.T) {
	f := newFixture(t)
	f.link("alice")
	sw := &sweptStore{stopAt: 3}
	logs := sweep(t, f, sw, time.Nanosecond)
	if sw.calls != 3 || len(f.creds("alice")) != 1 {
		t.Errorf("%d sweeps, %d live credentials left; want 3 and 1", sw.calls, len(f.creds("alice")))
	}
	if logs != "" {
		t.Errorf("sweeps that deleted nothing logged %q", logs)
	}
}

// TestSweeperGoesOnAfterAFailure: a failed sweep is logged with its
// error and the next one runs.
func TestSweeperGoesOnAfterAFailure(t *testing.T) {
	f := newFixture(t)
	sw := &sweptStore{stopAt: 2, answer: func(_ context.Context, call int) (int, error) {
		if call == 1 {
			return 0, errors.New("disk full")
		}
		return 0, nil
	}}
	logs := sweep(t, f, sw, time.Nanosecond)
	if sw.calls != 2 {
		t.Errorf("%d sweeps, want 2 (one failed, one after it)", sw.calls)
	}
	if want := `level=ERROR msg="delete expired credentials" err="delete expired credentials: disk full"` + "\n"; logs != want {
		t.Errorf("logged %q, want %q", logs, want)
	}
}

// TestSweeperQuietWhenStopped: a sweep that fails because the context
// ended is no failure to log.
func TestSweeperQuietWhenStopped(t *testing.T) {
	f := newFixture(t)
	sw := &sweptStore{stopAt: 1, answer: func(ctx context.Context, _ int) (int, error) {
		<-ctx.Done()
		return 0, ctx.Err()
	}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	sw.cancel = func() {}
	sw.Accounts = f.st
	var logs strings.Builder
	svc := *f.svc
	svc.Store = sw
	accounts.Sweeper{Accounts: &svc, Logger: slog.New(slog.NewTextHandler(&logs, nil))}.Run(ctx)
	if sw.calls != 1 || logs.Len() != 0 {
		t.Errorf("%d sweeps, logged %q; want 1 and nothing", sw.calls, logs.String())
	}
}
