package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quiverhq/quiver/store"
)

// eventCases checks the TurnEvents repository.
func eventCases() []suiteCase {
	return []suiteCase{
		{"AppendAndList", testEventAppendAndList},
		{"ListPages", testEventListPages},
		{"ListCapped", testEventListCapped},
		{"ListPageBytes", testEventListPageBytes},
		{"DuplicateSeqKeepsNothing", testEventDuplicateSeq},
		{"ConcurrentSameSeq", testEventConcurrentSameSeq},
		{"RefusesBadInput", testEventRefusesBadInput},
		{"EmptyAppend", testEventEmptyAppend},
		{"LastSeq", testEventLastSeq},
		{"WaitAtOnce", testEventWaitAtOnce},
		{"WaitWokenByAppend", testEventWaitWokenByAppend},
		{"WaitNotWokenByEarlierSeq", testEventWaitNotWokenByEarlierSeq},
		{"WaitCancelled", testEventWaitCancelled},
		{"WaitersBounded", testEventWaitersBounded},
		{"Retention", testEventRetention},
		{"OrgScoping", testEventOrgScoping},
		{"Cancelled", testEventCancelled},
	}
}

// turnStream is one turn's identifiers for the event checks.
type turnStream struct{ org, conv, turn string }

// stream returns the identifiers of a turn of this subtest.
func (f *fixture) stream(turn string) turnStream {
	return turnStream{org: f.id("org"), conv: f.id("conv"), turn: f.id(turn)}
}

// newEvents returns events from seq first to last, each with JSON data
// that names its Seq, created a second apart from at(0).
func newEvents(first, last int64) []store.TurnEvent {
	var evs []store.TurnEvent
	for seq := first; seq <= last; seq++ {
		evs = append(evs, store.TurnEvent{
			Seq:       seq,
			Kind:      "text",
			Data:      fmt.Appendf(nil, `{"seq":%d,"text":"«delta» %d"}`, seq, seq),
			CreatedAt: at(0).Add(time.Duration(seq) * time.Second),
		})
	}
	return evs
}

// appendEvents appends evs to s's turn, failing the test on error.
func (f *fixture) appendEvents(t *testing.T, s turnStream, evs []store.TurnEvent) {
	t.Helper()
	if err := f.AppendTurnEvents(t.Context(), s.org, s.conv, s.turn, evs); err != nil {
		t.Fatalf("AppendTurnEvents: %v", err)
	}
}

// listEvents lists s's events after `after`, failing the test on error.
func (f *fixture) listEvents(t *testing.T, s turnStream, after int64, limit int) []store.TurnEvent {
	t.Helper()
	evs, err := f.ListTurnEvents(t.Context(), s.org, s.turn, after, limit)
	if err != nil {
		t.Fatalf("ListTurnEvents: %v", err)
	}
	return evs
}

// seqs returns the Seqs of evs.
func seqs(evs []store.TurnEvent) []int64 {
	out := make([]int64, len(evs))
	for i, ev := range evs {
		out[i] = ev.Seq
	}
	return out
}

// seqRange returns first..last.
func seqRange(first, last int64) []int64 {
	var out []int64
	for s := first; s <= last; s++ {
		out = append(out, s)
	}
	return out
}

