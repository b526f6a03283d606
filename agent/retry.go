package agent

import (
	"time"

	"github.com/quiverhq/quiver/llm"
)

// Retry is the policy for retrying a model call that failed before it
// produced anything. Zero fields mean the defaults.
type Retry struct {
	// Attempts is the most calls made in all; zero means 4.
	Attempts int
	// Base is the first backoff, doubled each attempt; zero means 1 s.
	Base time.Duration
	// Max caps one wait; a provider asking for longer (Retry-After) is not
	// retried. Zero means 60 s.
	Max time.Duration
}

func (r Retry) withDefaults() Retry {
	if r.Attempts <= 0 {
		r.Attempts = 4
	}
	if r.Base <= 0 {
		r.Base = time.Second
	}
	if r.Max <= 0 {
		r.Max = time.Minute
	}
	return r
}

// wait returns how long to wait before attempt (1-based count of attempts
// made so far), and false when err should not be retried.
func (r Retry) wait(err error, attempts int) (time.Duration, bool) {
	e, ok := llm.AsError(err)
	if !ok || !e.Retryable() || attempts >= r.Attempts {
		return 0, false
	}
	d := r.Base << (attempts - 1)
	if e.RetryAfter > d {
		d = e.RetryAfter
	}
	if d > r.Max {
		if e.RetryAfter > r.Max {
			return 0, false
		}
		d = r.Max
	}
	return d, true
}
