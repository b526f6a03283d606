package postgres

import (
	"testing"

	"github.com/quiverhq/quiver/internal/pgtest"
	"github.com/quiverhq/quiver/store/storetest"
)

// BenchmarkMemories searches 10,000 memories by text and by vector (see
// storetest.BenchmarkMemories).
func BenchmarkMemories(b *testing.B) {
	storetest.BenchmarkMemories(b, openTest(b, pgtest.URL(b)), 10_000)
}

// BenchmarkMemories100k searches one person's memories among 100,000 of
// their organisation (storetest.BenchmarkMemories); it runs only with
// QUIVER_BENCH_LARGE=1.
func BenchmarkMemories100k(b *testing.B) {
	storetest.LargeBenchmarks(b)
	storetest.BenchmarkMemories(b, openTest(b, pgtest.URL(b)), 100_000)
}
