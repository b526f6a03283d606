package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// MaxShortTermRunes bounds a short-term memory's Text: a working note of
// what is going on in a channel or conversation (the task, decisions,
// open questions), not a document.
const MaxShortTermRunes = 4000

// ErrShortTermInvalid reports a short-term memory that breaks a rule of
// CheckShortTerm; nothing is written.
var ErrShortTermInvalid = errors.New("invalid short-term memory")

// ShortTerm is the working memory of one thread of an organisation: a
// channel, or a conversation on surfaces without channels (turn.Scope's
// Thread), replaced whole on every write.
type ShortTerm struct {
	OrgID string
	// Thread names the channel or conversation ("channel:ID",
	// "conversation:ID").
	Thread string
	// ConversationID is the conversation it was last written in:
	// deleting that conversation deletes it.
	ConversationID string
	// Text is the memory, at most MaxShortTermRunes runes, stored as
	// PlainText.
	Text      string
	UpdatedAt time.Time
}

// ShortTerms stores short-term memories, one per thread. Every method is
// scoped to one organisation and thread; the caller (a tool, the engine)
// takes both from the turn.
type ShortTerms interface {
	// PutShortTerm validates m with CheckShortTerm and replaces the
	// thread's memory with it; a blank Text deletes the thread's memory
	// (no error when there is none). An invalid m gives an error wrapping
	// ErrShortTermInvalid before anything is written.
	PutShortTerm(ctx context.Context, m ShortTerm) error
	// GetShortTerm returns the thread's memory, or ErrNotFound.
	GetShortTerm(ctx context.Context, orgID, thread string) (ShortTerm, error)
}

// CheckShortTerm validates m for PutShortTerm and returns it with Text as
// PlainText (and trimmed) and UpdatedAt in UTC. It refuses, with an
// error wrapping ErrShortTermInvalid: an empty OrgID or Thread; keys that
// are not ValidBlobKey; a Text over MaxShortTermRunes runes; a zero
// UpdatedAt.
func CheckShortTerm(m ShortTerm) (ShortTerm, error) {
	if err := checkShortTerm(m); err != nil {
		return ShortTerm{}, fmt.Errorf("%w: %w", ErrShortTermInvalid, err)
	}
	m.Text = strings.TrimSpace(PlainText(m.Text))
	m.UpdatedAt = m.UpdatedAt.UTC()
	return m, nil
}

func checkShortTerm(m ShortTerm) error {
	switch {
	case m.OrgID == "":
		return errors.New("OrgID is empty")
	case m.Thread == "":
		return errors.New("Thread is empty")
	case m.UpdatedAt.IsZero():
		return errors.New("UpdatedAt is zero")
	}
	for _, k := range []struct{ field, value string }{{"OrgID", m.OrgID}, {"Thread", m.Thread}, {"ConversationID", m.ConversationID}} {
		if !ValidBlobKey(k.value) {
			return fmt.Errorf("%s is over %d bytes, not UTF-8 or holds a NUL", k.field, MaxBlobKeyBytes)
		}
	}
	if n := utf8.RuneCountInString(m.Text); n > MaxShortTermRunes {
		return fmt.Errorf("the text is %d characters; the limit is %d", n, MaxShortTermRunes)
	}
	return nil
}
