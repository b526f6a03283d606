package engine

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/quiverhq/quiver/store"
)

// ConsolePrefix begins every conversation id of the web tool console. The
// console records turns and results under such an id without a
// conversation record to say whose they are, so no surface that lets a
// person name a conversation (the CLI) may name one.
const ConsolePrefix = "console-"

// Refusals of a conversation a caller named, matched with errors.Is.
var (
	// ErrConsoleConversation: the id begins with ConsolePrefix.
	ErrConsoleConversation = errors.New("conversation id reserved for the web tool console")
	// ErrOthersConversation: another user of the organisation owns the
	// conversation, so its transcript and results are not the caller's
	// to read, nor it theirs to write into.
	ErrOthersConversation = errors.New("conversation of another user")
)

// CheckConversationID refuses an id no caller may name: one beginning
// with ConsolePrefix gives ErrConsoleConversation. Any other id, and "",
// passes. It reads nothing.
func CheckConversationID(id string) error {
	if strings.HasPrefix(id, ConsolePrefix) {
		return ErrConsoleConversation
	}
	return nil
}

// CheckOwner reports whether r's conversation is open to r's caller: the
// caller's own, or one that does not exist yet, passes. Another user's
// gives ErrOthersConversation and an id CheckConversationID refuses its
// error; a store failure is returned wrapped ("load conversation: ...").
// It writes nothing; Claim is the check that also takes the conversation.
func CheckOwner(ctx context.Context, st store.Conversations, r Request) error {
	if err := CheckConversationID(r.ConversationID); err != nil {
		return err
	}
	_, _, err := ownConversation(ctx, st, r.OrgID, r.Caller.UserID, r.ConversationID)
	if errors.Is(err, ErrNoConversation) {
		return ErrOthersConversation
	}
	return err
}

// Claim makes r's conversation the caller's before anything is written
// into it, in one atomic step with the check
// (store.Conversations.ClaimConversation): one that does not exist yet
// is created, owned by the caller, with r's agent (Agent's name, else
// AgentName) and now as its times, so that no other user can take it
// later; the caller's own is stamped updated at now. Another user's
// gives ErrOthersConversation and an id CheckConversationID refuses its
// error, with nothing written; a store failure is returned wrapped
// ("create conversation: ...").
func Claim(ctx context.Context, st store.Conversations, r Request, now time.Time) error {
	if err := CheckConversationID(r.ConversationID); err != nil {
		return err
	}
	agent := r.AgentName
	if r.Agent != nil {
		agent = r.Agent.Agent.Name
	}
	now = now.UTC()
	owned, err := claim(ctx, st, store.Conversation{ID: r.ConversationID, OrgID: r.OrgID,
		UserID: r.Caller.UserID, Agent: agent, CreatedAt: now, UpdatedAt: now})
	switch {
	case err != nil:
		return err
	case !owned:
		return ErrOthersConversation
	}
	return nil
}
