package runs

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/store"
)

// Bounds of the recorder: what one gathered text event and one stored
// batch may hold, so that a model streaming for a turn's whole wall time
// makes neither a write nor an event unbounded.
const (
	// maxGatheredText ends a gathered text event early.
	maxGatheredText = 64 << 10
	// maxBatchBytes stores a batch early.
	maxBatchBytes = 1 << 20
)

// Event is a recorded event as readers see it: its number in the turn's
// stream (from 1), its kind and its JSON (an agent.Event).
type Event struct {
	Seq  int64
	Kind agent.EventKind
	Data []byte
}

// recorder numbers a run's events, gathers text deltas into one event
// per TextFlush (or until another event comes), sends each numbered
// event to the live sink at once and stores them in batches: when a
// batch has waited TextFlush, when the turn stops (done, error, pause)
// and at close. So a turn costs a few writes, not one per delta, and a
// reader resuming from any number the live stream showed finds the same
// events after it.
type recorder struct {
	reg *Registry
	sr  store.Run

	mu    sync.Mutex
	seq   int64
	last  agent.EventKind
	text  *agent.Event // the text being gathered
	batch []store.TurnEvent
	bytes int
	timer *time.Timer
	// gen tells the armed timer's callback from one stopped meanwhile.
	gen    uint64
	sink   func(Event)
	closed bool
	// failed is set once a batch could not be stored: nothing more is
	// stored, so that readers on other replicas find the stream ending
	// (runs.ErrNoEnd) rather than a gap in its numbers.
	failed bool
}

// newRecorder numbers the run's events from after seq.
func newRecorder(reg *Registry, sr store.Run, seq int64) *recorder {
	return &recorder{reg: reg, sr: sr, seq: seq}
}

// SetSink sends every event numbered from now on to sink as well, in
// order; nil stops sending. sink is called with the recorder's lock held,
// so it must not call back into the run.
func (run *Run) SetSink(sink func(Event)) {
	run.rec.mu.Lock()
	defer run.rec.mu.Unlock()
	run.rec.sink = sink
}

// Emit records ev, the turn's next event (the engine's emit). Text
// deltas are gathered; nothing is recorded after End.
func (run *Run) Emit(ev agent.Event) { run.rec.emit(ev) }

// Last is the kind of the last event emitted (gathered text included),
// "" before the first.
func (run *Run) Last() agent.EventKind {
	run.rec.mu.Lock()
	defer run.rec.mu.Unlock()
	if run.rec.text != nil {
		return agent.EventText
	}
	return run.rec.last
}

func (rc *recorder) emit(ev agent.Event) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.closed {
		return
	}
	if ev.Kind == agent.EventText {
		if rc.text == nil {
			cp := ev
			rc.text = &cp
		} else {
			rc.text.Text += ev.Text
		}
		if len(rc.text.Text) >= maxGatheredText {
			rc.number(*rc.text)
			rc.text = nil
		}
		rc.arm()
		return
	}
	rc.endText()
	rc.number(ev)
	if ev.Kind == agent.EventDone || ev.Kind == agent.EventError || ev.Kind == agent.EventPause {
		rc.store()
		return
	}
	rc.arm()
}

// endText numbers the gathered text, if any; rc.mu is held.
func (rc *recorder) endText() {
	if rc.text != nil {
		rc.number(*rc.text)
		rc.text = nil
	}
}

// number gives ev the next number, sends it to the sink and adds it to
// the batch; rc.mu is held.
func (rc *recorder) number(ev agent.Event) {
	data := encode(ev)
	rc.seq++
	rc.last = ev.Kind
	if rc.sink != nil {
		rc.sink(Event{Seq: rc.seq, Kind: ev.Kind, Data: data})
	}
	rc.batch = append(rc.batch, store.TurnEvent{Seq: rc.seq, Kind: string(ev.Kind), Data: data, CreatedAt: rc.reg.cfg.Now().UTC()})
	rc.bytes += len(data)
	if rc.bytes >= maxBatchBytes || len(rc.batch) >= store.MaxTurnEventsAppend {
		rc.store()
	}
}

// arm starts the flush timer unless it runs; rc.mu is held.
func (rc *recorder) arm() {
	if rc.timer == nil {
		rc.gen++
		gen := rc.gen
		rc.timer = time.AfterFunc(rc.reg.cfg.TextFlush, func() { rc.flush(gen) })
	}
}

// flush is the timer armed as gen: it ends the gathered text and stores
// the batch. A timer stopped while its call waited for the lock does
// nothing.
func (rc *recorder) flush(gen uint64) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if gen != rc.gen || rc.closed {
		return
	}
	rc.timer = nil
	rc.endText()
	rc.store()
}

// store writes the batch in one append and empties it; rc.mu is held.
// An append that fails is tried once more; failing again, it is logged
// and the recording stops (failed): the live stream goes on, and readers
// on other replicas see the stream end after the last stored event,
// never a gap.
func (rc *recorder) store() {
	if rc.timer != nil {
		rc.timer.Stop()
		rc.timer = nil
		rc.gen++
	}
	if len(rc.batch) == 0 {
		return
	}
	batch := rc.batch
	rc.batch, rc.bytes = nil, 0
	if rc.failed {
		return
	}
	var err error
	for range 2 {
		if err = rc.append(batch); err == nil {
			return
		}
	}
	rc.failed = true
	rc.reg.cfg.Logger.Error("record a turn's events; the rest of its stream is not recorded", "conversation", rc.sr.ConversationID, "turn", rc.sr.TurnID, "err", err)
}

// append stores batch, detached from the turn's context: the events of a
// cancelled turn (its done above all) are recorded too.
func (rc *recorder) append(batch []store.TurnEvent) error {
	ctx, cancel := context.WithTimeout(context.Background(), claimTimeout)
	defer cancel()
	return rc.reg.cfg.Events.AppendTurnEvents(ctx, rc.sr.OrgID, rc.sr.ConversationID, rc.sr.TurnID, batch)
}

// close stores what is gathered and records nothing more.
func (rc *recorder) close() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.closed {
		return
	}
	rc.endText()
	rc.store()
	rc.closed = true
}

// encode is ev's JSON as recorded and streamed, at most
// store.MaxTurnEventData bytes: an event that cannot be encoded becomes
// an error event saying so, and one too large keeps its kind and ids with
// its content replaced by a note (the transcript has it whole).
func encode(ev agent.Event) []byte {
	data, err := json.Marshal(ev)
	if err != nil || strings.ContainsAny(string(ev.Kind), "\r\n") {
		data, _ = json.Marshal(agent.Event{Kind: agent.EventError, ConversationID: ev.ConversationID, TurnID: ev.TurnID,
			Error: "an event could not be encoded"})
		return data
	}
	if len(data) <= store.MaxTurnEventData {
		return data
	}
	const note = "(too large to stream; the conversation's messages hold it whole)"
	small := agent.Event{Kind: ev.Kind, ConversationID: ev.ConversationID, TurnID: ev.TurnID, Stop: ev.Stop}
	switch {
	case ev.Result != nil:
		small.Result = &agent.Result{CallID: ev.Result.CallID, Name: ev.Result.Name, Content: note, IsError: ev.Result.IsError, Ref: ev.Result.Ref}
	case ev.Call != nil:
		c := *ev.Call
		c.Args, c.Signature = json.RawMessage(`{}`), nil
		small.Call, small.Text = &c, note
	default:
		small.Text = note
	}
	data, _ = json.Marshal(small)
	return data
}
