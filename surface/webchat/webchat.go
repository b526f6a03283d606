// Package webchat is Quiver's own conversations as a surface: the web
// chat, and the API and CLI that store the same conversations. It
// implements the subset of surface that fits a conversation with one
// person: reactions and pins on any message of the conversation, edits
// and deletions of the agent's own messages, message metadata, a thread
// as a linked child conversation, and posts into another conversation
// the same person owns. Replies to single messages, stickers, avatars
// and blocking it leaves out (surface.Lookup gives the reasons).
//
// A message id is the message's number in its conversation (store
// Message.Seq, in decimal). Every call reads the scope's conversation
// and answers surface.ErrNoMessage unless the scope's user owns it, so
// an id never reaches another person's conversation.
package webchat

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/quiverhq/quiver/ids"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/surface"
	"github.com/quiverhq/quiver/turn"
)

// Store is the repositories the web chat reads and writes.
type Store interface {
	GetConversation(ctx context.Context, orgID, id string) (store.Conversation, error)
	ListConversations(ctx context.Context, orgID, userID string, limit int) ([]store.Conversation, error)
	ListMessages(ctx context.Context, orgID, conversationID string, beforeSeq int64) ([]store.Message, error)
	GetUser(ctx context.Context, orgID, id string) (store.User, error)
	TurnTree(ctx context.Context, orgID, conversationID string) (store.TurnTree, error)
	store.MessageMarks
}

// Config builds a Chat.
type Config struct {
	// Store is required.
	Store Store
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// NewID makes a thread's conversation id (prefix "conv_"); nil
	// means ids.Random.
	NewID func(prefix string) string
}

// Chat is the web chat surface. It is safe for concurrent use.
type Chat struct {
	st    Store
	now   func() time.Time
	newID func(string) string
}

// New returns the web chat over cfg. It panics without a store: a
// wiring mistake to catch at start-up.
func New(cfg Config) *Chat {
	if cfg.Store == nil {
		panic("webchat: a store is required")
	}
	c := &Chat{st: cfg.Store, now: cfg.Now, newID: cfg.NewID}
	if c.now == nil {
		c.now = time.Now
	}
	if c.newID == nil {
		c.newID = ids.Random{}.New
	}
	return c
}

// The interfaces Chat implements, checked at compile time.
var (
	_ surface.Surface  = (*Chat)(nil)
	_ surface.Reactor  = (*Chat)(nil)
	_ surface.Pinner   = (*Chat)(nil)
	_ surface.Editor   = (*Chat)(nil)
	_ surface.Threader = (*Chat)(nil)
	_ surface.Poster   = (*Chat)(nil)
)

// Name returns surface.WebChat.
func (c *Chat) Name() string { return surface.WebChat }

// Capabilities returns the web chat's, as surface.Lookup gives them.
func (c *Chat) Capabilities() surface.Capabilities {
	sp, _ := surface.Lookup(surface.WebChat)
	return sp.Caps
}

// own returns the scope's conversation when the scope's user owns it,
// else surface.ErrNoMessage.
func (c *Chat) own(ctx context.Context, s turn.Scope) (store.Conversation, error) {
	if s.ConversationID == "" || s.UserID == "" {
		return store.Conversation{}, surface.ErrNoMessage
	}
	conv, err := c.st.GetConversation(ctx, s.OrgID, s.ConversationID)
	switch {
	case errors.Is(err, store.ErrNotFound) || err == nil && conv.UserID != s.UserID:
		return store.Conversation{}, surface.ErrNoMessage
	case err != nil:
		return store.Conversation{}, fmt.Errorf("webchat: read the conversation: %w", err)
	}
	return conv, nil
}

// ParseID returns the message number an id names; ok false for anything
// but a positive decimal number written as FormatID writes it.
func ParseID(id string) (seq int64, ok bool) {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n <= 0 || strconv.FormatInt(n, 10) != id {
		return 0, false
	}
	return n, true
}

// FormatID is the id of message number seq.
func FormatID(seq int64) string { return strconv.FormatInt(seq, 10) }

