package postgres

import (
	"testing"

	"github.com/quiverhq/quiver/internal/pgtest"
	"github.com/quiverhq/quiver/store/storetest"
)

// BenchmarkBlob puts and gets 1 MiB blobs (see storetest.BenchmarkBlobs)
// on a database of its own.
func BenchmarkBlob(b *testing.B) {
	storetest.BenchmarkBlobs(b, openTest(b, pgtest.URL(b)))
}
