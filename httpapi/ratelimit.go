package httpapi

import (
	"math"
	"sync"
	"time"
)

// RateLimit is a token bucket per user (organisation + user) on sending
// messages and answers: Burst messages back to back, then one per Every.
type RateLimit struct {
	// Burst is how many messages a user may send at once; 0 means 10,
	// negative turns the limit off.
	Burst int
	// Every is how long one more message takes to become available; 0
	// means 6s (10 a minute).
	Every time.Duration
}

// Defaults of RateLimit's zero values.
const (
	DefaultBurst = 10
	DefaultEvery = 6 * time.Second
)

// maxBuckets is when the limiter forgets users whose buckets are full
// (a full bucket is the same as none).
const maxBuckets = 10_000

// limiter holds the buckets; safe for concurrent use.
type limiter struct {
	burst float64
	every time.Duration
	off   bool
	now   func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

func newLimiter(rl RateLimit, now func() time.Time) *limiter {
	l := &limiter{burst: float64(rl.Burst), every: rl.Every, off: rl.Burst < 0, now: now, buckets: map[string]*bucket{}}
	if rl.Burst == 0 {
		l.burst = DefaultBurst
	}
	if l.every <= 0 {
		l.every = DefaultEvery
	}
	return l
}

// take spends one token of key's bucket. When none is left it reports
// false and how long until one is.
func (l *limiter) take(key string) (wait time.Duration, ok bool) {
	if l.off {
		return 0, true
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[key]
	if b == nil {
		if len(l.buckets) >= maxBuckets {
			l.forgetFull(now)
		}
		b = &bucket{tokens: l.burst, at: now}
		l.buckets[key] = b
	}
	l.refill(b, now)
	if b.tokens >= 1 {
		b.tokens--
		return 0, true
	}
	return time.Duration(math.Ceil((1 - b.tokens) * float64(l.every))), false
}

func (l *limiter) refill(b *bucket, now time.Time) {
	if d := now.Sub(b.at); d > 0 { // a clock stepping back refills nothing
		b.tokens = math.Min(l.burst, b.tokens+float64(d)/float64(l.every))
		b.at = now
	}
}

func (l *limiter) forgetFull(now time.Time) {
	for k, b := range l.buckets {
		if l.refill(b, now); b.tokens >= l.burst {
			delete(l.buckets, k)
		}
	}
}
