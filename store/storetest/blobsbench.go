package storetest

import (
	"crypto/rand"
	"fmt"
	mrand "math/rand/v2"
	"testing"
	"time"

	"github.com/quiverhq/quiver/store"
)

// benchBlobBytes is the size of the blobs BenchmarkBlobs moves.
const benchBlobBytes = 1 << 20

// BenchmarkBlobs measures s's PutBlob and GetBlob of 1 MiB blobs of
// random (incompressible) bytes, as b's sub-benchmarks Put1MiB and
// Get1MiB, reporting bytes per second. Each call of it uses identifiers of
// its own, so s may hold other data.
func BenchmarkBlobs(b *testing.B, s store.Blobs) {
	f := &fixture{prefix: "bench-" + rand.Text()}
	data := make([]byte, benchBlobBytes)
	rng := mrand.New(mrand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	blob := func(i int) store.Blob {
		return store.Blob{
			OrgID: f.id("org"), ID: f.id(fmt.Sprint("blob-", i)), OwnerID: f.id("owner"),
			ConversationID: f.id("conv"), Name: "bench.bin", MediaType: "application/octet-stream",
			CreatedAt: time.Unix(1_700_000_000, 0), Data: data,
		}
	}
	n := 0
	b.Run("Put1MiB", func(b *testing.B) {
		b.SetBytes(benchBlobBytes)
		for b.Loop() {
			if _, err := s.PutBlob(b.Context(), blob(n), store.BlobQuota{}); err != nil {
				b.Fatal(err)
			}
			n++
		}
	})
	if n == 0 {
		return
	}
	b.Run("Get1MiB", func(b *testing.B) {
		b.SetBytes(benchBlobBytes)
		i := 0
		for b.Loop() {
			got, err := s.GetBlob(b.Context(), f.id("org"), blob(i%n).ID)
			if err != nil || len(got.Data) != benchBlobBytes {
				b.Fatalf("GetBlob: %d bytes, %v", len(got.Data), err)
			}
			i++
		}
	})
}
