package webchat

import (
	"context"
	"errors"
	"fmt"

	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/surface"
	"github.com/quiverhq/quiver/turn"
)

// MaxPlaces bounds Places' limit.
const MaxPlaces = 20

// CreateThread starts a conversation of the same person and agent (its
// first message of no turn, as Post's),
// linked to the message from (or to the conversation itself when from
// is ""), titled name, with first as the agent's first message there.
func (c *Chat) CreateThread(ctx context.Context, s turn.Scope, from, name, first string) (surface.Thread, error) {
	conv, err := c.own(ctx, s)
	if err != nil {
		return surface.Thread{}, err
	}
	// A thread starts no thread of its own (as on Discord), so the
	// conversations a person's threads make stay bounded.
	switch _, err := c.st.GetThread(ctx, s.OrgID, conv.ID); {
	case err == nil:
		return surface.Thread{}, fmt.Errorf("%w: this conversation is a thread; a thread cannot start threads", surface.ErrNotAllowed)
	case !errors.Is(err, store.ErrNotFound):
		return surface.Thread{}, fmt.Errorf("webchat: read the thread link: %w", err)
	}
	var seq int64
	if from != "" {
		var ok bool
		if seq, ok = ParseID(from); !ok {
			return surface.Thread{}, surface.ErrNoMessage
		}
	}
	now := c.now()
	child := store.Conversation{ID: c.newID("conv_"), OrgID: s.OrgID, UserID: conv.UserID, Agent: conv.Agent,
		Model: conv.Model, Title: name, CreatedAt: now, UpdatedAt: now}
	t := store.NewThread{Conversation: child, ParentID: conv.ID, ParentSeq: seq,
		First: store.Message{ConversationID: child.ID, Role: "assistant", Content: first, CreatedAt: now}}
	if _, err := c.st.CreateThread(ctx, t); err != nil {
		return surface.Thread{}, mapErr("create a thread", err)
	}
	return surface.Thread{
		Place: surface.Place{ID: child.ID, Name: store.CleanTitle(name), Parent: conv.ID},
		First: surface.Message{ID: FormatID(1), Author: surface.Author{Name: conv.Agent, Agent: true}, Text: first, At: now.UTC()},
	}, nil
}

// Places lists the person's other conversations with the same agent,
// most recently updated first, at most min(limit, MaxPlaces).
func (c *Chat) Places(ctx context.Context, s turn.Scope, limit int) ([]surface.Place, error) {
	cur, err := c.own(ctx, s)
	if err != nil {
		return nil, err
	}
	limit = min(limit, MaxPlaces)
	if limit <= 0 {
		return nil, nil
	}
	cs, err := c.st.ListConversations(ctx, s.OrgID, s.UserID, limit+1)
	if err != nil {
		return nil, fmt.Errorf("webchat: list conversations: %w", err)
	}
	out := make([]surface.Place, 0, limit)
	for _, conv := range cs {
		if conv.ID == s.ConversationID || conv.Agent != cur.Agent || len(out) == limit {
			continue
		}
		p := surface.Place{ID: conv.ID, Name: conv.Title}
		if p.Name == "" {
			p.Name = "(untitled)"
		}
		link, err := c.st.GetThread(ctx, s.OrgID, conv.ID)
		switch {
		case err == nil:
			p.Parent = link.ParentID
		case !errors.Is(err, store.ErrNotFound):
			return nil, fmt.Errorf("webchat: read a thread link: %w", err)
		}
		out = append(out, p)
	}
	return out, nil
}

// Post appends text as the agent's message, of no turn (so every branch
// of the conversation shows it, as store.TurnTree.OnPathTo keeps such
// messages), to another conversation of
// the person's; the scope's own conversation, or one that is not the
// person's, is surface.ErrNoPlace, one with a turn running
// surface.ErrBusy.
func (c *Chat) Post(ctx context.Context, s turn.Scope, place, text string) (surface.Message, error) {
	conv, err := c.own(ctx, s)
	if err != nil {
		return surface.Message{}, err
	}
	if place == "" || place == conv.ID || !store.ValidBlobKey(place) {
		return surface.Message{}, surface.ErrNoPlace
	}
	// The post is stored as the agent's message there: only a
	// conversation with the same agent may take it, or another agent
	// would read this one's words as its own.
	switch target, err := c.st.GetConversation(ctx, s.OrgID, place); {
	case errors.Is(err, store.ErrNotFound) || err == nil && target.UserID != s.UserID:
		return surface.Message{}, surface.ErrNoPlace
	case err != nil:
		return surface.Message{}, fmt.Errorf("webchat: read the conversation: %w", err)
	case target.Agent != conv.Agent:
		return surface.Message{}, fmt.Errorf("%w: that conversation is with another agent", surface.ErrNotAllowed)
	}
	now := c.now()
	seq, err := c.st.PostMessage(ctx, s.OrgID, s.UserID, store.Message{ConversationID: place,
		Role: "assistant", Content: text, CreatedAt: now})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return surface.Message{}, surface.ErrNoPlace
	case errors.Is(err, store.ErrTurnRunning):
		return surface.Message{}, surface.ErrBusy
	case err != nil:
		return surface.Message{}, mapErr("post", err)
	}
	return surface.Message{ID: FormatID(seq), Author: surface.Author{Name: conv.Agent, Agent: true}, Text: text, At: now.UTC()}, nil
}
