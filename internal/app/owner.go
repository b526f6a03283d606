package app

import (
	"context"
	"errors"
	"time"

	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/store"
)

// checkOwner is engine.CheckOwner with its refusals as bad input (exit 2,
// nothing written): a conversation another user of the organisation owns
// would have its transcript and stored results read, and a turn written
// into it, by someone who is not its owner.
func checkOwner(ctx context.Context, st store.Conversations, r engine.Request) error {
	return ownerError(r.ConversationID, engine.CheckOwner(ctx, st, r))
}

// claimConversation makes the request's conversation the caller's before
// anything is written into it (engine.Claim), refusing another user's as
// checkOwner does.
func claimConversation(ctx context.Context, st store.Conversations, r engine.Request, now time.Time) error {
	return ownerError(r.ConversationID, engine.Claim(ctx, st, r, now))
}

// notConsole refuses a web tool console's conversation id
// (engine.CheckConversationID).
func notConsole(id string) error {
	return ownerError(id, engine.CheckConversationID(id))
}

// ownerError is err, a refusal of the conversation id, as --conversation's
// usage error.
func ownerError(id string, err error) error {
	switch {
	case errors.Is(err, engine.ErrConsoleConversation):
		return usagef("--conversation: ids beginning %q belong to the web tool console; give another", engine.ConsolePrefix)
	case errors.Is(err, engine.ErrOthersConversation):
		return usagef("--conversation: %q belongs to another user; give a conversation of your own", id)
	}
	return err
}
