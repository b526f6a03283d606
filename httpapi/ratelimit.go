package httpapi

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/quiverhq/quiver/store"
)

// RateLimit is a token bucket per user (organisation + user) on sending
// messages and answers and on console runs: Burst back to back, then one
// per Every. The buckets live in the store (store.RateLimits), so every
// server over one store, each replica behind a load balancer, counts one
// bucket per user. accounts.Sweeper forgets buckets idle for a day, so a
// Burst·Every above a day refills an idle user early.
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

// limiter is the RateLimit policy over the store's buckets; it holds no
// state of its own, so it is safe for concurrent use and agrees with
// every other server's limiter over the same store.
type limiter struct {
	burst int
	every time.Duration
	off   bool
	now   func() time.Time
}

func newLimiter(rl RateLimit, now func() time.Time) *limiter {
	l := &limiter{burst: rl.Burst, every: rl.Every, off: rl.Burst < 0, now: now}
	if rl.Burst == 0 {
		l.burst = DefaultBurst
	}
	if l.every <= 0 {
		l.every = DefaultEvery
	}
	return l
}

// take spends one token of the user's bucket in st. When none is left it
// reports false and how long until one is; a store failure is an error,
// never a token.
func (l *limiter) take(ctx context.Context, st store.RateLimits, orgID, userID string) (wait time.Duration, ok bool, err error) {
	if l.off {
		return 0, true, nil
	}
	return st.TakeToken(ctx, rateKey(orgID, userID), l.burst, l.every, l.now())
}

// rateKey is the user's bucket key: the limit's name, then the
// organisation ID's length, so that no two (organisation, user) pairs
// share a key whatever their IDs hold.
func rateKey(orgID, userID string) string {
	return "messages/" + strconv.Itoa(len(orgID)) + "/" + orgID + "/" + userID
}

// rateLimit spends one of the caller's tokens (messages, answers and
// console runs share the bucket), or answers 429 with Retry-After. A
// store failure is an internal error (500), not a free message.
func (s *server) rateLimit(ctx context.Context, a *auth) error {
	wait, ok, err := s.limiter.take(ctx, s.st, a.OrgID, a.UserID)
	if err != nil {
		return fmt.Errorf("rate limit: %w", err)
	}
	if ok {
		return nil
	}
	secs := strconv.Itoa(int(math.Ceil(wait.Seconds())))
	return huma.ErrorWithHeaders(
		apiErr(http.StatusTooManyRequests, "rate_limited", "too many requests; try again in "+secs+"s"),
		http.Header{"Retry-After": {secs}})
}
