package storetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"
)

// This file checks the targets a conversation opened: appended in the
// order given, each once, kept in the order they first opened, per
// organisation and conversation, and atomically under concurrent calls.

// openTargets returns OpenIntentTargets' answer, failing the test on
// error.
func (f *fixture) openTargets(t *testing.T, org, conv string, targets []string) []string {
	t.Helper()
	got, err := f.OpenIntentTargets(t.Context(), org, conv, targets)
	if err != nil {
		t.Fatalf("OpenIntentTargets(%q): %v", targets, err)
	}
	return got
}

// wantTargets fails unless got is want, in order; nil and empty lists are
// equal.
func wantTargets(t *testing.T, what string, want, got []string) {
	t.Helper()
	if d := diff(want, got); d != "" {
		t.Errorf("%s (-want +got):\n%s", what, d)
	}
}

// testOpenTargets opens targets in one conversation in turn and checks
// each answer, that a read afterwards agrees, and that the caller's slice
// is left alone.
func testOpenTargets(t *testing.T, f *fixture) {
	org, conv := f.id("org"), f.id("conv")
	steps := []struct {
		name    string
		targets []string
		want    []string
	}{
		{"NewConversationNil", nil, nil},
		{"NewConversationEmpty", []string{}, nil},
		{"First", []string{"search"}, []string{"search"}},
		{"NewInGivenOrder", []string{"image", "search", "voice"}, []string{"search", "image", "voice"}},
		{"AllOpen", []string{"voice", "search"}, []string{"search", "image", "voice"}},
		{"OnlyRead", nil, []string{"search", "image", "voice"}},
		{"RepeatedInOneCall", []string{"memory", "calculator", "memory", "calculator"},
			[]string{"search", "image", "voice", "memory", "calculator"}},
		{"Mixed", []string{"files", "image", "media-analysis", "search"},
			[]string{"search", "image", "voice", "memory", "calculator", "files", "media-analysis"}},
	}
	for _, st := range steps {
		given := slices.Clone(st.targets)
		wantTargets(t, st.name+": OpenIntentTargets", st.want, f.openTargets(t, org, conv, given))
		if !slices.Equal(given, st.targets) {
			t.Errorf("%s: OpenIntentTargets changed its argument to %q", st.name, given)
		}
		wantTargets(t, st.name+": OpenIntentTargets read after", st.want, f.openTargets(t, org, conv, nil))
	}
}

// testOpenTargetsScope checks that a conversation's targets are its own:
// the same conversation ID in another organisation, and another
// conversation, start empty and keep their own.
func testOpenTargetsScope(t *testing.T, f *fixture) {
	org, other := f.id("org"), f.id("other-org")
	conv, conv2 := f.id("conv"), f.id("conv2")
	f.openTargets(t, org, conv, []string{"search", "image"})
	tests := []struct {
		name, org, conv string
		targets, want   []string
	}{
		{"OtherOrgStartsEmpty", other, conv, nil, nil},
		{"OtherConversationStartsEmpty", org, conv2, nil, nil},
		{"UnknownOrg", f.id("unknown-org"), conv, nil, nil},
		{"EmptyOrg", "", conv, nil, nil},
		{"OtherOrgOpens", other, conv, []string{"voice", "search"}, []string{"voice", "search"}},
		{"OtherConversationOpens", org, conv2, []string{"image"}, []string{"image"}},
		{"MineUnchanged", org, conv, nil, []string{"search", "image"}},
	}
	for _, tc := range tests {
		wantTargets(t, tc.name, tc.want, f.openTargets(t, tc.org, tc.conv, tc.targets))
	}
}

// testOpenTargetsConcurrent opens overlapping sets of targets in one
// conversation from 8 goroutines at once, while 2 others read, and checks
// that the conversation ends with each target once, that every answer is
// a prefix of the final list (a snapshot of it in the making) and that a
// writer's answer holds its targets. It repeats on a few conversations to
// meet more interleavings.
func testOpenTargetsConcurrent(t *testing.T, f *fixture) {
	const writers, readers, rounds = 8, 2, 10
	pool := []string{"search", "image", "voice", "memory", "files", "calculator"}
	sets := make([][]string, writers+readers) // a reader's set is nil
	for i := range writers {
		sets[i] = []string{pool[i%len(pool)], pool[(i+2)%len(pool)], pool[(i+5)%len(pool)]}
	}
	org := f.id("org")
	for r := range rounds {
		conv := f.id(fmt.Sprint("conv-", r))
		f.openTargets(t, org, conv, []string{"thread"})
		got := make([][]string, len(sets))
		errs := make([]error, len(sets))
		var wg sync.WaitGroup
		for i := range sets {
			wg.Go(func() { got[i], errs[i] = f.OpenIntentTargets(t.Context(), org, conv, sets[i]) })
		}
		wg.Wait()
		final := f.openTargets(t, org, conv, nil)
		wantOpenedOnce(t, final, append([]string{"thread"}, pool...))
		for i := range sets {
			if errs[i] != nil {
				t.Errorf("round %d, caller %d: OpenIntentTargets(%q): %v", r, i, sets[i], errs[i])
				continue
			}
			if len(got[i]) > len(final) || !slices.Equal(got[i], final[:len(got[i])]) {
				t.Errorf("round %d, caller %d: answer %q is not a prefix of the final %q", r, i, got[i], final)
			}
			for _, target := range sets[i] {
				if !slices.Contains(got[i], target) {
					t.Errorf("round %d, caller %d: answer %q lacks %q it opened", r, i, got[i], target)
				}
			}
		}
	}
}

// wantOpenedOnce fails unless final holds each of want once, and nothing
// else, starting with want[0].
func wantOpenedOnce(t *testing.T, final, want []string) {
	t.Helper()
	sorted := slices.Sorted(slices.Values(final))
	if !slices.Equal(slices.Compact(slices.Clone(sorted)), sorted) {
		t.Errorf("final targets %q hold a target twice", final)
	}
	if !slices.Equal(sorted, slices.Sorted(slices.Values(want))) {
		t.Errorf("final targets %q, want each of %q once", final, want)
	}
	if len(final) == 0 || final[0] != want[0] {
		t.Errorf("final targets %q, want %q, opened first, first", final, want[0])
	}
}
