package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/quiverhq/quiver/store"
)

// ownConversation is the ownership rule every reader of a conversation
// applies: the conversation when userID owns it; found false when the
// organisation holds none of that id; ErrNoConversation when it is
// another user's.
func ownConversation(ctx context.Context, convs store.Conversations, orgID, userID, id string) (c store.Conversation, found bool, err error) {
	c, err = convs.GetConversation(ctx, orgID, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return store.Conversation{}, false, nil
	case err != nil:
		return store.Conversation{}, false, fmt.Errorf("load conversation: %w", err)
	case c.UserID != userID:
		return store.Conversation{}, false, ErrNoConversation
	}
	return c, true, nil
}

// OwnConversation returns the caller's conversation: one that does not
// exist and one of another user are both ErrNoConversation, as a turn
// finds them, so that a reader never learns that another user's exists.
func OwnConversation(ctx context.Context, convs store.Conversations, orgID, userID, id string) (store.Conversation, error) {
	c, found, err := ownConversation(ctx, convs, orgID, userID, id)
	if err == nil && !found {
		err = ErrNoConversation
	}
	return c, err
}

// Transcript returns the messages of the caller's conversation, oldest
// first, never nil: with Branches, those of the branch shown only. A conversation that does not exist and one of
// another user are both ErrNoConversation, as a turn finds them. It
// needs Conversations and Messages.
func (r Repositories) Transcript(ctx context.Context, orgID, userID, conversationID string) ([]store.Message, error) {
	if r.Conversations == nil || r.Messages == nil {
		return nil, errors.New("engine: a transcript needs the conversations and messages repositories")
	}
	_, found, err := ownConversation(ctx, r.Conversations, orgID, userID, conversationID)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, ErrNoConversation
	}
	msgs, err := r.Messages.ListMessages(ctx, orgID, conversationID, 0)
	if err != nil {
		return nil, fmt.Errorf("read messages: %w", err)
	}
	if r.Branches != nil {
		tree, err := r.Branches.TurnTree(ctx, orgID, conversationID)
		if err != nil {
			return nil, fmt.Errorf("read branches: %w", err)
		}
		msgs = tree.OnPath(msgs)
	}
	if msgs == nil {
		msgs = []store.Message{}
	}
	return msgs, nil
}

// Record enters a session into its conversation before any of its calls
// writes there: it claims the conversation for the session's caller (one
// that no one holds yet is created, owned by them, in one atomic step
// with the check; see store.Conversations.ClaimConversation), then
// stores the session's turn (Session.Turn), started now (Config.Now).
// turnID and conversationID name the turn and its conversation, ""
// meaning the facts' (each MCP session has its own). Another user's
// conversation is ErrNoConversation, and nothing is written. It needs
// Repos.Conversations and Repos.Turns.
func (e *Engine) Record(ctx context.Context, s *Session, turnID, conversationID string) error {
	repos := e.cfg.Repos
	if repos.Conversations == nil || repos.Turns == nil {
		return errors.New("engine: recording a session needs the conversations and turns repositories")
	}
	rec := s.Turn(turnID, conversationID)
	if rec.ConversationID == "" {
		return errors.New("engine: a session's turn needs a conversation")
	}
	now := e.cfg.Now().UTC()
	owned, err := claim(ctx, repos.Conversations, store.Conversation{ID: rec.ConversationID, OrgID: rec.OrgID,
		UserID: rec.UserID, Agent: rec.Agent, CreatedAt: now, UpdatedAt: now})
	switch {
	case err != nil:
		return err
	case !owned:
		return ErrNoConversation
	}
	rec.StartedAt = now
	if err := repos.Turns.PutTurn(ctx, rec); err != nil {
		return fmt.Errorf("record turn: %w", err)
	}
	return nil
}

// claim takes c for c.UserID in one atomic step with the check
// (store.Conversations.ClaimConversation): owned false when another user
// holds it, and then nothing is written. A store failure is wrapped
// ("create conversation: ...").
func claim(ctx context.Context, convs store.Conversations, c store.Conversation) (owned bool, err error) {
	got, err := convs.ClaimConversation(ctx, c)
	if err != nil {
		return false, fmt.Errorf("create conversation: %w", err)
	}
	return got.UserID == c.UserID, nil
}
