package httpapi

import (
	"context"
	"testing"
)

// TestWatchCountsEndedRuns: a watch counts the runs under its key that
// end while it watches (and no other key's), and the last watcher's stop
// forgets the key, so watching holds no memory beyond the requests in
// flight.
func TestWatchCountsEndedRuns(t *testing.T) {
	turns := newRunningTurns()
	_, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	before, _ := turns.start("k", "u", cancel)
	ended, stop := turns.watch("k")
	other, stopOther := turns.watch("k")
	if ended() != 0 {
		t.Fatalf("ended %d before any run ended", ended())
	}
	turns.done("k", before)
	rt, _ := turns.start("j", "u", cancel)
	turns.done("j", rt)
	if ended() != 1 || other() != 1 {
		t.Errorf("ended %d and %d, want 1 each (a run under k ended; j is another key)", ended(), other())
	}
	stop()
	if len(turns.watched) != 1 {
		t.Errorf("a watcher's stop forgot the key another still watches")
	}
	stopOther()
	if len(turns.watched) != 0 {
		t.Errorf("%d keys still watched after every watcher stopped", len(turns.watched))
	}
}
