package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/turn"
)

// checkOwner reports whether the facts' conversation exists; it is bad
// input (exit 2, nothing written) when another user of the organisation
// owns it, since its transcript and stored results would then be read, and
// a turn written into it, by someone who is not its owner. The caller's own
// conversation, or one that does not exist yet, passes.
func checkOwner(ctx context.Context, st store.Conversations, f turn.Facts) (exists bool, err error) {
	if err := notConsole(f.Place.ConversationID); err != nil {
		return false, err
	}
	c, err := st.GetConversation(ctx, f.Place.OrgID, f.Place.ConversationID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("load conversation: %w", err)
	case c.UserID != f.Caller.UserID:
		return true, usagef("--conversation: %q belongs to another user; give a conversation of your own", c.ID)
	}
	return true, nil
}

// claimConversation makes the facts' conversation the caller's before
// anything is written into it: one that does not exist yet is created,
// owned by the caller (so no other user can open it later), in one atomic
// step with the check; one of another user is refused as checkOwner
// refuses it, with nothing written.
func claimConversation(ctx context.Context, st store.Conversations, f turn.Facts, now time.Time) error {
	if err := notConsole(f.Place.ConversationID); err != nil {
		return err
	}
	now = now.UTC()
	c, err := st.ClaimConversation(ctx, store.Conversation{ID: f.Place.ConversationID, OrgID: f.Place.OrgID,
		UserID: f.Caller.UserID, Agent: f.Agent.Name, CreatedAt: now, UpdatedAt: now})
	switch {
	case err != nil:
		return fmt.Errorf("create conversation: %w", err)
	case c.UserID != f.Caller.UserID:
		return usagef("--conversation: %q belongs to another user; give a conversation of your own", c.ID)
	}
	return nil
}

// notConsole refuses a web tool console's conversation id: its results
// have no conversation record to say whose they are (see consolePrefix).
func notConsole(id string) error {
	if strings.HasPrefix(id, consolePrefix) {
		return usagef("--conversation: ids beginning %q belong to the web tool console; give another", consolePrefix)
	}
	return nil
}
