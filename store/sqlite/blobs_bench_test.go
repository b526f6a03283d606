package sqlite

import (
	"testing"

	"github.com/quiverhq/quiver/store/storetest"
)

// BenchmarkBlob puts and gets 1 MiB blobs (see storetest.BenchmarkBlobs).
func BenchmarkBlob(b *testing.B) {
	storetest.BenchmarkBlobs(b, openTest(b, b.TempDir()))
}
