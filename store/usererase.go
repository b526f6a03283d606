package store

import "context"

// UserErasure erases people for good: what "delete my account" promises.
type UserErasure interface {
	// EraseUser deletes, in one transaction, the user userID of orgID and
	// everything that is theirs, table by table:
	//
	//   - conversations (user_id): every conversation of theirs, with what
	//     DeleteConversation deletes under it (messages, turns, turn
	//     events, stored tool results, branches, blobs, attachments and
	//     their chunks and full-text rows, short-term memories written
	//     there, Deliberate Tool Mode's open targets, what conversation
	//     search reads);
	//   - turns and results (user_id): any left outside those
	//     conversations, turn events with them;
	//   - memories, their full-text rows and memory_generations
	//     (owner_id): their personal memories; shared ones (owner "")
	//     stay;
	//   - blobs (owner_id): every file they own, in any conversation or
	//     none;
	//   - credentials (user_id): sessions, API tokens, login links;
	//   - intent_user_modes (user_id): their Deliberate Tool Mode;
	//   - budgets (user_id): their own budget (the organisation's and the
	//     each-person default stay);
	//   - users: the user.
	//
	// Skills, their files and their attachments to agents are the
	// organisation's, never a person's, and stay.
	//
	// Usage records are the organisation's accounting and stay, detached
	// from the person: usage.user_id (and payer, where it was theirs)
	// becomes "", and their monthly totals (usage_months) move into the
	// organisation's "" row of each month, so MonthSpend of the
	// organisation is what it was. runs (user_id) is never written: a run
	// held refuses the erase. rate_buckets is keyed by text the HTTP API
	// makes, has no user column and empties itself (an idle bucket is
	// full; DeleteRateBucketsBefore sweeps it).
	//
	// An unknown user (one of another organisation included) gives
	// ErrNotFound; the organisation's last enabled admin ErrLastAdmin;
	// a run held in any conversation of theirs, or by them (a lease passed
	// but not reaped included), ErrTurnRunning; each erasing nothing. Files
	// outside the store (the user's workspace folder) are the caller's to
	// remove once EraseUser returns nil. A request the person made before
	// the erase committed is not stopped by it: a caller cancels their
	// work first.
	EraseUser(ctx context.Context, orgID, userID string) error
}
