package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Run is a conversation's running turn, held by one process (a replica of
// `quiver serve`) under a lease: the replica renews ExpiresAt with a
// heartbeat, and a run whose lease passed is taken to belong to a replica
// that died. An organisation's conversation has at most one Run.
type Run struct {
	OrgID          string
	ConversationID string
	TurnID         string
	// UserID is the turn's caller, so that disabling a user reaches the
	// runs of theirs on every replica.
	UserID string
	// Replica names the process that runs the turn; opaque to the store.
	Replica   string
	StartedAt time.Time
	// ExpiresAt is the end of the lease: after it, anyone may take the
	// conversation over and mark the turn interrupted.
	ExpiresAt time.Time
	// CancelRequested is set by RequestCancel and RequestCancelUser; the
	// owning replica sees it at its next RenewRuns. A claim starts false.
	CancelRequested bool
}

// Runs holds the running turns of every replica: one per conversation,
// across processes, by lease. Expiry compares instants the callers pass
// (each from its own clock); the store reads no clock.
//
// A run stops in one of three ways, each atomic with what it implies:
// EndRun (its replica is done with the turn), ReapRuns or a ClaimRun
// takeover (the lease had passed). Each marks the turn, when it is still
// stored as running, TurnInterrupted in the same transaction, so no turn
// stays running once its run is gone. So a run is returned by at most
// one ReapRuns or ClaimRun, and a turn that still has its Run was not
// interrupted by them.
type Runs interface {
	// ClaimRun makes r its conversation's one running turn. When the
	// conversation has a run whose ExpiresAt is not before r.StartedAt,
	// it fails with ErrExists and changes nothing. When its run's lease
	// expired (ExpiresAt before r.StartedAt: its replica stopped
	// renewing), r replaces it and the expired run is returned, its turn
	// (when stored as running) marked TurnInterrupted, ended at
	// r.StartedAt, in the same transaction; otherwise expired is nil.
	// Concurrent claims of one conversation, from any processes, give it
	// to exactly one of them. r needs every ID, Replica, StartedAt and an
	// ExpiresAt after StartedAt, and CancelRequested false; anything else
	// is refused, writing nothing.
	ClaimRun(ctx context.Context, r Run) (expired *Run, err error)
	// RenewRuns is a replica's heartbeat: every run of replica whose lease
	// has not passed at now (ExpiresAt not before now) gets ExpiresAt =
	// expires, and those runs are returned, in no particular order, with
	// CancelRequested as stored: the replica cancels the turns that have
	// it set, and stops every turn of its own that is missing from the
	// answer, since that run was reaped, taken over or had expired (a
	// lease once passed is never renewed, so its holder agrees with the
	// replica that reaps it). An empty replica, or expires not after now,
	// is refused.
	RenewRuns(ctx context.Context, replica string, now, expires time.Time) ([]Run, error)
	// EndRun releases the conversation's run when it is still turnID's
	// and, in the same transaction, marks that turn TurnInterrupted ended
	// at `at` when it is still stored as running: a replica whose engine
	// failed to write the turn's final status does not leave it running
	// for good. A turn stored as done, paused, failed or interrupted is
	// left as it is. When the run is not turnID's (or there is none) it
	// changes nothing and returns ErrNotFound: a replica whose run was
	// reaped or taken over never releases the next turn's, nor touches its
	// own turn, which the reaper or taker ended already. A zero `at` is
	// refused, writing nothing.
	EndRun(ctx context.Context, orgID, conversationID, turnID string, at time.Time) error
	// RequestCancel marks the conversation's run for cancellation and
	// returns it (CancelRequested set), or ErrNotFound when the
	// conversation has none in that organisation. Marking twice is not an
	// error.
	RequestCancel(ctx context.Context, orgID, conversationID string) (Run, error)
	// RequestCancelUser marks every run of the user in that organisation
	// for cancellation and returns how many they have (those marked before
	// included).
	RequestCancelUser(ctx context.Context, orgID, userID string) (int, error)
	// ReapRuns removes every run, in every organisation, whose lease
	// expired before expiredBefore (ExpiresAt before it), marks each one's
	// turn (when stored as running) TurnInterrupted ended at `at`, in one
	// transaction, and returns the runs removed. The lease reaper passes
	// its now as both. A starting SQLite server, which holds the server
	// lock and so knows no other process is alive, passes a far-future
	// expiredBefore to reap every run left by the last stop, their turns
	// ended at its now. Replicas reaping at once never return the same run
	// twice, and a run renewed or taken over first is left alone. A zero
	// expiredBefore or `at` is refused, writing nothing.
	ReapRuns(ctx context.Context, expiredBefore, at time.Time) ([]Run, error)
	// GetRun returns the conversation's run in that organisation, or
	// ErrNotFound. An expired run not yet reaped is returned as it is.
	GetRun(ctx context.Context, orgID, conversationID string) (Run, error)
}

// CheckClaim reports the first way r breaks ClaimRun's contract, or nil:
// each backend calls it before writing anything.
func CheckClaim(r Run) error {
	switch {
	case r.OrgID == "" || r.ConversationID == "" || r.TurnID == "" || r.UserID == "":
		return errors.New("empty organisation, conversation, turn or user ID")
	case r.Replica == "":
		return errors.New("empty replica")
	case r.StartedAt.IsZero():
		return errors.New("no start time")
	case !r.ExpiresAt.After(r.StartedAt):
		return fmt.Errorf("lease expires at %v, not after its start %v", r.ExpiresAt, r.StartedAt)
	case r.CancelRequested:
		return errors.New("a claim cannot start cancelled")
	}
	return nil
}

// CheckRenew reports the first way RenewRuns' arguments break its
// contract, or nil.
func CheckRenew(replica string, now, expires time.Time) error {
	switch {
	case replica == "":
		return errors.New("empty replica")
	case !expires.After(now):
		return fmt.Errorf("lease expires at %v, not after now %v", expires, now)
	}
	return nil
}

// CheckEnd reports the first way EndRun's arguments break its contract,
// or nil.
func CheckEnd(at time.Time) error {
	if at.IsZero() {
		return errors.New("no end time for the turn")
	}
	return nil
}

// CheckReap reports the first way ReapRuns' arguments break its
// contract, or nil.
func CheckReap(expiredBefore, at time.Time) error {
	switch {
	case expiredBefore.IsZero():
		return errors.New("no expiry cutoff")
	case at.IsZero():
		return errors.New("no end time for the interrupted turns")
	}
	return nil
}
