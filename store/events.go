package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// TurnEvent is one event of a turn's stream, as its one writer (the
// replica running the turn) stored it, for readers on any replica to
// resume from a Seq.
type TurnEvent struct {
	// Seq numbers the turn's events from 1, strictly increasing in the
	// order the writer emits them; assigned by the writer, not the store.
	Seq int64
	// Kind names the event ("text", "tool_call", …) for readers that
	// filter; UTF-8 without NUL, 1 to MaxTurnEventKind bytes.
	Kind string
	// Data is the event's JSON, kept byte for byte (it may hold NUL bytes
	// or invalid UTF-8 from a model); at most MaxTurnEventData bytes.
	Data      []byte
	CreatedAt time.Time
}

// Bounds of the turn event stream: a model streaming for a turn's whole
// wall time must not make one write, one page or one process's waiters
// unbounded.
const (
	// MaxTurnEventKind bounds TurnEvent.Kind, in bytes.
	MaxTurnEventKind = 64
	// MaxTurnEventData bounds TurnEvent.Data, in bytes.
	MaxTurnEventData = 1 << 20
	// MaxTurnEventsAppend bounds the events of one AppendTurnEvents call.
	MaxTurnEventsAppend = 1000
	// MaxTurnEventsPage bounds the events of one ListTurnEvents page.
	MaxTurnEventsPage = 500
	// MaxTurnEventsPageBytes bounds the Data of one ListTurnEvents page:
	// a page ends before the event that would take its Data past it,
	// except that a page holds at least one event.
	MaxTurnEventsPageBytes = 4 << 20
	// MaxTurnEventWaiters bounds the WaitTurnEvents calls waiting on one
	// turn in one process at once (a reader is an SSE connection of the
	// turn's user, and a person opens a few).
	MaxTurnEventWaiters = 64
)

// ErrTooManyWaiters is what WaitTurnEvents returns, wrapped, when the
// turn already has MaxTurnEventWaiters waiters in this process.
var ErrTooManyWaiters = errors.New("too many readers waiting on this turn")

// TurnEvents stores turns' event streams for a bounded time.
type TurnEvents interface {
	// AppendTurnEvents stores evs, the next events of the turn in that
	// organisation and conversation, in one transaction, and then wakes
	// the turn's waiters in every process. A Seq already stored for the
	// turn fails with ErrExists and keeps nothing of the batch. Each event
	// needs Seq > 0 (strictly increasing within evs), a Kind and a
	// CreatedAt within the bounds above, and the IDs must not be empty;
	// anything else, or more than MaxTurnEventsAppend events, is refused,
	// writing nothing. No events is a no-op.
	AppendTurnEvents(ctx context.Context, orgID, conversationID, turnID string, evs []TurnEvent) error
	// ListTurnEvents returns the turn's events with Seq > after, in Seq
	// order: at most limit of them (MaxTurnEventsPage when limit <= 0 or
	// above it) and at most MaxTurnEventsPageBytes of Data (but at least
	// one event when any is there). The caller pages on from the last
	// Seq. A turn of another organisation has none.
	ListTurnEvents(ctx context.Context, orgID, turnID string, after int64, limit int) ([]TurnEvent, error)
	// LastTurnEventSeq returns the highest Seq stored for the turn in
	// that organisation, or 0 when it has none (a turn of another
	// organisation has none, as has one whose events retention deleted
	// all). One indexed read; it takes no lock.
	LastTurnEventSeq(ctx context.Context, orgID, turnID string) (int64, error)
	// WaitTurnEvents returns nil once the turn has an event with Seq >
	// after: at once when it has one already, otherwise as soon as an
	// append stores one, from this process or another. It returns ctx's
	// error when ctx ends first, and ErrTooManyWaiters when
	// MaxTurnEventWaiters calls of this process wait on the turn already.
	// An append committed after the call began is never missed.
	WaitTurnEvents(ctx context.Context, orgID, turnID string, after int64) error
	// DeleteTurnEventsBefore deletes the events, in every organisation,
	// created before `before`, and returns how many. It deletes in
	// batches of its own transactions, so it never holds the store for
	// long; a ctx ending between batches keeps what was deleted.
	DeleteTurnEventsBefore(ctx context.Context, before time.Time) (int, error)
}

// CheckTurnEvents reports the first way the arguments of an
// AppendTurnEvents call break its contract, or nil: each backend calls it
// before writing anything.
func CheckTurnEvents(orgID, conversationID, turnID string, evs []TurnEvent) error {
	if orgID == "" || conversationID == "" || turnID == "" {
		return errors.New("empty organisation, conversation or turn ID")
	}
	if len(evs) > MaxTurnEventsAppend {
		return fmt.Errorf("%d events, want at most %d", len(evs), MaxTurnEventsAppend)
	}
	var last int64
	for i, ev := range evs {
		switch {
		case ev.Seq <= last:
			return fmt.Errorf("event %d: seq %d, want above %d", i, ev.Seq, last)
		case ev.Kind == "" || len(ev.Kind) > MaxTurnEventKind:
			return fmt.Errorf("event %d: kind of %d bytes, want 1 to %d", i, len(ev.Kind), MaxTurnEventKind)
		case !utf8.ValidString(ev.Kind) || strings.ContainsRune(ev.Kind, 0):
			return fmt.Errorf("event %d: kind %q is not text", i, ev.Kind)
		case len(ev.Data) > MaxTurnEventData:
			return fmt.Errorf("event %d: data of %d bytes, want at most %d", i, len(ev.Data), MaxTurnEventData)
		case ev.CreatedAt.IsZero():
			return fmt.Errorf("event %d: no creation time", i)
		}
		last = ev.Seq
	}
	return nil
}

// TurnEventsLimit is the page size ListTurnEvents uses for limit: limit
// itself within 1..MaxTurnEventsPage, MaxTurnEventsPage otherwise.
func TurnEventsLimit(limit int) int {
	if limit <= 0 || limit > MaxTurnEventsPage {
		return MaxTurnEventsPage
	}
	return limit
}
