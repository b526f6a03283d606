package ids_test

import (
	"fmt"
	"regexp"
	"sort"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/quiverhq/quiver/ids"
)

// TestRandomFormat: the prefix, then 20 lower-case hex digits, fresh each
// call.
func TestRandomFormat(t *testing.T) {
	format := regexp.MustCompile(`^turn_[0-9a-f]{20}$`)
	seen := map[string]bool{}
	for range 100 {
		id := ids.Random{}.New("turn_")
		if !format.MatchString(id) {
			t.Fatalf("Random.New = %q, want turn_ and 20 hex digits", id)
		}
		if seen[id] {
			t.Fatalf("Random.New repeated %q", id)
		}
		seen[id] = true
	}
}

// TestSequence: each prefix counts from 1 on its own.
func TestSequence(t *testing.T) {
	var s ids.Sequence
	got := []string{s.New("turn_"), s.New("turn_"), s.New("res_"), s.New("turn_"), s.New("")}
	want := []string{"turn_1", "turn_2", "res_1", "turn_3", "1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Sequence (-want +got):\n%s", diff)
	}
}

// TestSequenceConcurrent: concurrent callers get every number once.
func TestSequenceConcurrent(t *testing.T) {
	var s ids.Sequence
	const n = 200
	got := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { got[i] = s.New("c") })
	}
	wg.Wait()
	var want []string
	for i := 1; i <= n; i++ {
		want = append(want, fmt.Sprintf("c%d", i))
	}
	sort.Strings(got)
	sort.Strings(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("concurrent Sequence (-want +got):\n%s", diff)
	}
}

// TestOrRandom: nil becomes Random, any other Source is kept.
func TestOrRandom(t *testing.T) {
	if _, ok := ids.OrRandom(nil).(ids.Random); !ok {
		t.Errorf("OrRandom(nil) = %T, want ids.Random", ids.OrRandom(nil))
	}
	s := &ids.Sequence{}
	if ids.OrRandom(s) != s {
		t.Error("OrRandom(s) did not keep s")
	}
}
