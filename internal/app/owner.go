package app

import (
	"context"
	"errors"
	"time"

	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/store"
)

// claimConversation makes the request's conversation the caller's before
// anything is written into it (engine.Claim), refusing another user's as
// bad input (exit 2, nothing written; see ownerError).
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
