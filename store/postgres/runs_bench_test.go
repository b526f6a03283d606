package postgres

import (
	"testing"

	"github.com/quiverhq/quiver/internal/pgtest"
	"github.com/quiverhq/quiver/store/storetest"
)

// BenchmarkTurnEvents appends and lists a turn's events (see
// storetest.BenchmarkTurnEvents) on a database of its own.
func BenchmarkTurnEvents(b *testing.B) {
	storetest.BenchmarkTurnEvents(b, openTest(b, pgtest.URL(b)))
}

// BenchmarkRuns renews leases and claims and ends runs (see
// storetest.BenchmarkRuns) on a database of its own.
func BenchmarkRuns(b *testing.B) {
	storetest.BenchmarkRuns(b, openTest(b, pgtest.URL(b)))
}
