package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// MaxLeaseKeyBytes bounds a lease's name and holder.
const MaxLeaseKeyBytes = 255

// ErrLeaseInvalid reports a lease request that breaks a rule (an empty
// or long name or holder, a lease that is not positive); nothing is
// written.
var ErrLeaseInvalid = errors.New("invalid lease")

// Lease is who holds a named lease and until when.
type Lease struct {
	Name      string
	Holder    string
	ExpiresAt time.Time
}

// Leases are named leases the replicas of `quiver serve` share: one
// holder at a time for work only one replica may do (the Discord gateway
// connection). Times are the caller's clock, never the database's.
type Leases interface {
	// TakeLease makes holder the lease's holder until now+ttl when no
	// one holds it, its holder's time passed (at now or before), or
	// holder holds it already (a renewal), and returns the lease as it
	// stands; ok reports whether holder holds it now. Concurrent takers
	// of a free lease, from any replica, leave exactly one holding it.
	TakeLease(ctx context.Context, name, holder string, now time.Time, ttl time.Duration) (l Lease, ok bool, err error)
	// ReleaseLease gives the lease up when holder holds it; releasing
	// one held by another, or by no one, changes nothing and is no
	// error.
	ReleaseLease(ctx context.Context, name, holder string) error
}

// CheckLease checks a take's name, holder and ttl.
func CheckLease(name, holder string, now time.Time, ttl time.Duration) error {
	switch {
	case name == "" || len(name) > MaxLeaseKeyBytes || !ValidBlobKey(name):
		return fmt.Errorf("%w: a lease needs a name of 1 to %d bytes", ErrLeaseInvalid, MaxLeaseKeyBytes)
	case holder == "" || len(holder) > MaxLeaseKeyBytes || !ValidBlobKey(holder):
		return fmt.Errorf("%w: a lease needs a holder of 1 to %d bytes", ErrLeaseInvalid, MaxLeaseKeyBytes)
	case ttl <= 0:
		return fmt.Errorf("%w: a lease lasts a positive time", ErrLeaseInvalid)
	case now.IsZero():
		return fmt.Errorf("%w: a take needs the caller's time", ErrLeaseInvalid)
	}
	return nil
}
