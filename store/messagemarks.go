package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Bounds of what marks a conversation's messages may carry. Discord
// allows 20 distinct reactions on a message and 50 pins in a channel;
// Quiver's own conversations hold the same.
const (
	// MaxReactionsPerMessage bounds a message's reactions, counting each
	// actor's emoji once.
	MaxReactionsPerMessage = 20
	// MaxPinsPerConversation bounds a conversation's pinned messages.
	MaxPinsPerConversation = 50
	// MaxEmojiBytes bounds one reaction's emoji: a Unicode emoji with
	// its joiners and modifiers, or a custom emoji's "<:name:id>".
	MaxEmojiBytes = 64
	// MaxEditRunes bounds the text an edit gives a message.
	MaxEditRunes = 4000
	// MaxThreadsPerMessage bounds the threads started from one message,
	// MaxThreadsPerConversation those started in one conversation (from
	// its messages or from itself).
	MaxThreadsPerMessage      = 1
	MaxThreadsPerConversation = 50
)

// ActorAgent is the actor of the agent's own reactions and pins; a
// person's are by their user id.
const ActorAgent = "agent"

// Errors of MessageMarks, returned wrapped.
var (
	// ErrMarkInvalid reports a mark that breaks a rule of its Check;
	// nothing is written.
	ErrMarkInvalid = errors.New("invalid message mark")
	// ErrMarkLimit reports a write past MaxReactionsPerMessage,
	// MaxPinsPerConversation, MaxThreadsPerMessage or
	// MaxThreadsPerConversation; nothing is written.
	ErrMarkLimit = errors.New("message mark limit reached")
	// ErrNotEditable refuses editing or deleting a message that is not
	// an assistant's reply, or is deleted already; nothing is written.
	ErrNotEditable = errors.New("only the agent's own messages can be edited or deleted")
)

// Reaction is one actor's emoji on one message.
type Reaction struct {
	OrgID, ConversationID string
	Seq                   int64
	Emoji                 string
	// Actor is ActorAgent or a user id.
	Actor     string
	CreatedAt time.Time
}

// Pin marks a message pinned in its conversation.
type Pin struct {
	OrgID, ConversationID string
	Seq                   int64
	// PinnedBy is ActorAgent or a user id.
	PinnedBy string
	PinnedAt time.Time
}

// MessageEdit replaces an assistant message's text, or deletes it.
type MessageEdit struct {
	OrgID, ConversationID string
	Seq                   int64
	// Text is the new text (Delete false): not blank, at most
	// MaxEditRunes runes, kept as PlainText.
	Text string
	// Delete blanks the message's text and marks it deleted; the row,
	// its Seq and time stay, so the transcript keeps its order.
	Delete bool
	At     time.Time
}

// ThreadLink links a conversation to the one it was started from.
type ThreadLink struct {
	OrgID string
	// ConversationID is the thread: the child conversation.
	ConversationID string
	// ParentID is the conversation it was started in, ParentSeq the
	// message it was started from there (0: the conversation itself).
	ParentID  string
	ParentSeq int64
	CreatedAt time.Time
}

// NewThread is what CreateThread writes: a new conversation, its link to
// the parent, and its first message.
type NewThread struct {
	// Conversation is the thread; its ID must be new, its OrgID and
	// UserID those of the parent.
	Conversation Conversation
	ParentSeq    int64
	ParentID     string
	// First is the thread's first message (Role "assistant").
	First Message
}

// ReactionCount is one emoji on a message: who reacted with it, in the
// order they did.
type ReactionCount struct {
	Emoji  string
	Actors []string
}

// MessageMark is everything marked on one message.
type MessageMark struct {
	Seq int64
	// Reactions are in the order each emoji was first added.
	Reactions []ReactionCount
	// PinnedAt is zero when the message is not pinned.
	PinnedAt time.Time
	// EditedAt and DeletedAt are zero when it was not.
	EditedAt, DeletedAt time.Time
	// Threads are the conversations started from the message.
	Threads []string
}

