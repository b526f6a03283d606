package sqlite

import (
	"testing"

	"github.com/quiverhq/quiver/store/storetest"
)

// BenchmarkMemories searches 10,000 memories by text and by vector (see
// storetest.BenchmarkMemories).
func BenchmarkMemories(b *testing.B) {
	storetest.BenchmarkMemories(b, openTest(b, b.TempDir()), 10_000)
}