// testEventAppendAndList: events come back byte for byte (NUL bytes,
// invalid UTF-8, empty data included), in Seq order, times in UTC.
func testEventAppendAndList(t *testing.T, f *fixture) {
	s := f.stream("turn")
	want := []store.TurnEvent{
		{Seq: 1, Kind: "text", Data: []byte(`{"text":"Grüß dich 🙂"}`), CreatedAt: at(1)},
		{Seq: 2, Kind: "tool_call", Data: []byte("{\"args\":\"a\x00b\"}"), CreatedAt: at(2)},
		{Seq: 3, Kind: "text", Data: []byte{'"', 0xff, 0xfe, 0x00, '"'}, CreatedAt: at(2)},
		{Seq: 7, Kind: "done", Data: []byte{}, CreatedAt: at(3).In(time.FixedZone("UTC-10", -10*3600))},
	}
	f.appendEvents(t, s, want[:2])
	f.appendEvents(t, s, want[2:]) // a gap in Seqs is the writer's business
	got := f.listEvents(t, s, 0, 0)
	if d := diff(want, got); d != "" {
		t.Errorf("ListTurnEvents (-want +got):\n%s", d)
	}
	for i, ev := range got {
		wantUTC(t, "CreatedAt", ev.CreatedAt)
		if i < len(want) && !bytes.Equal(ev.Data, want[i].Data) {
			t.Errorf("event %d: data %q, want %q", ev.Seq, ev.Data, want[i].Data)
		}
	}
	if got := f.listEvents(t, f.stream("other-turn"), 0, 0); len(got) != 0 {
		t.Errorf("ListTurnEvents of a turn without events = %v, want none", seqs(got))
	}
}

// testEventListPages: after and limit page through the stream.
func testEventListPages(t *testing.T, f *fixture) {
	s := f.stream("turn")
	f.appendEvents(t, s, newEvents(1, 6))
	f.appendEvents(t, s, newEvents(7, 10))
	tests := []struct {
		name        string
		after       int64
		limit       int
		want        []int64
		checkEvents bool
	}{
		{"FromStart", 0, 4, seqRange(1, 4), true},
		{"Middle", 3, 4, seqRange(4, 7), true},
		{"AcrossAppends", 5, 3, seqRange(6, 8), false},
		{"Rest", 7, 0, seqRange(8, 10), false},
		{"NegativeLimit", 8, -1, seqRange(9, 10), false},
		{"AtEnd", 10, 5, nil, false},
		{"PastEnd", 99, 5, nil, false},
		{"NegativeAfter", -5, 2, seqRange(1, 2), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := f.listEvents(t, s, tc.after, tc.limit)
			if d := diff(tc.want, seqs(got)); d != "" {
				t.Errorf("ListTurnEvents(after %d, limit %d) Seqs (-want +got):\n%s", tc.after, tc.limit, d)
			}
			if tc.checkEvents {
				if d := diff(newEvents(tc.want[0], tc.want[len(tc.want)-1]), got); d != "" {
					t.Errorf("events (-want +got):\n%s", d)
				}
			}
		})
	}
}

// testEventListCapped: a limit of 0, below 0 or above MaxTurnEventsPage
// gives at most MaxTurnEventsPage events.
func testEventListCapped(t *testing.T, f *fixture) {
	s := f.stream("turn")
	const n = store.MaxTurnEventsPage + 5
	if n > store.MaxTurnEventsAppend {
		t.Fatalf("MaxTurnEventsPage %d + 5 exceeds MaxTurnEventsAppend %d", store.MaxTurnEventsPage, store.MaxTurnEventsAppend)
	}
	f.appendEvents(t, s, newEvents(1, n))
	for _, limit := range []int{0, -1, store.MaxTurnEventsPage + 1, 1 << 30} {
		got := f.listEvents(t, s, 0, limit)
		if d := diff(seqRange(1, store.MaxTurnEventsPage), seqs(got)); d != "" {
			t.Errorf("ListTurnEvents(limit %d) Seqs (-want +got):\n%s", limit, d)
		}
	}
	got := f.listEvents(t, s, store.MaxTurnEventsPage, 0)
	if d := diff(seqRange(store.MaxTurnEventsPage+1, n), seqs(got)); d != "" {
		t.Errorf("the next page's Seqs (-want +got):\n%s", d)
	}
}