// MessageMarks stores what people and agents do to a conversation's
// messages besides writing them: reactions, pins, edits and deletions,
// and threads (conversations started from one). Every method is scoped
// to one organisation and conversation; a Seq that names no message of
// the conversation a person sees (a "user" or "assistant" message) gives
// ErrNotFound, whatever else it names. The caller checks that the
// conversation is the caller's (its owner); PostMessage and CreateThread,
// which reach a conversation besides the turn's, check it themselves.
type MessageMarks interface {
	// AddReaction validates r (CheckReaction) and adds it; adding one the
	// message has is no error. Past MaxReactionsPerMessage: ErrMarkLimit.
	AddReaction(ctx context.Context, r Reaction) error
	// RemoveReaction removes the actor's emoji from the message; removing
	// one it does not have is no error.
	RemoveReaction(ctx context.Context, r Reaction) error
	// PinMessage validates p and pins the message; pinning a pinned one
	// keeps its first pin. Past MaxPinsPerConversation: ErrMarkLimit.
	PinMessage(ctx context.Context, p Pin) error
	// UnpinMessage unpins the message; no error when it is not pinned.
	UnpinMessage(ctx context.Context, orgID, conversationID string, seq int64) error
	// ListPins returns the conversation's pins, latest first.
	ListPins(ctx context.Context, orgID, conversationID string) ([]Pin, error)
	// EditMessage validates e (CheckMessageEdit) and, in one transaction,
	// changes the message's text and marks it edited, or blanks it and
	// marks it deleted (unpinning it and removing its reactions). A
	// message that is not an "assistant" one, or is deleted: ErrNotEditable.
	EditMessage(ctx context.Context, e MessageEdit) error
	// ListMessageMarks returns the marks of every message of the
	// conversation that has one, by Seq.
	ListMessageMarks(ctx context.Context, orgID, conversationID string) ([]MessageMark, error)
	// CreateThread writes t in one transaction: the conversation (its ID
	// taken: ErrExists), the link, the first message. The parent must be
	// t.Conversation.UserID's, and ParentSeq (when not 0) a message of it
	// a person sees: else ErrNotFound. Past MaxThreadsPerMessage threads
	// from one message, or MaxThreadsPerConversation in the parent:
	// ErrMarkLimit.
	CreateThread(ctx context.Context, t NewThread) (ThreadLink, error)
	// GetThread returns the link of the conversation to its parent, or
	// ErrNotFound when it is no thread.
	GetThread(ctx context.Context, orgID, conversationID string) (ThreadLink, error)
	// ListThreads returns the threads started in the conversation, oldest
	// first.
	ListThreads(ctx context.Context, orgID, parentID string) ([]ThreadLink, error)
	// PostMessage appends m (an "assistant" message) to its conversation
	// when userID owns it and no turn of it is running (a Run held:
	// ErrTurnRunning), in one transaction, and returns its Seq; a
	// conversation that is not userID's is ErrNotFound.
	PostMessage(ctx context.Context, orgID, userID string, m Message) (int64, error)
}

// CheckReaction validates r and returns it with CreatedAt in UTC: keys
// that are ValidBlobKey and not empty, a Seq above 0, an emoji of 1 to
// MaxEmojiBytes bytes that is PlainText with no space or control
// character, an actor. Errors wrap ErrMarkInvalid.
func CheckReaction(r Reaction) (Reaction, error) {
	err := checkKeys(r.OrgID, r.ConversationID, r.Seq)
	if err == nil {
		err = checkEmoji(r.Emoji)
	}
	if err == nil && (r.Actor == "" || !ValidBlobKey(r.Actor)) {
		err = errors.New("the actor is empty or not a key")
	}
	if err == nil && r.CreatedAt.IsZero() {
		err = errors.New("CreatedAt is zero")
	}
	if err != nil {
		return Reaction{}, fmt.Errorf("%w: %w", ErrMarkInvalid, err)
	}
	r.CreatedAt = r.CreatedAt.UTC()
	return r, nil
}

