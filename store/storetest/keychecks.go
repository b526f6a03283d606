package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/quiverhq/quiver/store"
)

// This file checks the deployment's keyring check: one value for the
// whole database, replaced only over the value the writer read (a first
// set over none), so that of replicas starting together exactly one
// stores it. The value is one row shared by every check, so these checks
// run alone, each starting from none and putting back, when it ends, the
// value it found.

// keyCheckAloneCases checks the KeyChecks repository.
func keyCheckAloneCases() []suiteCase {
	return []suiteCase{
		{"RoundTrip", testKeyCheckRoundTrip},
		{"Conflict", testKeyCheckConflict},
		{"RefusedValues", testKeyCheckRefused},
		{"ConcurrentFirstSet", testKeyCheckConcurrentFirstSet},
		{"ConcurrentReplace", testKeyCheckConcurrentReplace},
	}
}

// noKeyCheck removes the stored keyring check, failing the test if it
// cannot, and puts it back when the test ends.
func (f *fixture) noKeyCheck(t *testing.T) {
	t.Helper()
	found := f.keyCheck(t)
	f.setKeyCheck(t, found, "")
	ctx := context.WithoutCancel(t.Context()) // t.Context is done when cleanups run
	t.Cleanup(func() {
		now, err := f.KeyCheck(ctx)
		if err == nil {
			err = f.SetKeyCheck(ctx, now, found)
		}
		if err != nil {
			t.Errorf("put back the keyring check: %v", err)
		}
	})
}

// keyCheck returns KeyCheck's answer, failing the test on error.
func (f *fixture) keyCheck(t *testing.T) string {
	t.Helper()
	got, err := f.KeyCheck(t.Context())
	if err != nil {
		t.Fatalf("KeyCheck: %v", err)
	}
	return got
}

// setKeyCheck replaces old with sealed, failing the test on error.
func (f *fixture) setKeyCheck(t *testing.T, old, sealed string) {
	t.Helper()
	if err := f.SetKeyCheck(t.Context(), old, sealed); err != nil {
		t.Fatalf("SetKeyCheck %q -> %q: %v", old, sealed, err)
	}
}

// wantKeyCheck fails unless the stored keyring check is want.
func (f *fixture) wantKeyCheck(t *testing.T, what, want string) {
	t.Helper()
	if got := f.keyCheck(t); got != want {
		t.Errorf("%s: KeyCheck = %q, want %q", what, got, want)
	}
}

// testKeyCheckRoundTrip sets, replaces, keeps, removes and sets again.
func testKeyCheckRoundTrip(t *testing.T, f *fixture) {
	f.noKeyCheck(t)
	f.wantKeyCheck(t, "none stored", "")
	steps := []struct{ name, old, sealed string }{
		{"FirstSet", "", "v1:k1:" + f.prefix},
		{"Replace", "v1:k1:" + f.prefix, "v1:k2:second"},
		{"Same", "v1:k2:second", "v1:k2:second"},
		{"Remove", "v1:k2:second", ""},
		{"RemoveNone", "", ""},
		{"SetAgain", "", "v1:k3:Zürich\ttab"},
	}
	for _, st := range steps {
		f.setKeyCheck(t, st.old, st.sealed)
		f.wantKeyCheck(t, st.name, st.sealed)
	}
}