// testEventListPageBytes: a page stops before the event that would take
// its data past MaxTurnEventsPageBytes, and the next page goes on.
func testEventListPageBytes(t *testing.T, f *fixture) {
	s := f.stream("turn")
	per := store.MaxTurnEventsPageBytes/3 + 1 // three fit in no page
	if per > store.MaxTurnEventData {
		per = store.MaxTurnEventData
	}
	fit := store.MaxTurnEventsPageBytes / per
	evs := newEvents(1, int64(fit)+2)
	for i := range evs {
		evs[i].Data = bytes.Repeat([]byte{byte('a' + i)}, per)
	}
	f.appendEvents(t, s, evs)
	first := f.listEvents(t, s, 0, 0)
	if d := diff(seqRange(1, int64(fit)), seqs(first)); d != "" {
		t.Errorf("first page's Seqs, %d bytes each (-want +got):\n%s", per, d)
	}
	rest := f.listEvents(t, s, int64(fit), 0)
	if d := diff(seqRange(int64(fit)+1, int64(fit)+2), seqs(rest)); d != "" {
		t.Errorf("second page's Seqs (-want +got):\n%s", d)
	}
	// Compared by hand: go-cmp walks a megabyte of Data byte by byte.
	for i, ev := range append(first, rest...) {
		if i < len(evs) && (ev.Kind != evs[i].Kind || !ev.CreatedAt.Equal(evs[i].CreatedAt) || !bytes.Equal(ev.Data, evs[i].Data)) {
			t.Errorf("event %d: %s at %v with %d bytes, want it as appended", ev.Seq, ev.Kind, ev.CreatedAt, len(ev.Data))
		}
	}
}

// testEventDuplicateSeq: a batch holding a Seq stored already is refused
// with ErrExists and keeps none of its events; the turn's events are as
// before, and another turn may use the same Seqs.
func testEventDuplicateSeq(t *testing.T, f *fixture) {
	s := f.stream("turn")
	f.appendEvents(t, s, newEvents(1, 2))
	batch := newEvents(2, 4)
	batch[0].Data = []byte(`{"replaced":true}`)
	if err := f.AppendTurnEvents(t.Context(), s.org, s.conv, s.turn, batch); !errors.Is(err, store.ErrExists) {
		t.Errorf("AppendTurnEvents of a stored Seq: %v, want store.ErrExists", err)
	}
	if d := diff(newEvents(1, 2), f.listEvents(t, s, 0, 0)); d != "" {
		t.Errorf("events after the refused batch (-want +got):\n%s", d)
	}
	f.appendEvents(t, s, newEvents(3, 4)) // the Seqs the refused batch held are free
	if d := diff(seqRange(1, 4), seqs(f.listEvents(t, s, 0, 0))); d != "" {
		t.Errorf("Seqs after the next batch (-want +got):\n%s", d)
	}
	f.appendEvents(t, f.stream("other-turn"), newEvents(1, 2))
}

// testEventConcurrentSameSeq: eight writers append Seq 1 of one turn at
// once (two replicas believing they run it); exactly one is stored.
func testEventConcurrentSameSeq(t *testing.T, f *fixture) {
	s := f.stream("turn")
	const writers = 8
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			ev := store.TurnEvent{Seq: 1, Kind: "text", Data: fmt.Appendf(nil, `{"writer":%d}`, i), CreatedAt: at(0)}
			errs[i] = f.AppendTurnEvents(t.Context(), s.org, s.conv, s.turn, []store.TurnEvent{ev})
		})
	}
	wg.Wait()
	won := -1
	for i, err := range errs {
		switch {
		case err == nil && won >= 0:
			t.Errorf("writers %d and %d both stored Seq 1", won, i)
		case err == nil:
			won = i
		case !errors.Is(err, store.ErrExists):
			t.Errorf("writer %d: %v, want nil or store.ErrExists", i, err)
		}
	}
	got := f.listEvents(t, s, 0, 0)
	if won < 0 || len(got) != 1 || string(got[0].Data) != fmt.Sprintf(`{"writer":%d}`, won) {
		t.Errorf("stored %d events (%v) after writer %d won, want its one", len(got), got, won)
	}
}