// CheckPin validates p as CheckReaction does its keys and actor.
func CheckPin(p Pin) (Pin, error) {
	err := checkKeys(p.OrgID, p.ConversationID, p.Seq)
	if err == nil && (p.PinnedBy == "" || !ValidBlobKey(p.PinnedBy)) {
		err = errors.New("PinnedBy is empty or not a key")
	}
	if err == nil && p.PinnedAt.IsZero() {
		err = errors.New("PinnedAt is zero")
	}
	if err != nil {
		return Pin{}, fmt.Errorf("%w: %w", ErrMarkInvalid, err)
	}
	p.PinnedAt = p.PinnedAt.UTC()
	return p, nil
}

// CheckMessageEdit validates e and returns it with Text as trimmed
// PlainText ("" for a deletion) and At in UTC.
func CheckMessageEdit(e MessageEdit) (MessageEdit, error) {
	err := checkKeys(e.OrgID, e.ConversationID, e.Seq)
	text := strings.TrimSpace(PlainText(e.Text))
	switch {
	case err != nil:
	case e.At.IsZero():
		err = errors.New("At is zero")
	case e.Delete:
		text = ""
	case text == "":
		err = errors.New("the new text is blank")
	case utf8.RuneCountInString(text) > MaxEditRunes:
		err = fmt.Errorf("the new text is %d characters; the limit is %d", utf8.RuneCountInString(text), MaxEditRunes)
	}
	if err != nil {
		return MessageEdit{}, fmt.Errorf("%w: %w", ErrMarkInvalid, err)
	}
	e.Text, e.At = text, e.At.UTC()
	return e, nil
}

func checkKeys(orgID, conversationID string, seq int64) error {
	switch {
	case orgID == "" || !ValidBlobKey(orgID):
		return errors.New("OrgID is empty or not a key")
	case conversationID == "" || !ValidBlobKey(conversationID):
		return errors.New("ConversationID is empty or not a key")
	case seq <= 0:
		return errors.New("Seq is not a message number")
	}
	return nil
}

func checkEmoji(e string) error {
	if e == "" || len(e) > MaxEmojiBytes {
		return fmt.Errorf("an emoji is 1 to %d bytes", MaxEmojiBytes)
	}
	if PlainText(e) != e {
		return errors.New("the emoji is not plain text")
	}
	for _, r := range e {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return errors.New("the emoji holds a space or control character")
		}
	}
	return nil
}

// VisibleRole reports whether messages of role are what a person sees
// in a conversation, and so what marks may target.
func VisibleRole(role string) bool { return role == RoleUser || role == "assistant" }

// MarkRows are a conversation's mark rows as a backend reads them, each
// in its table's key order.
type MarkRows struct {
	Reactions []Reaction
	Pins      []Pin
	// Edits are the edited and deleted marks.
	Edits   []EditMark
	Threads []ThreadLink
}

// EditMark is a message's row of edit marks; a zero time is none.
type EditMark struct {
	Seq                 int64
	EditedAt, DeletedAt time.Time
}

