package secret

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// FuzzOpen checks that Open never panics on arbitrary text, fails only with
// one of the package's sentinel errors (SealedKeyID failing on the same
// malformed ones), and never opens a value without the key and aad it was
// sealed with. The only values sealed under fuzzKey are
// the seeds (plaintext fuzzPlain, aad fuzzAAD), and forging GCM is
// infeasible, so any other successful open is a bug.
func FuzzOpen(f *testing.F) {
	fuzzKey := Key{ID: "k1", Secret: keyNew}
	right := mustRing(f, fuzzKey)
	const fuzzPlain, fuzzAAD = "fuzz-token", "mcp_server/o/1/token"
	// Same id, different key: must never open anything.
	wrongKey := mustRing(f, Key{ID: "k1", Secret: keyOther})
	valid := mustSeal(f, right, fuzzPlain, fuzzAAD)
	f.Add(valid)
	f.Add(strings.Replace(valid, "v1:k1:", "v1:k2:", 1))
	f.Add(valid[:len(valid)-4])
	f.Add("v1:k1:")
	f.Add("v1::AAAA")
	f.Add("")
	f.Add(":::")
	f.Add("v1:k1:" + strings.Repeat("A", 40))
	f.Fuzz(func(t *testing.T, s string) {
		pt, err := right.Open(s, []byte(fuzzAAD))
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrUnknownKey) && !errors.Is(err, ErrDecrypt) {
				t.Fatalf("Open: unexpected error kind %v", err)
			}
			if pt != nil {
				t.Fatalf("Open returned plaintext with error")
			}
		} else if !bytes.Equal(pt, []byte(fuzzPlain)) {
			t.Fatalf("Open(%q) = %q: opened a value never sealed", s, pt)
		}
		if pt, err := right.Open(s, []byte("mcp_server/o/2/token")); err == nil {
			t.Fatalf("Open with wrong aad succeeded: %q", pt)
		}
		if pt, err := wrongKey.Open(s, []byte(fuzzAAD)); err == nil {
			t.Fatalf("Open with wrong key succeeded: %q", pt)
		}
		_ = right.NeedsRotation(s)
		// SealedKeyID parses as Open does: it fails exactly on the
		// malformed values, and names the key of every value that opens.
		id, idErr := SealedKeyID(s)
		if (idErr != nil) != errors.Is(err, ErrMalformed) {
			t.Fatalf("SealedKeyID err = %v, Open err = %v: they disagree on malformed", idErr, err)
		}
		if err == nil && id != fuzzKey.ID {
			t.Fatalf("SealedKeyID = %q for a value that opened under %q", id, fuzzKey.ID)
		}
	})
}