// testEventRefusesBadInput: each malformed batch is refused with an error
// other than ErrExists, and nothing of it is stored.
func testEventRefusesBadInput(t *testing.T, f *fixture) {
	good := func() []store.TurnEvent { return newEvents(1, 3) }
	tests := []struct {
		name string
		// ids edits the turn's identifiers the call is given.
		ids func(*turnStream)
		evs []store.TurnEvent
	}{
		{"NoOrg", func(s *turnStream) { s.org = "" }, good()},
		{"NoConversation", func(s *turnStream) { s.conv = "" }, good()},
		{"NoTurn", func(s *turnStream) { s.turn = "" }, good()},
		{"SeqZero", nil, edit(good(), func(evs []store.TurnEvent) { evs[0].Seq = 0 })},
		{"SeqNegative", nil, edit(good(), func(evs []store.TurnEvent) { evs[0].Seq = -1 })},
		{"SeqRepeated", nil, edit(good(), func(evs []store.TurnEvent) { evs[2].Seq = 2 })},
		{"SeqDecreasing", nil, edit(good(), func(evs []store.TurnEvent) { evs[2].Seq = 1 })},
		{"NoKind", nil, edit(good(), func(evs []store.TurnEvent) { evs[1].Kind = "" })},
		{"KindTooLong", nil, edit(good(), func(evs []store.TurnEvent) {
			evs[1].Kind = strings.Repeat("k", store.MaxTurnEventKind+1)
		})},
		{"KindWithNUL", nil, edit(good(), func(evs []store.TurnEvent) { evs[1].Kind = "te\x00xt" })},
		{"KindInvalidUTF8", nil, edit(good(), func(evs []store.TurnEvent) { evs[1].Kind = "te\xffxt" })},
		{"DataTooLarge", nil, edit(good(), func(evs []store.TurnEvent) {
			evs[2].Data = make([]byte, store.MaxTurnEventData+1)
		})},
		{"NoCreatedAt", nil, edit(good(), func(evs []store.TurnEvent) { evs[2].CreatedAt = time.Time{} })},
		{"TooMany", nil, newEvents(1, store.MaxTurnEventsAppend+1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := f.stream(tc.name)
			call := s
			if tc.ids != nil {
				tc.ids(&call)
			}
			err := f.AppendTurnEvents(t.Context(), call.org, call.conv, call.turn, tc.evs)
			if err == nil || errors.Is(err, store.ErrExists) {
				t.Errorf("AppendTurnEvents = %v, want an error other than ErrExists", err)
			}
			if got := f.listEvents(t, s, 0, 0); len(got) != 0 {
				t.Errorf("a refused batch stored Seqs %v", seqs(got))
			}
		})
	}
}

// edit applies fn to evs and returns them.
func edit(evs []store.TurnEvent, fn func([]store.TurnEvent)) []store.TurnEvent {
	fn(evs)
	return evs
}

func testEventEmptyAppend(t *testing.T, f *fixture) {
	s := f.stream("turn")
	for _, evs := range [][]store.TurnEvent{nil, {}} {
		if err := f.AppendTurnEvents(t.Context(), s.org, s.conv, s.turn, evs); err != nil {
			t.Errorf("AppendTurnEvents(%v) = %v, want nil", evs, err)
		}
	}
	if got := f.listEvents(t, s, 0, 0); len(got) != 0 {
		t.Errorf("empty appends stored %v", seqs(got))
	}
}

// lastSeq returns s's LastTurnEventSeq, failing the test on error.
func (f *fixture) lastSeq(t *testing.T, s turnStream) int64 {
	t.Helper()
	seq, err := f.LastTurnEventSeq(t.Context(), s.org, s.turn)
	if err != nil {
		t.Fatalf("LastTurnEventSeq: %v", err)
	}
	return seq
}

