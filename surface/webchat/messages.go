package webchat

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/surface"
	"github.com/quiverhq/quiver/turn"
)

// MaxRecent bounds Recent's limit.
const MaxRecent = 50

// Recent returns the conversation's latest messages a person sees (the
// person's and the agent's, on the branch shown), at most min(limit,
// MaxRecent), oldest first, with their marks.
func (c *Chat) Recent(ctx context.Context, s turn.Scope, limit int) ([]surface.Message, error) {
	conv, err := c.own(ctx, s)
	if err != nil {
		return nil, err
	}
	limit = min(limit, MaxRecent)
	if limit <= 0 {
		return nil, nil
	}
	ms, err := c.shown(ctx, s.OrgID, conv.ID)
	if err != nil {
		return nil, err
	}
	ms = slices.DeleteFunc(ms, func(m store.Message) bool { return !visible(m) })
	return c.present(ctx, s, conv, slicesLast(ms, limit))
}

// shown is the conversation's messages on the branch shown (a
// regenerated answer's other versions left out), oldest first.
func (c *Chat) shown(ctx context.Context, orgID, id string) ([]store.Message, error) {
	ms, err := c.st.ListMessages(ctx, orgID, id, 0)
	if err != nil {
		return nil, fmt.Errorf("webchat: list messages: %w", err)
	}
	tree, err := c.st.TurnTree(ctx, orgID, id)
	if err != nil {
		return nil, fmt.Errorf("webchat: read the branches: %w", err)
	}
	return tree.OnPath(ms), nil
}

// visible reports whether a person sees m in the conversation: their
// messages, and the agent's replies that have text or were deleted (a
// reply that only calls tools shows nothing).
func visible(m store.Message) bool {
	return m.Role == store.RoleUser || m.Role == "assistant"
}

// present turns stored messages into the surface's, with the
// conversation's marks and the authors' names.
func (c *Chat) present(ctx context.Context, s turn.Scope, conv store.Conversation, ms []store.Message) ([]surface.Message, error) {
	marks, err := c.st.ListMessageMarks(ctx, s.OrgID, conv.ID)
	if err != nil {
		return nil, fmt.Errorf("webchat: list marks: %w", err)
	}
	person := surface.Author{ID: conv.UserID, Name: "the person"}
	if u, err := c.st.GetUser(ctx, s.OrgID, conv.UserID); err == nil && u.DisplayName != "" {
		person.Name = u.DisplayName
	} else if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("webchat: read the person: %w", err)
	}
	agent := surface.Author{Name: conv.Agent, Agent: true}
	if agent.Name == "" {
		agent.Name = "the agent"
	}
	out := make([]surface.Message, 0, len(ms))
	for _, m := range ms {
		sm := surface.Message{ID: FormatID(m.Seq), Author: person, Text: m.Content, At: m.CreatedAt}
		if m.Role != store.RoleUser {
			sm.Author = agent
		}
		if i, ok := slices.BinarySearchFunc(marks, m.Seq, func(k store.MessageMark, seq int64) int { return cmp.Compare(k.Seq, seq) }); ok {
			applyMark(&sm, marks[i])
		}
		if sm.Text == "" && !sm.Deleted {
			continue // a reply that only called tools
		}
		out = append(out, sm)
	}
	return out, nil
}

// applyMark copies a message's marks onto its surface form.
func applyMark(m *surface.Message, k store.MessageMark) {
	for _, r := range k.Reactions {
		m.Reactions = append(m.Reactions, surface.Reaction{Emoji: r.Emoji, Count: len(r.Actors),
			Mine: slices.Contains(r.Actors, store.ActorAgent)})
	}
	m.Pinned = !k.PinnedAt.IsZero()
	m.Edited = !k.EditedAt.IsZero()
	m.Deleted = !k.DeletedAt.IsZero()
	if m.Deleted {
		m.Text = ""
	}
	if len(k.Threads) > 0 {
		m.Thread = k.Threads[0]
	}
}

// message returns the stored message number seq of the scope's
// conversation when a person sees it, else surface.ErrNoMessage.
func (c *Chat) message(ctx context.Context, s turn.Scope, seq int64) (store.Message, error) {
	ms, err := c.st.ListMessages(ctx, s.OrgID, s.ConversationID, seq+1)
	if err != nil {
		return store.Message{}, fmt.Errorf("webchat: read the message: %w", err)
	}
	if len(ms) == 0 || ms[len(ms)-1].Seq != seq || !visible(ms[len(ms)-1]) {
		return store.Message{}, surface.ErrNoMessage
	}
	return ms[len(ms)-1], nil
}

// Pins lists the conversation's pinned messages on the branch shown,
// latest pin first.
func (c *Chat) Pins(ctx context.Context, s turn.Scope) ([]surface.Message, error) {
	conv, err := c.own(ctx, s)
	if err != nil {
		return nil, err
	}
	pins, err := c.st.ListPins(ctx, s.OrgID, conv.ID)
	if err != nil || len(pins) == 0 {
		return nil, mapErr("list pins", err)
	}
	ms, err := c.shown(ctx, s.OrgID, conv.ID)
	if err != nil {
		return nil, err
	}
	var picked []store.Message
	for _, p := range pins {
		if i, ok := slices.BinarySearchFunc(ms, p.Seq, func(m store.Message, seq int64) int { return cmp.Compare(m.Seq, seq) }); ok {
			picked = append(picked, ms[i])
		}
	}
	return c.present(ctx, s, conv, picked)
}
