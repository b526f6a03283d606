package store

import (
	"context"
	"errors"
	"time"
)

// ErrBusy reports that the database could not take an operation in
// time: its writer was held by other writes past the wait allowed
// (WithWriteWait, DefaultWriteWait), or a lock another process holds did
// not come free. Nothing of the operation was written; the same call may
// succeed a little later. Callers facing people answer it as "busy, try
// again" (HTTP 503 with Retry-After), never as an internal error.
var ErrBusy = errors.New("store busy")

// DefaultWriteWait is how long a write waits for the database's writer
// when its context sets no wait of its own (WithWriteWait).
const DefaultWriteWait = 5 * time.Second

type writeWaitKey struct{}

// WithWriteWait returns ctx carrying d (> 0) as the longest a write made
// under it waits for the database's writer before failing with ErrBusy;
// d <= 0 returns ctx unchanged. A front door uses a short wait for the
// first write of new work, so that an overloaded server refuses new work
// before work it has already taken on starts failing. A store whose
// writes do not queue in this process may ignore it.
func WithWriteWait(ctx context.Context, d time.Duration) context.Context {
	if d <= 0 {
		return ctx
	}
	return context.WithValue(ctx, writeWaitKey{}, d)
}

// WriteWait is the wait ctx carries (WithWriteWait), or DefaultWriteWait.
func WriteWait(ctx context.Context) time.Duration {
	if d, ok := ctx.Value(writeWaitKey{}).(time.Duration); ok {
		return d
	}
	return DefaultWriteWait
}
