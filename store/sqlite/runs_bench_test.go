package sqlite

import (
	"testing"

	"github.com/quiverhq/quiver/store/storetest"
)

// BenchmarkTurnEvents appends and lists a turn's events (see
// storetest.BenchmarkTurnEvents).
func BenchmarkTurnEvents(b *testing.B) {
	storetest.BenchmarkTurnEvents(b, openTest(b, b.TempDir()))
}

// BenchmarkRuns renews leases and claims and ends runs (see
// storetest.BenchmarkRuns).
func BenchmarkRuns(b *testing.B) {
	storetest.BenchmarkRuns(b, openTest(b, b.TempDir()))
}
