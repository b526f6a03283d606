package tool

import "errors"

// infraError marks a failure of the machinery around a tool (a store that is
// down, a cancelled turn) rather than of the call itself.
type infraError struct{ err error }

func (e infraError) Error() string { return e.err.Error() }
func (e infraError) Unwrap() error { return e.err }

// Infra marks err as an infrastructure failure: dispatch returns it to the
// caller instead of showing it to the model. Infra(nil) is nil.
func Infra(err error) error {
	if err == nil {
		return nil
	}
	return infraError{err: err}
}

// IsInfra reports whether err, or an error it wraps, was marked with [Infra].
func IsInfra(err error) bool {
	var ie infraError
	return errors.As(err, &ie)
}