// target checks the scope and parses id: the message number, or
// surface.ErrNoMessage.
func (c *Chat) target(ctx context.Context, s turn.Scope, id string) (int64, error) {
	if _, err := c.own(ctx, s); err != nil {
		return 0, err
	}
	seq, ok := ParseID(id)
	if !ok {
		return 0, surface.ErrNoMessage
	}
	return seq, nil
}

// mapErr turns the store's answers into the surface's.
func mapErr(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrNotFound):
		return surface.ErrNoMessage
	case errors.Is(err, store.ErrNotEditable):
		return fmt.Errorf("%w: only the agent's own messages can be edited or deleted", surface.ErrNotAllowed)
	case errors.Is(err, store.ErrMarkLimit):
		return fmt.Errorf("%w: %w", surface.ErrLimit, errors.Unwrap(err))
	case errors.Is(err, store.ErrMarkInvalid):
		return err
	}
	return fmt.Errorf("webchat: %s: %w", op, err)
}

// React adds the agent's reaction.
func (c *Chat) React(ctx context.Context, s turn.Scope, id, emoji string) error {
	seq, err := c.target(ctx, s, id)
	if err != nil {
		return err
	}
	return mapErr("react", c.st.AddReaction(ctx, store.Reaction{OrgID: s.OrgID, ConversationID: s.ConversationID,
		Seq: seq, Emoji: emoji, Actor: store.ActorAgent, CreatedAt: c.now()}))
}

// Unreact removes the agent's reaction.
func (c *Chat) Unreact(ctx context.Context, s turn.Scope, id, emoji string) error {
	seq, err := c.target(ctx, s, id)
	if err != nil {
		return err
	}
	return mapErr("remove a reaction", c.st.RemoveReaction(ctx, store.Reaction{OrgID: s.OrgID, ConversationID: s.ConversationID,
		Seq: seq, Emoji: emoji, Actor: store.ActorAgent}))
}

// Pin pins any message of the conversation a person sees.
func (c *Chat) Pin(ctx context.Context, s turn.Scope, id string) error {
	seq, err := c.target(ctx, s, id)
	if err != nil {
		return err
	}
	return mapErr("pin", c.st.PinMessage(ctx, store.Pin{OrgID: s.OrgID, ConversationID: s.ConversationID,
		Seq: seq, PinnedBy: store.ActorAgent, PinnedAt: c.now()}))
}

// Unpin unpins the message; a number that names no message is
// surface.ErrNoMessage, one not pinned no error.
func (c *Chat) Unpin(ctx context.Context, s turn.Scope, id string) error {
	seq, err := c.target(ctx, s, id)
	if err != nil {
		return err
	}
	if _, err := c.message(ctx, s, seq); err != nil {
		return err
	}
	return mapErr("unpin", c.st.UnpinMessage(ctx, s.OrgID, s.ConversationID, seq))
}

// Edit replaces the text of one of the agent's messages.
func (c *Chat) Edit(ctx context.Context, s turn.Scope, id, text string) error {
	seq, err := c.target(ctx, s, id)
	if err != nil {
		return err
	}
	return mapErr("edit", c.st.EditMessage(ctx, store.MessageEdit{OrgID: s.OrgID, ConversationID: s.ConversationID,
		Seq: seq, Text: text, At: c.now()}))
}

// Delete deletes one of the agent's messages.
func (c *Chat) Delete(ctx context.Context, s turn.Scope, id string) error {
	seq, err := c.target(ctx, s, id)
	if err != nil {
		return err
	}
	return mapErr("delete", c.st.EditMessage(ctx, store.MessageEdit{OrgID: s.OrgID, ConversationID: s.ConversationID,
		Seq: seq, Delete: true, At: c.now()}))
}

// slicesLast returns at most n of the last elements of s.
func slicesLast[T any](s []T, n int) []T {
	if n <= 0 {
		return nil
	}
	if len(s) > n {
		s = s[len(s)-n:]
	}
	return slices.Clip(s)
}
