// Package web provides the web_search tool and the chain of search engines
// behind it: Brave, SearXNG, DuckDuckGo and IAsk, tried in that order.
package web

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// The categories a query may ask for, in the order the tool lists them.
// Text is what every engine answers; the others narrow the chain.
const (
	Text   = "text"
	Image  = "image"
	Video  = "video"
	News   = "news"
	Papers = "papers"
	Code   = "code"
	Files  = "files"
	Music  = "music"
)

// allCategories lists every category in declaration order.
var allCategories = []string{Text, Image, Video, News, Papers, Code, Files, Music}

// AllCategories returns every category any engine can answer, in the order
// the tool declares them.
func AllCategories() []string { return append([]string(nil), allCategories...) }

// Query is one search request to an engine. Category is one of the
// category constants (empty means Text); Count is the number of results
// wanted, already bounded by the chain to 1–MaxCount.
type Query struct {
	Text     string
	Category string
	Count    int
}

// Result is one normalised search hit. Source names the engine that found
// it; Published is the date the engine gave, zero when unknown.
type Result struct {
	Title     string
	URL       string
	Snippet   string
	Source    string
	Published time.Time
}

// Engine is one search backend. Search returns the results it found, an
// empty slice when the query genuinely matched nothing, or an error
// (preferably an *EngineError, so the chain can tell a rate limit from a
// failure). Implementations must be safe for concurrent use.
type Engine interface {
	Name() string
	Categories() []string
	Search(ctx context.Context, q Query) ([]Result, error)
}

// Prober is implemented by engines whose availability is checked before
// use (SearXNG's health probe). Available must be cheap to call repeatedly:
// implementations cache their answer.
type Prober interface {
	Available(ctx context.Context) bool
}

// Kind classifies why an engine did not answer.
type Kind int

const (
	// Failed is any other error: transport, non-OK status, oversized body.
	Failed Kind = iota
	// RateLimited is an HTTP 429 or the engine's own quota signal.
	RateLimited
	// Challenged is a bot check (DuckDuckGo's anomaly page, 202 or 403).
	Challenged
	// TimedOut is the per-engine timeout expiring.
	TimedOut
	// Malformed is a body that does not parse as the engine's format.
	Malformed
	// Empty is a well-formed answer with no usable results.
	Empty
	// CoolingDown is an engine skipped because it failed recently.
	CoolingDown
	// Unavailable is an engine whose health probe failed.
	Unavailable
)

// String returns the short phrase the trailer shows ("rate limited").
func (k Kind) String() string {
	switch k {
	case RateLimited:
		return "rate limited"
	case Challenged:
		return "bot check"
	case TimedOut:
		return "timed out"
	case Malformed:
		return "unreadable answer"
	case Empty:
		return "no results"
	case CoolingDown:
		return "cooling down"
	case Unavailable:
		return "unavailable"
	}
	return "error"
}

// EngineError is an engine's failure with its kind. RetryAfter, when
// positive, is how long the engine asked us to wait (Retry-After, or
// Brave's X-RateLimit-Reset), at most MaxCooldown.
// Err may hold URLs or bodies and is never shown to the model.
type EngineError struct {
	Kind       Kind
	RetryAfter time.Duration
	Err        error
}

// Error is the kind, then Err when there is one. It may hold URLs or
// bodies from Err: log it, never show it to the model.
func (e *EngineError) Error() string {
	if e.Err == nil {
		return e.Kind.String()
	}
	return fmt.Sprintf("%s: %v", e.Kind, e.Err)
}

// Unwrap returns Err, the underlying cause (nil when the engine gave none),
// for errors.Is and errors.As.
func (e *EngineError) Unwrap() error { return e.Err }

// kindOf classifies err for the chain: an *EngineError keeps its kind, a
// deadline is TimedOut, anything else is Failed.
func kindOf(err error) (Kind, time.Duration) {
	var ee *EngineError
	if errors.As(err, &ee) {
		return ee.Kind, ee.RetryAfter
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return TimedOut, 0
	}
	return Failed, 0
}

func engineErr(k Kind, format string, args ...any) *EngineError {
	return &EngineError{Kind: k, Err: fmt.Errorf(format, args...)}
}