// testEventLastSeq: LastTurnEventSeq is 0 for a turn without events, the
// highest Seq stored (a gap or a refused batch notwithstanding) once it
// has some, 0 for the same turn ID in another organisation, and 0 again
// once retention deleted every event of the turn. The retained turn's
// events are from 2002: after those DeleteTurnEventsBefore(1999) of
// testEventRetention must not find, before that check's cutoff (which may
// delete them first, to the same effect).
func testEventLastSeq(t *testing.T, f *fixture) {
	s := f.stream("turn")
	if got := f.lastSeq(t, s); got != 0 {
		t.Errorf("LastTurnEventSeq of a turn without events = %d, want 0", got)
	}
	f.appendEvents(t, s, newEvents(1, 3))
	if got := f.lastSeq(t, s); got != 3 {
		t.Errorf("LastTurnEventSeq after Seqs 1..3 = %d, want 3", got)
	}
	f.appendEvents(t, s, newEvents(10, 12))
	if err := f.AppendTurnEvents(t.Context(), s.org, s.conv, s.turn, newEvents(12, 20)); !errors.Is(err, store.ErrExists) {
		t.Fatalf("AppendTurnEvents of a stored Seq: %v, want store.ErrExists", err)
	}
	if got := f.lastSeq(t, s); got != 12 {
		t.Errorf("LastTurnEventSeq after Seqs 1..3, 10..12 and a refused 12..20 = %d, want 12", got)
	}
	f.appendEvents(t, f.stream("other-turn"), newEvents(1, 40))
	theirs := s
	theirs.org = f.id("other-org")
	if got := f.lastSeq(t, theirs); got != 0 {
		t.Errorf("LastTurnEventSeq of the turn ID in another organisation = %d, want 0", got)
	}
	if got := f.lastSeq(t, s); got != 12 {
		t.Errorf("LastTurnEventSeq after another turn's appends = %d, want 12", got)
	}

	old := f.stream("old-turn")
	era := time.Date(2002, 1, 1, 0, 0, 0, 0, time.UTC)
	evs := newEvents(1, 5)
	for i := range evs {
		evs[i].CreatedAt = era.Add(time.Duration(i) * time.Second)
	}
	f.appendEvents(t, old, evs)
	if got := f.lastSeq(t, old); got != 5 {
		t.Errorf("LastTurnEventSeq of the old turn = %d, want 5", got)
	}
	if _, err := f.DeleteTurnEventsBefore(t.Context(), era.Add(time.Hour)); err != nil {
		t.Fatalf("DeleteTurnEventsBefore: %v", err)
	}
	if got := f.lastSeq(t, old); got != 0 {
		t.Errorf("LastTurnEventSeq after retention deleted every event = %d, want 0", got)
	}
}

// testEventWaitAtOnce: a turn that has an event past `after` answers at
// once, without any append to wake it.
func testEventWaitAtOnce(t *testing.T, f *fixture) {
	s := f.stream("turn")
	f.appendEvents(t, s, newEvents(1, 3))
	for _, after := range []int64{0, 2} {
		if err := f.WaitTurnEvents(t.Context(), s.org, s.turn, after); err != nil {
			t.Errorf("WaitTurnEvents(after %d) = %v, want nil", after, err)
		}
	}
}

// waitAsync calls WaitTurnEvents in a goroutine and returns its answer's
// channel.
func (f *fixture) waitAsync(ctx context.Context, s turnStream, after int64) <-chan error {
	done := make(chan error, 1)
	go func() { done <- f.WaitTurnEvents(ctx, s.org, s.turn, after) }()
	return done
}

// testEventWaitWokenByAppend: a waiter on a turn with nothing past
// `after` returns once another goroutine appends. Whether the append
// comes before the waiter registers or after, the waiter must return nil:
// a lost wake-up would leave it waiting (and the test hanging).
func testEventWaitWokenByAppend(t *testing.T, f *fixture) {
	t.Run("EmptyTurn", func(t *testing.T) {
		s := f.stream("empty")
		done := f.waitAsync(t.Context(), s, 0)
		f.appendEvents(t, s, newEvents(1, 1))
		if err := <-done; err != nil {
			t.Errorf("WaitTurnEvents = %v, want nil", err)
		}
	})
	t.Run("AfterLast", func(t *testing.T) {
		s := f.stream("busy")
		f.appendEvents(t, s, newEvents(1, 2))
		done := f.waitAsync(t.Context(), s, 2)
		f.appendEvents(t, s, newEvents(3, 4))
		if err := <-done; err != nil {
			t.Errorf("WaitTurnEvents = %v, want nil", err)
		}
	})
	t.Run("ManyWaiters", func(t *testing.T) {
		s := f.stream("watched")
		var dones []<-chan error
		for range 5 {
			dones = append(dones, f.waitAsync(t.Context(), s, 0))
		}
		f.appendEvents(t, s, newEvents(1, 1))
		for i, done := range dones {
			if err := <-done; err != nil {
				t.Errorf("waiter %d: %v, want nil", i, err)
			}
		}
	})
}

