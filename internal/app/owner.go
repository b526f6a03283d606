package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/store"
)

// checkOwner reports whether the facts' conversation exists; it is bad
// input (exit 2, nothing written) when another user of the organisation
// owns it, since its transcript and stored results would then be read, and
// a turn written into it, by someone who is not its owner. The caller's own
// conversation, or one that does not exist yet, passes.
func checkOwner(ctx context.Context, st store.Conversations, r engine.Request) (exists bool, err error) {
	if err := notConsole(r.ConversationID); err != nil {
		return false, err
	}
	c, err := st.GetConversation(ctx, r.OrgID, r.ConversationID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("load conversation: %w", err)
	case c.UserID != r.Caller.UserID:
		return true, usagef("--conversation: %q belongs to another user; give a conversation of your own", c.ID)
	}
	return true, nil
}

// claimConversation makes the facts' conversation the caller's before
// anything is written into it: one that does not exist yet is created,
// owned by the caller (so no other user can open it later), in one atomic
// step with the check; one of another user is refused as checkOwner
// refuses it, with nothing written.
func claimConversation(ctx context.Context, st store.Conversations, r engine.Request, now time.Time) error {
	if err := notConsole(r.ConversationID); err != nil {
		return err
	}
	now = now.UTC()
	c, err := st.ClaimConversation(ctx, store.Conversation{ID: r.ConversationID, OrgID: r.OrgID,
		UserID: r.Caller.UserID, Agent: r.Agent.Agent.Name, CreatedAt: now, UpdatedAt: now})
	switch {
	case err != nil:
		return fmt.Errorf("create conversation: %w", err)
	case c.UserID != r.Caller.UserID:
		return usagef("--conversation: %q belongs to another user; give a conversation of your own", c.ID)
	}
	return nil
}

// notConsole refuses a web tool console's conversation id: its results
// have no conversation record to say whose they are (see httpapi.ConsolePrefix).
func notConsole(id string) error {
	if strings.HasPrefix(id, httpapi.ConsolePrefix) {
		return usagef("--conversation: ids beginning %q belong to the web tool console; give another", httpapi.ConsolePrefix)
	}
	return nil
}
