// Package ids makes the identifiers Quiver stores and hands out: turns,
// conversations, stored results, users, registrations. Every component that
// makes one takes a [Source] in its Config, nil meaning [Random], so a test
// injects a [Sequence] and reads predictable IDs instead of matching random
// ones. [Slug] makes the stable IDs of things known by a display name
// (the CLI's users and organisations). Secrets are not IDs: they are made
// where they are hashed, from crypto/rand, and never through a Source.
package ids

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"sync"
)

// Source makes identifiers. New returns prefix followed by a part made of
// lower-case letters and digits only, so an ID is safe in a URL path, a file
// name and a log line without escaping. The part differs from every earlier
// one the Source returned for that prefix (for Random, with the odds of an
// 80-bit collision). A Source must be safe for concurrent use.
type Source interface {
	New(prefix string) string
}

// Random is the default Source: prefix followed by 20 lower-case hex digits
// (80 bits from crypto/rand), e.g. "turn_3f9a0c1e5b7d2a4c6e8f". The zero
// value is ready to use and safe for concurrent use.
type Random struct{}

// New returns prefix and 20 fresh random hex digits.
func (Random) New(prefix string) string {
	var b [10]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never returns an error
	return prefix + hex.EncodeToString(b[:])
}

// Sequence is a deterministic Source for tests: the nth ID it makes with a
// prefix is that prefix followed by n, counted from 1 for each prefix on
// its own ("turn_1", "turn_2", "res_1"). The zero value is ready; use it
// through a pointer. It is safe for concurrent use.
type Sequence struct {
	mu sync.Mutex
	n  map[string]int
}

// New returns prefix followed by how many IDs s has made with it so far,
// this one included.
func (s *Sequence) New(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n == nil {
		s.n = map[string]int{}
	}
	s.n[prefix]++
	return prefix + strconv.Itoa(s.n[prefix])
}

// OrRandom is s, or Random when s is nil: the default every Config with a
// Source field applies.
func OrRandom(s Source) Source {
	if s == nil {
		return Random{}
	}
	return s
}
