package secret

import "testing"

func BenchmarkSeal(b *testing.B) {
	r := mustRing(b, Key{ID: "k1", Secret: keyNew})
	pt, aad := []byte(token), []byte(row1)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Seal(pt, aad); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOpen(b *testing.B) {
	r := mustRing(b, Key{ID: "k1", Secret: keyNew})
	s := mustSeal(b, r, token, row1)
	aad := []byte(row1)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Open(s, aad); err != nil {
			b.Fatal(err)
		}
	}
}