// testEventWaitNotWokenByEarlierSeq: events up to `after` do not end a
// wait; the waiter runs until its context ends.
func testEventWaitNotWokenByEarlierSeq(t *testing.T, f *fixture) {
	s := f.stream("turn")
	ctx, cancel := context.WithCancel(t.Context())
	done := f.waitAsync(ctx, s, 5)
	f.appendEvents(t, s, newEvents(1, 5))
	f.appendEvents(t, f.stream("other-turn"), newEvents(1, 9))
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("WaitTurnEvents(after 5) with Seqs up to 5 = %v, want context.Canceled", err)
	}
}

// testEventWaitCancelled: a wait ends with its context's error, whether
// the context ends while it waits or before it starts.
func testEventWaitCancelled(t *testing.T, f *fixture) {
	s := f.stream("turn")
	ctx, cancel := context.WithCancel(t.Context())
	done := f.waitAsync(ctx, s, 0)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("WaitTurnEvents cancelled while waiting = %v, want context.Canceled", err)
	}
	if err := f.WaitTurnEvents(ctx, s.org, s.turn, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("WaitTurnEvents with a cancelled context = %v, want context.Canceled", err)
	}
	dctx, dcancel := context.WithDeadline(t.Context(), at(0)) // long past
	defer dcancel()
	if err := f.WaitTurnEvents(dctx, s.org, s.turn, 0); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WaitTurnEvents past its deadline = %v, want context.DeadlineExceeded", err)
	}
}

// testEventWaitersBounded: of MaxTurnEventWaiters+1 waiters on one turn,
// exactly one is refused with ErrTooManyWaiters, and the others all wake
// at the next append. No waiter can return before that append, so the
// first answer is the refusal, and by then the others are all waiting.
func testEventWaitersBounded(t *testing.T, f *fixture) {
	s := f.stream("turn")
	answers := make(chan error, store.MaxTurnEventWaiters+1)
	for range store.MaxTurnEventWaiters + 1 {
		go func() { answers <- f.WaitTurnEvents(t.Context(), s.org, s.turn, 0) }()
	}
	if err := <-answers; !errors.Is(err, store.ErrTooManyWaiters) {
		t.Fatalf("first answer of %d waiters: %v, want store.ErrTooManyWaiters", store.MaxTurnEventWaiters+1, err)
	}
	other := f.stream("other-turn")
	f.appendEvents(t, other, newEvents(1, 1))
	if err := f.WaitTurnEvents(t.Context(), other.org, other.turn, 0); err != nil {
		t.Errorf("a waiter on another turn: %v, want nil (not bounded by this turn's waiters)", err)
	}
	f.appendEvents(t, s, newEvents(1, 1))
	for i := range store.MaxTurnEventWaiters {
		if err := <-answers; err != nil {
			t.Errorf("waiter %d: %v, want nil", i, err)
		}
	}
}