// GroupMarks gathers rows into one MessageMark per message, by Seq:
// reactions by emoji in the order each was first added (CreatedAt, then
// emoji and actor), threads oldest first.
func GroupMarks(rows MarkRows) []MessageMark {
	by := map[int64]*MessageMark{}
	get := func(seq int64) *MessageMark {
		m, ok := by[seq]
		if !ok {
			m = &MessageMark{Seq: seq}
			by[seq] = m
		}
		return m
	}
	rs := slices.Clone(rows.Reactions)
	slices.SortStableFunc(rs, func(a, b Reaction) int {
		return cmp.Or(cmp.Compare(a.Seq, b.Seq), a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.Emoji, b.Emoji), cmp.Compare(a.Actor, b.Actor))
	})
	for _, r := range rs {
		m := get(r.Seq)
		i := slices.IndexFunc(m.Reactions, func(c ReactionCount) bool { return c.Emoji == r.Emoji })
		if i < 0 {
			m.Reactions = append(m.Reactions, ReactionCount{Emoji: r.Emoji})
			i = len(m.Reactions) - 1
		}
		m.Reactions[i].Actors = append(m.Reactions[i].Actors, r.Actor)
	}
	for _, p := range rows.Pins {
		get(p.Seq).PinnedAt = p.PinnedAt
	}
	for _, e := range rows.Edits {
		m := get(e.Seq)
		m.EditedAt, m.DeletedAt = e.EditedAt, e.DeletedAt
	}
	ts := slices.Clone(rows.Threads)
	slices.SortStableFunc(ts, func(a, b ThreadLink) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ConversationID, b.ConversationID))
	})
	for _, t := range ts {
		if t.ParentSeq > 0 {
			m := get(t.ParentSeq)
			m.Threads = append(m.Threads, t.ConversationID)
		}
	}
	out := make([]MessageMark, 0, len(by))
	for _, m := range by {
		out = append(out, *m)
	}
	slices.SortFunc(out, func(a, b MessageMark) int { return cmp.Compare(a.Seq, b.Seq) })
	return out
}

// CheckPost validates a message for PostMessage and returns it with its
// text as trimmed PlainText and CreatedAt in UTC: an "assistant" message
// of a conversation (a key), a text of 1 to MaxEditRunes runes, a time.
// Errors wrap ErrMarkInvalid.
func CheckPost(m Message) (Message, error) {
	text := strings.TrimSpace(PlainText(m.Content))
	var err error
	switch {
	case m.ConversationID == "" || !ValidBlobKey(m.ConversationID):
		err = errors.New("ConversationID is empty or not a key")
	case m.Role != "assistant":
		err = errors.New("only the agent's messages are posted")
	case text == "":
		err = errors.New("the text is blank")
	case utf8.RuneCountInString(text) > MaxEditRunes:
		err = fmt.Errorf("the text is %d characters; the limit is %d", utf8.RuneCountInString(text), MaxEditRunes)
	case m.CreatedAt.IsZero():
		err = errors.New("CreatedAt is zero")
	}
	if err != nil {
		return Message{}, fmt.Errorf("%w: %w", ErrMarkInvalid, err)
	}
	m.Content, m.CreatedAt = text, m.CreatedAt.UTC()
	return m, nil
}

// CheckNewThread validates t for CreateThread and returns its link: a
// conversation with keys and times, a parent that is another
// conversation, a ParentSeq of 0 or more, a first message that CheckPost
// accepts in the new conversation. Errors wrap ErrMarkInvalid.
func CheckNewThread(t NewThread) (ThreadLink, error) {
	c := t.Conversation
	var err error
	switch {
	case c.OrgID == "" || !ValidBlobKey(c.OrgID) || c.ID == "" || !ValidBlobKey(c.ID) || c.UserID == "" || !ValidBlobKey(c.UserID):
		err = errors.New("the thread's OrgID, ID or UserID is empty or not a key")
	case t.ParentID == "" || !ValidBlobKey(t.ParentID) || t.ParentID == c.ID:
		err = errors.New("the parent is empty, not a key, or the thread itself")
	case t.ParentSeq < 0:
		err = errors.New("ParentSeq is negative")
	case c.CreatedAt.IsZero():
		err = errors.New("the thread's CreatedAt is zero")
	case t.First.ConversationID != c.ID:
		err = errors.New("the first message is not in the thread")
	}
	if err != nil {
		return ThreadLink{}, fmt.Errorf("%w: %w", ErrMarkInvalid, err)
	}
	if _, err := CheckPost(t.First); err != nil {
		return ThreadLink{}, fmt.Errorf("the first message: %w", err)
	}
	return ThreadLink{OrgID: c.OrgID, ConversationID: c.ID, ParentID: t.ParentID, ParentSeq: t.ParentSeq, CreatedAt: c.CreatedAt.UTC()}, nil
}
