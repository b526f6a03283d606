// Package surface is where conversations happen, as the message tools
// see it: one set of interfaces for what a tool may do to the messages of
// a conversation (react, pin, edit, delete, reply, list, open a thread,
// post elsewhere, stickers, avatars, blocking), and the capabilities each
// surface declares. Quiver's own conversations (the web chat, the API and
// the CLI) are the first implementation (surface/webchat); Discord is the
// second.
//
// Every method takes the turn's scope (tool.Scope, built from the turn's
// facts) and acts only inside it: the conversation, channel, user and
// organisation come from the scope, never from a tool's arguments. A
// message id is the surface's own string (a Discord snowflake, a web chat
// message number); an id that names no message the scope reaches — in
// another conversation, another person's, or none at all — is
// ErrNoMessage, the same answer whatever the reason, so a refusal
// reveals nothing. Permissions are checked again on every call: a
// surface's declared capabilities say what it can do at all, not what
// the caller may do now.
package surface

import (
	"context"
	"errors"
	"time"

	"github.com/quiverhq/quiver/turn"
)

// Errors every surface answers with, so tools word their refusals once.
var (
	// ErrNoMessage: the id names no message the scope reaches.
	ErrNoMessage = errors.New("no such message in this conversation")
	// ErrNoPlace: the place names no conversation or channel the scope
	// may post to.
	ErrNoPlace = errors.New("no such conversation or channel")
	// ErrNotAllowed: the caller, or the agent, may not do that to this
	// message or place (another person's message to edit, a permission
	// the surface withholds).
	ErrNotAllowed = errors.New("not allowed")
	// ErrUnsupported: the surface lacks the capability.
	ErrUnsupported = errors.New("this surface cannot do that")
	// ErrLimit: a cap was reached (pins per conversation, reactions per
	// message); nothing changed.
	ErrLimit = errors.New("limit reached")
	// ErrBusy: the place has a turn running; nothing was posted.
	ErrBusy = errors.New("that conversation has a turn running")
)

// Author is who wrote a message, as the model may read it.
type Author struct {
	// ID is the surface's id of the author; "" for Quiver's agent on the
	// web chat.
	ID string `json:"id,omitempty"`
	// Name is the display name.
	Name string `json:"name"`
	// Agent is true for the agent's own messages.
	Agent bool `json:"agent,omitempty"`
}

// Reaction is one emoji on a message with how many reacted with it and
// whether the agent is among them.
type Reaction struct {
	Emoji string `json:"emoji"`
	Count int    `json:"count"`
	Mine  bool   `json:"mine,omitempty"`
}

// Message is one message of a place, as a surface lists it.
type Message struct {
	// ID is the surface's message id.
	ID     string    `json:"id"`
	Author Author    `json:"author"`
	Text   string    `json:"text"`
	At     time.Time `json:"at"`
	// Reactions are in the order they were first added.
	Reactions []Reaction `json:"reactions,omitempty"`
	Pinned    bool       `json:"pinned,omitempty"`
	Edited    bool       `json:"edited,omitempty"`
	// Deleted messages keep their id and time; Text is "".
	Deleted bool `json:"deleted,omitempty"`
	// Thread is the place of a thread started from the message; "" when
	// none.
	Thread string `json:"thread,omitempty"`
}

// Place is a conversation or channel a scope may post to.
type Place struct {
	// ID is the surface's id of the place (a conversation id, a channel
	// snowflake).
	ID   string `json:"id"`
	Name string `json:"name"`
	// Parent is the place a thread was started in; "" when it is none.
	Parent string `json:"parent,omitempty"`
}

// Thread is a place started from a message, with its first message.
type Thread struct {
	Place Place
	First Message
}

// Sticker is a community sticker the agent may send.
type Sticker struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// Image is a picture a surface returns (an avatar).
type Image struct {
	MIME string
	Data []byte
}

// Surface is one place where conversations happen. Name and
// Capabilities never change for a value; a Surface is safe for
// concurrent use. A surface implements the optional interfaces below
// for exactly the capabilities it declares (Conforms checks it).
type Surface interface {
	// Name is the surface's name (WebChat, Discord).
	Name() string
	// Capabilities is what the surface can do at all.
	Capabilities() Capabilities
	// Recent returns at most limit of the place's latest messages that
	// a person sees, oldest first (limit <= 0 gives none).
	Recent(ctx context.Context, s turn.Scope, limit int) ([]Message, error)
}

// Reactor adds and removes the agent's reactions (React).
type Reactor interface {
	// React adds the agent's reaction with emoji to the message; adding
	// one it has already is no error.
	React(ctx context.Context, s turn.Scope, id, emoji string) error
	// Unreact removes it; removing one it has not is no error.
	Unreact(ctx context.Context, s turn.Scope, id, emoji string) error
}

// Replier posts a reply to a message in the same place (Reply).
type Replier interface {
	Reply(ctx context.Context, s turn.Scope, id, text string) (Message, error)
}

// Pinner pins and unpins messages and lists the pinned ones (Pin).
type Pinner interface {
	// Pin pins the message; pinning a pinned one is no error. A place
	// holding its limit of pins gives ErrLimit.
	Pin(ctx context.Context, s turn.Scope, id string) error
	// Unpin unpins it; unpinning one not pinned is no error.
	Unpin(ctx context.Context, s turn.Scope, id string) error
	// Pins lists the place's pinned messages, latest pin first.
	Pins(ctx context.Context, s turn.Scope) ([]Message, error)
}

// Editor edits and deletes messages (Edit, Delete). Which messages it
// may touch is the surface's rule (on the web chat, the agent's own).
type Editor interface {
	Edit(ctx context.Context, s turn.Scope, id, text string) error
	Delete(ctx context.Context, s turn.Scope, id string) error
}

// Threader starts a thread from a message of the place, with a first
// message by the agent (Threads). An empty from starts it from the
// place itself.
type Threader interface {
	CreateThread(ctx context.Context, s turn.Scope, from, name, first string) (Thread, error)
}

// Poster posts into other places the scope reaches (CrossPost).
type Poster interface {
	// Places lists at most limit places the agent may post into for the
	// scope, the current one left out, most recent first.
	Places(ctx context.Context, s turn.Scope, limit int) ([]Place, error)
	// Post posts text into the place as the agent.
	Post(ctx context.Context, s turn.Scope, place, text string) (Message, error)
}

// Stickerer lists and sends community stickers (Stickers).
type Stickerer interface {
	Stickers(ctx context.Context, s turn.Scope) ([]Sticker, error)
	SendSticker(ctx context.Context, s turn.Scope, id string) error
}

// AvatarReader reads a user's or the agent's avatar (Avatars): user "" is the
// caller, "self" the agent.
type AvatarReader interface {
	Avatar(ctx context.Context, s turn.Scope, user string) (Image, error)
}

// Blocker mutes and unmutes a user for the agent (Blocking): a blocked
// user's messages get no answer from this agent.
type Blocker interface {
	Block(ctx context.Context, s turn.Scope, user, reason string) error
	Unblock(ctx context.Context, s turn.Scope, user string) error
}
