package web

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// MaxBody caps the bytes read from any engine: a larger answer is a failure,
// not a truncated parse.
const MaxBody = 1 << 20

// get sends req with ctx and returns the body of a 200 answer. A 429 is
// RateLimited with the Retry-After it carried, 202 and 403 are Challenged
// (both are how bot checks answer), any other non-200 is Failed. now reads
// an HTTP-date Retry-After.
func get(ctx context.Context, c *http.Client, req *http.Request, now func() time.Time) ([]byte, error) {
	return getWith(ctx, c, req, now, nil)
}

// getWith is get for an engine that says how long to wait in headers of
// its own: when a 429 carries no usable Retry-After, limitWait reads the
// wait from its headers (zero for none). A nil limitWait reads nothing.
func getWith(ctx context.Context, c *http.Client, req *http.Request, now func() time.Time, limitWait func(http.Header) time.Duration) ([]byte, error) {
	resp, err := c.Do(req.WithContext(ctx))
	if err != nil {
		if ctx.Err() != nil {
			return nil, &EngineError{Kind: TimedOut, Err: ctx.Err()}
		}
		return nil, &EngineError{Kind: Failed, Err: err}
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusTooManyRequests:
		wait := retryAfter(resp.Header.Get("Retry-After"), now())
		if wait == 0 && limitWait != nil {
			wait = limitWait(resp.Header)
		}
		return nil, &EngineError{Kind: RateLimited, RetryAfter: wait, Err: fmt.Errorf("status %d", resp.StatusCode)}
	case http.StatusAccepted, http.StatusForbidden:
		return nil, engineErr(Challenged, "status %d", resp.StatusCode)
	default:
		return nil, engineErr(Failed, "status %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBody+1))
	if err != nil {
		if ctx.Err() != nil {
			return nil, &EngineError{Kind: TimedOut, Err: ctx.Err()}
		}
		return nil, engineErr(Failed, "read body: %w", err)
	}
	if len(body) > MaxBody {
		return nil, engineErr(Failed, "body over %d bytes", MaxBody)
	}
	return body, nil
}

// retryAfter parses a Retry-After value, in seconds or as an HTTP date,
// capped at MaxCooldown; zero means absent or unreadable.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		return seconds(s)
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// seconds converts a count of seconds from a header to a wait capped at
// MaxCooldown (capping first, so that a huge count cannot overflow); a
// negative count is zero.
func seconds(s int64) time.Duration {
	return time.Duration(min(max(s, 0), int64(MaxCooldown/time.Second))) * time.Second
}