// testEventRetention: DeleteTurnEventsBefore deletes the events created
// before the instant, in every turn, more than one batch of them, and
// keeps the rest. The events are from 2003, before every other check's
// (which are from 2025).
func testEventRetention(t *testing.T, f *fixture) {
	cutoff := time.Date(2003, 1, 1, 12, 0, 0, 0, time.UTC)
	old, mixed := f.stream("old"), f.stream("mixed")
	// More old events than a backend deletes in one batch (both delete
	// 1000 at a time), in appends of at most MaxTurnEventsAppend.
	const oldEvents = 2500
	for first := int64(1); first <= oldEvents; first += store.MaxTurnEventsAppend {
		evs := newEvents(first, min(first+store.MaxTurnEventsAppend-1, oldEvents))
		for i := range evs {
			evs[i].Data, evs[i].CreatedAt = []byte("{}"), cutoff.Add(-time.Hour)
		}
		f.appendEvents(t, old, evs)
	}
	evs := newEvents(1, 3)
	evs[0].CreatedAt = cutoff.Add(-time.Millisecond)
	evs[1].CreatedAt = cutoff // kept: not before the cutoff
	evs[2].CreatedAt = cutoff.Add(time.Hour)
	f.appendEvents(t, mixed, evs)
	n, err := f.DeleteTurnEventsBefore(t.Context(), cutoff)
	if want := oldEvents + 1; err != nil || n < want {
		t.Errorf("DeleteTurnEventsBefore = %d, %v; want at least %d", n, err, want)
	}
	if got := f.listEvents(t, old, 0, 0); len(got) != 0 {
		t.Errorf("old turn keeps %d events, want none (first Seqs %v)", len(got), seqs(got[:min(len(got), 5)]))
	}
	if d := diff(evs[1:], f.listEvents(t, mixed, 0, 0)); d != "" {
		t.Errorf("mixed turn after retention (-want +got):\n%s", d)
	}
	n, err = f.DeleteTurnEventsBefore(t.Context(), time.Date(1999, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil || n != 0 {
		t.Errorf("DeleteTurnEventsBefore(1999) = %d, %v; want 0", n, err)
	}
}

// testEventOrgScoping: another organisation neither lists a turn's
// events nor is woken by them.
func testEventOrgScoping(t *testing.T, f *fixture) {
	mine := f.stream("turn")
	theirs := mine
	theirs.org = f.id("other-org")
	ctx, cancel := context.WithCancel(t.Context())
	done := f.waitAsync(ctx, theirs, 0)
	f.appendEvents(t, mine, newEvents(1, 3))
	if got := f.listEvents(t, theirs, 0, 0); len(got) != 0 {
		t.Errorf("another organisation lists Seqs %v of this one's turn", seqs(got))
	}
	if err := f.WaitTurnEvents(t.Context(), mine.org, mine.turn, 0); err != nil {
		t.Errorf("WaitTurnEvents in the turn's organisation = %v, want nil", err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("WaitTurnEvents from another organisation = %v, want context.Canceled", err)
	}
	f.appendEvents(t, theirs, newEvents(1, 1)) // its own turn with that ID
	if d := diff(seqRange(1, 3), seqs(f.listEvents(t, mine, 0, 0))); d != "" {
		t.Errorf("this organisation's Seqs after the other's append (-want +got):\n%s", d)
	}
}

// testEventCancelled: every TurnEvents method fails with context.Canceled
// on a cancelled context, and no write takes effect.
func testEventCancelled(t *testing.T, f *fixture) {
	s := f.stream("turn")
	f.appendEvents(t, s, newEvents(1, 2))
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	calls := []struct {
		name string
		call func() error
	}{
		{"AppendTurnEvents", func() error { return f.AppendTurnEvents(cancelled, s.org, s.conv, s.turn, newEvents(3, 4)) }},
		{"ListTurnEvents", func() error { _, err := f.ListTurnEvents(cancelled, s.org, s.turn, 0, 0); return err }},
		{"LastTurnEventSeq", func() error { _, err := f.LastTurnEventSeq(cancelled, s.org, s.turn); return err }},
		{"WaitTurnEvents", func() error { return f.WaitTurnEvents(cancelled, s.org, s.turn, 0) }},
		{"DeleteTurnEventsBefore", func() error {
			_, err := f.DeleteTurnEventsBefore(cancelled, time.Date(1999, 1, 1, 0, 0, 0, 0, time.UTC))
			return err
		}},
	}
	for _, c := range calls {
		if err := c.call(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: %v, want context.Canceled", c.name, err)
		}
	}
	if d := diff(newEvents(1, 2), f.listEvents(t, s, 0, 0)); d != "" {
		t.Errorf("events after the cancelled calls (-want +got):\n%s", d)
	}
}
