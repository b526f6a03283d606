package netguard

import "errors"

// ErrBlocked is the sentinel every policy refusal matches with errors.Is. Its
// message is the one a model or user sees; it never carries the URL.
var ErrBlocked = errors.New("blocked: address not allowed")

// ErrTooLarge is returned by a response body read that goes past
// Config.MaxBytes. The bytes up to the cap have been delivered before it.
var ErrTooLarge = errors.New("netguard: response body exceeds the byte cap")

// ErrTooManyRedirects is returned when a request is redirected more than
// Config.MaxRedirects times.
var ErrTooManyRedirects = errors.New("netguard: too many redirects")

// BlockedError is a refusal by the egress policy. It matches ErrBlocked.
// Error() shows at most the host, never the path, query, credentials or
// the resolved address, so it is safe to return to a model.
type BlockedError struct {
	// Host is the destination host as written (or as dialled), empty when the
	// URL could not be parsed far enough to name one.
	Host string
	// Reason is a short machine-oriented cause ("metadata", "private",
	// "scheme", ...) for logs and tests; it is not part of Error().
	Reason string
}

// Error returns "blocked: address not allowed", followed by the host when known.
func (e *BlockedError) Error() string {
	if e.Host == "" {
		return ErrBlocked.Error()
	}
	return ErrBlocked.Error() + ": " + e.Host
}

// Is reports whether target is ErrBlocked.
func (e *BlockedError) Is(target error) bool { return target == ErrBlocked }

func blocked(host, reason string) *BlockedError {
	return &BlockedError{Host: host, Reason: reason}
}
