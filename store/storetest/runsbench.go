package storetest

import (
	"crypto/rand"
	"fmt"
	"testing"
	"time"

	"github.com/quiverhq/quiver/store"
)

// benchStart is the instant the benchmarks' runs and events carry.
var benchStart = time.Unix(1_700_000_000, 0)

// benchEventData is a coalesced text event of a typical size (about 200
// bytes of JSON).
var benchEventData = []byte(`{"type":"text","text":"` + fmt.Sprintf("%0180d", 0) + `"}`)

// BenchmarkTurnEvents measures the hot TurnEvents calls on s, as b's
// sub-benchmarks: Append1 and Append16 append one event and a batch of 16
// to one turn, List100 reads a page of 100 from a turn of 1000. Each run
// of a sub-benchmark uses identifiers of its own (benchIDs), so s may hold
// other data and -count may repeat them.
func BenchmarkTurnEvents(b *testing.B, s store.TurnEvents) {
	for _, batch := range []int{1, 16} {
		b.Run(fmt.Sprintf("Append%d", batch), func(b *testing.B) {
			f := benchIDs()
			org, conv, turn := f.id("org"), f.id("conv"), f.id("turn")
			next := int64(1)
			for b.Loop() {
				if err := s.AppendTurnEvents(b.Context(), org, conv, turn, benchEvents(next, batch)); err != nil {
					b.Fatal(err)
				}
				next += int64(batch)
			}
		})
	}
	b.Run("List100", func(b *testing.B) {
		f := benchIDs()
		org, conv, turn := f.id("org"), f.id("conv"), f.id("turn")
		if err := s.AppendTurnEvents(b.Context(), org, conv, turn, benchEvents(1, 1000)); err != nil {
			b.Fatal(err)
		}
		i := 0
		for b.Loop() {
			evs, err := s.ListTurnEvents(b.Context(), org, turn, int64(i%900), 100)
			if err != nil || len(evs) != 100 {
				b.Fatalf("ListTurnEvents: %d events, %v", len(evs), err)
			}
			i += 37
		}
	})
}

// benchIDs returns identifiers unique to one run of a sub-benchmark.
func benchIDs() *fixture { return &fixture{prefix: "bench-" + rand.Text()} }

// benchEvents returns n events from seq first.
func benchEvents(first int64, n int) []store.TurnEvent {
	evs := make([]store.TurnEvent, n)
	for i := range evs {
		evs[i] = store.TurnEvent{Seq: first + int64(i), Kind: "text", Data: benchEventData, CreatedAt: benchStart}
	}
	return evs
}

// BenchmarkRuns measures the Runs calls a replica makes all the time, as
// b's sub-benchmarks: Renew10 is its heartbeat over 10 runs, ClaimEnd a
// turn's claim and release. Each run of a sub-benchmark uses identifiers
// of its own.
func BenchmarkRuns(b *testing.B, s store.Runs) {
	var f *fixture
	run := func(conv, turn, replica string) store.Run {
		return store.Run{OrgID: f.id("org"), ConversationID: f.id(conv), TurnID: f.id(turn), UserID: f.id("user"),
			Replica: f.id(replica), StartedAt: benchStart, ExpiresAt: benchStart.Add(time.Hour)}
	}
	b.Run("Renew10", func(b *testing.B) {
		f = benchIDs()
		for i := range 10 {
			if _, err := s.ClaimRun(b.Context(), run(fmt.Sprint("renew-", i), fmt.Sprint("turn-", i), "replica")); err != nil {
				b.Fatal(err)
			}
		}
		for b.Loop() {
			runs, err := s.RenewRuns(b.Context(), f.id("replica"), benchStart, benchStart.Add(time.Hour))
			if err != nil || len(runs) != 10 {
				b.Fatalf("RenewRuns: %d runs, %v", len(runs), err)
			}
		}
	})
	b.Run("ClaimEnd", func(b *testing.B) {
		f = benchIDs()
		i := 0
		for b.Loop() {
			i++
			r := run("claim", fmt.Sprint("turn-", i), "replica")
			if _, err := s.ClaimRun(b.Context(), r); err != nil {
				b.Fatal(err)
			}
			if err := s.EndRun(b.Context(), r.OrgID, r.ConversationID, r.TurnID, benchStart); err != nil {
				b.Fatal(err)
			}
		}
	})
}