// testKeyCheckConflict changes the check over every value but the stored
// one and checks that each is ErrConflict and leaves it as it was.
func testKeyCheckConflict(t *testing.T, f *fixture) {
	f.noKeyCheck(t)
	const stored = "v1:k1:stored"
	if err := f.SetKeyCheck(t.Context(), "v1:k1:never-stored", "v1:k1:x"); !errors.Is(err, store.ErrConflict) {
		t.Errorf("a replace over a value when none is stored: err = %v, want store.ErrConflict", err)
	}
	if err := f.SetKeyCheck(t.Context(), "v1:k1:never-stored", ""); !errors.Is(err, store.ErrConflict) {
		t.Errorf("a remove of a value when none is stored: err = %v, want store.ErrConflict", err)
	}
	f.wantKeyCheck(t, "after refused changes over none", "")
	f.setKeyCheck(t, "", stored)
	for _, tc := range []struct{ name, old, sealed string }{
		{"FirstSetOverStored", "", "v1:k2:first"},
		{"StaleReplace", "v1:k1:stale", "v1:k2:next"},
		{"StaleRemove", "v1:k1:stale", ""},
		{"NoneOverStored", "", ""},
		{"PrefixOfStored", "v1:k1:", "v1:k2:next"},
		{"OtherCase", "V1:K1:STORED", "v1:k2:next"},
	} {
		err := f.SetKeyCheck(t.Context(), tc.old, tc.sealed)
		wantErrIs(t, tc.name, err, store.ErrConflict)
		f.wantKeyCheck(t, "after "+tc.name, stored)
	}
	f.setKeyCheck(t, stored, "v1:k2:next")
	f.wantKeyCheck(t, "a replace over the stored value after refused ones", "v1:k2:next")
}

// testKeyCheckRefused stores values PostgreSQL's text cannot hold, over
// the right old value: each is an error other than ErrConflict, and the
// stored check stays.
func testKeyCheckRefused(t *testing.T, f *fixture) {
	f.noKeyCheck(t)
	const stored = "v1:k1:stored"
	f.setKeyCheck(t, "", stored)
	for _, tc := range []struct{ name, sealed string }{
		{"NUL", "v1:k1:a\x00b"},
		{"InvalidUTF8", "v1:k1:\xff\xfe"},
		{"Control", "v1:k1:\x1b[2J"},
	} {
		err := f.SetKeyCheck(t.Context(), stored, tc.sealed)
		if err == nil || errors.Is(err, store.ErrConflict) {
			t.Errorf("%s: err = %v, want a refusal", tc.name, err)
		}
		f.wantKeyCheck(t, "after "+tc.name, stored)
	}
}

// testKeyCheckConcurrentFirstSet starts writers together over none, round
// after round: exactly one stores its value, every other gets ErrConflict.
func testKeyCheckConcurrentFirstSet(t *testing.T, f *fixture) {
	f.noKeyCheck(t)
	const rounds = 10
	for r := range rounds {
		if r > 0 {
			f.setKeyCheck(t, f.keyCheck(t), "")
		}
		f.raceKeyCheck(t, fmt.Sprint("round ", r), "")
	}
}

// testKeyCheckConcurrentReplace starts writers together over the stored
// value, round after round: exactly one replaces it.
func testKeyCheckConcurrentReplace(t *testing.T, f *fixture) {
	f.noKeyCheck(t)
	old := "v1:k0:start"
	f.setKeyCheck(t, "", old)
	const rounds = 10
	for r := range rounds {
		old = f.raceKeyCheck(t, fmt.Sprint("round ", r), old)
	}
}

// raceKeyCheck makes writers, released together, replace old with values
// of their own, fails the test unless exactly one succeeded, the others
// got ErrConflict and the winner's value is stored, and returns it.
func (f *fixture) raceKeyCheck(t *testing.T, what, old string) string {
	t.Helper()
	const writers = 8
	values := make([]string, writers)
	errs := make([]error, writers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range values {
		values[i] = fmt.Sprintf("v1:w%d:%s/%s", i, f.prefix, what)
		wg.Go(func() {
			<-start
			errs[i] = f.SetKeyCheck(t.Context(), old, values[i])
		})
	}
	close(start)
	wg.Wait()
	won := -1
	for i, err := range errs {
		switch {
		case err == nil && won >= 0:
			t.Fatalf("%s: writers %d and %d both replaced %q", what, won, i, old)
		case err == nil:
			won = i
		case !errors.Is(err, store.ErrConflict):
			t.Fatalf("%s, writer %d: err = %v, want nil or store.ErrConflict", what, i, err)
		}
	}
	if won < 0 {
		t.Fatalf("%s: no writer replaced %q", what, old)
	}
	f.wantKeyCheck(t, what+": the winner's value", values[won])
	return values[won]
}
