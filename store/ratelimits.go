package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"
)

// MaxRateKey bounds a rate bucket's key, in bytes.
const MaxRateKey = 512

// RateLimits holds token buckets shared by every process over the store,
// so that replicas behind a load balancer give a caller one bucket, not
// one each. A bucket holds up to burst tokens and regains one per every;
// a key never seen, or whose bucket was deleted, starts full. Buckets are
// ephemeral: exports leave them out, and a bucket idle for burst·every is
// full, the same as none, which is what lets DeleteRateBucketsBefore
// forget it. Times are the callers' (each from its own clock); the store
// reads no clock.
type RateLimits interface {
	// TakeToken spends one token of key's bucket of capacity burst, which
	// regains one token per every, as of now, atomically across
	// processes: concurrent takers of one key, from any processes, never
	// spend more tokens than the bucket holds. When a token is there it
	// is spent and ok is true. Otherwise nothing is spent, ok is false,
	// and wait is how long until a token is (at most every). A now
	// before the bucket's last spend (a clock stepping back, or a replica
	// whose clock is behind) refills nothing, leaves the bucket's time
	// where it was, and counts wait as if now were that time. An empty key or one over MaxRateKey
	// bytes, not valid UTF-8 or holding a NUL byte, burst < 1, every <= 0
	// or a zero now is refused with an error, writing nothing.
	TakeToken(ctx context.Context, key string, burst int, every time.Duration, now time.Time) (wait time.Duration, ok bool, err error)
	// DeleteRateBucketsBefore deletes every bucket, of any key, whose
	// last spend was before `before`, and returns how many it deleted.
	// Passing now minus the longest burst·every in use deletes only full
	// buckets, so no caller notices. A zero before is refused.
	DeleteRateBucketsBefore(ctx context.Context, before time.Time) (int, error)
}

// CheckTakeToken reports the first way TakeToken's arguments break its
// contract, or nil: each backend calls it before reading or writing.
func CheckTakeToken(key string, burst int, every time.Duration, now time.Time) error {
	switch {
	case key == "":
		return errors.New("empty rate bucket key")
	case len(key) > MaxRateKey:
		return fmt.Errorf("rate bucket key of %d bytes, more than %d", len(key), MaxRateKey)
	case !utf8.ValidString(key) || strings.ContainsRune(key, 0):
		return errors.New("rate bucket key is not UTF-8 text without NUL")
	case burst < 1:
		return fmt.Errorf("rate bucket burst %d, want at least 1", burst)
	case every <= 0:
		return fmt.Errorf("rate bucket refill interval %v, want more than 0", every)
	case now.IsZero():
		return errors.New("no time for the rate bucket take")
	}
	return nil
}

// CheckDeleteRateBuckets reports whether DeleteRateBucketsBefore's cutoff
// breaks its contract, or nil.
func CheckDeleteRateBuckets(before time.Time) error {
	if before.IsZero() {
		return errors.New("no cutoff for deleting rate buckets")
	}
	return nil
}

// RateBucket is a bucket's stored state: Tokens (fractional, 0 to the
// burst) as of At. Backends store it and leave the arithmetic to Take,
// so that both count alike.
type RateBucket struct {
	Tokens float64
	At     time.Time
}

// FullRateBucket is the bucket of a key never seen: burst tokens as of
// now.
func FullRateBucket(burst int, now time.Time) RateBucket {
	return RateBucket{Tokens: float64(burst), At: now}
}

// Take is TakeToken's arithmetic on b, whose arguments CheckTakeToken
// accepted: b refilled to now (nothing when now is not after b.At), then
// one token spent. It returns the bucket to store and ok when a token was
// there; otherwise the wait until one is, ok false, and b itself, which a
// backend need not write again (refilling below the burst and refilling
// later come to the same).
func (b RateBucket) Take(burst int, every time.Duration, now time.Time) (next RateBucket, wait time.Duration, ok bool) {
	next = b
	if d := now.Sub(b.At); d > 0 {
		next = RateBucket{Tokens: math.Min(float64(burst), b.Tokens+float64(d)/float64(every)), At: now}
	}
	if next.Tokens >= 1 {
		next.Tokens--
		return next, 0, true
	}
	return b, time.Duration(math.Ceil((1 - next.Tokens) * float64(every))), false
}
