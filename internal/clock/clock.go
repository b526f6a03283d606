// Package clock is Quiver's wall clock: every default "now" in the project
// reads [Now], so the whole program (and every test that stands for the
// real clock) can be moved in time at once.
//
// Go reads the time from the vDSO, not through libc, so preload tricks such
// as faketime do not reach it; QUIVER_CLOCK_OFFSET does. Setting it to a Go
// duration ("8760h", "-36h", "90m") shifts Now by that much, which is how
// the test script proves that no test depends on the date or the time of
// day it runs at. Clocks a test fixes (a constant instant) are not shifted:
// mixing one with Now is exactly the mistake the shifted run exposes.
package clock

import (
	"fmt"
	"os"
	"sync"
	"time"
)

// OffsetEnv names the environment variable that shifts [Now].
const OffsetEnv = "QUIVER_CLOCK_OFFSET"

// offset is read once: the environment of a process does not change under
// it, and Now is called on hot paths.
var offset = sync.OnceValues(func() (time.Duration, error) {
	return ParseOffset(os.Getenv(OffsetEnv))
})

// ParseOffset parses a clock offset: "" is none, otherwise a Go duration.
func ParseOffset(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%s=%q: want a duration such as 8760h: %w", OffsetEnv, s, err)
	}
	return d, nil
}

// Offset returns the shift QUIVER_CLOCK_OFFSET asks for: 0 when unset or
// invalid (quiver refuses to start with an invalid one; see ParseOffset).
func Offset() time.Duration {
	d, _ := offset()
	return d
}

// Now returns the current time, shifted by QUIVER_CLOCK_OFFSET. It keeps
// the monotonic reading, so durations between two calls are exact. Safe
// for concurrent use.
func Now() time.Time {
	return time.Now().Add(Offset())
}
