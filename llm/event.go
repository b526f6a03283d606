package llm

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// EventKind tells what an Event carries.
type EventKind string

// Event kinds, in the order a stream may produce them: any number of text
// deltas and tool-call starts, each tool call once complete, usage, done.
const (
	// EventText carries a delta of the assistant's text in Text.
	EventText EventKind = "text"
	// EventToolCallStart announces a call (ID and Name) as soon as the
	// provider names it, before its arguments have streamed.
	EventToolCallStart EventKind = "tool_call_start"
	// EventToolCall carries a complete call, arguments assembled.
	EventToolCall EventKind = "tool_call"
	// EventUsage carries the call's usage; it may come more than once, the
	// last one being the total.
	EventUsage EventKind = "usage"
	// EventDone ends the stream, with the stop reason.
	EventDone EventKind = "done"
)

// StopReason is why the model stopped.
type StopReason string

// Stop reasons.
const (
	StopEnd       StopReason = "end"        // a final answer
	StopToolCalls StopReason = "tool_calls" // it wants tool results
	StopLength    StopReason = "length"     // it hit the token limit
	StopFiltered  StopReason = "filtered"   // content filtered
)

// Event is one streamed piece of a reply.
type Event struct {
	Kind     EventKind
	Text     string
	ToolCall ToolCall
	Usage    Usage
	Stop     StopReason
}

// Response is a whole reply, assembled from a stream.
type Response struct {
	Text      string
	ToolCalls []ToolCall
	Usage     Usage
	Stop      StopReason
}

// Collect drains a stream into a Response, calling each (when non-nil) with
// every event as it arrives. It fails on a stream error or a stream that
// ends without EventDone.
func Collect(stream func(yield func(Event, error) bool), each func(Event)) (Response, error) {
	var r Response
	var text strings.Builder
	done := false
	for ev, err := range stream {
		if err != nil {
			r.Text = text.String()
			return r, err
		}
		if each != nil {
			each(ev)
		}
		switch ev.Kind {
		case EventText:
			text.WriteString(ev.Text)
		case EventToolCall:
			r.ToolCalls = append(r.ToolCalls, ev.ToolCall)
		case EventUsage:
			r.Usage = ev.Usage
		case EventDone:
			r.Stop, done = ev.Stop, true
		}
	}
	r.Text = text.String()
	if !done {
		return r, &Error{Kind: ErrServer, Msg: "stream ended before the reply was complete"}
	}
	return r, nil
}

// ErrorKind classifies provider errors by what the caller should do.
type ErrorKind string

// Error kinds.
const (
	ErrRateLimit       ErrorKind = "rate_limit"       // retry after RetryAfter
	ErrOverloaded      ErrorKind = "overloaded"       // retry with backoff
	ErrServer          ErrorKind = "server"           // 5xx or a broken stream; retry with backoff
	ErrContextLength   ErrorKind = "context_length"   // the request is too long; do not retry
	ErrAuth            ErrorKind = "auth"             // bad or missing key; do not retry
	ErrBadRequest      ErrorKind = "bad_request"      // the request is invalid; do not retry
	ErrNetwork         ErrorKind = "network"          // could not reach the provider; retry
	ErrUnsupportedTool ErrorKind = "unsupported_tool" // CheckTool refused a declaration
	ErrTimeout         ErrorKind = "timeout"          // the stream sent nothing for too long; retry
)

// Error is a provider error, classified. Msg never holds a key.
type Error struct {
	Kind ErrorKind
	// Status is the HTTP status, when there was one.
	Status int
	// RetryAfter is the provider's requested wait (Retry-After), if any.
	RetryAfter time.Duration
	Msg        string
}

func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("%s (HTTP %d): %s", e.Kind, e.Status, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Kind, e.Msg)
}

// Retryable reports whether retrying the same request may succeed.
func (e *Error) Retryable() bool {
	switch e.Kind {
	case ErrRateLimit, ErrOverloaded, ErrServer, ErrNetwork, ErrTimeout:
		return true
	}
	return false
}

// AsError returns err as an *Error when it is (or wraps) one.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// KindForStatus classifies an HTTP status with no better information.
func KindForStatus(status int) ErrorKind {
	switch {
	case status == 429:
		return ErrRateLimit
	case status == 401 || status == 403:
		return ErrAuth
	case status == 413:
		return ErrContextLength
	case status == 503 || status == 529:
		return ErrOverloaded
	case status >= 500:
		return ErrServer
	}
	return ErrBadRequest
}

// ParseRetryAfter reads a Retry-After header value: seconds or an HTTP
// date relative to now. Unparsable or negative values give zero.
func ParseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	var secs float64
	if _, err := fmt.Sscanf(v, "%g", &secs); err == nil && secs >= 0 && !strings.ContainsAny(v, " ,") {
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := time.Parse(time.RFC1123, v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
