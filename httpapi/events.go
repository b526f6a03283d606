package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/quiverhq/quiver/agent"
)

var reflectEvent = reflect.TypeFor[agent.Event]()

// streamWriteTimeout bounds each write to a client: a stalled reader
// fails the write (the turn is then cancelled with the request) instead
// of blocking the turn.
const streamWriteTimeout = 10 * time.Second

// eventStream writes Server-Sent Events. The response starts (200,
// text/event-stream) with the first event or heartbeat, so errors before
// it can still be JSON with their status. Safe for concurrent use; write
// errors are ignored (a client that left cancels the request context).
type eventStream struct {
	mu      sync.Mutex
	w       http.ResponseWriter
	rc      *http.ResponseController
	started bool
	closed  bool
	seq     int
	last    agent.EventKind
	// turnID is the last turn id an event carried.
	turnID string
}

func newEventStream(w http.ResponseWriter) *eventStream {
	return &eventStream{w: w, rc: http.NewResponseController(w)}
}

// send writes one event (the Engine's emit); nothing after close.
func (es *eventStream) send(ev agent.Event) {
	data, err := json.Marshal(ev)
	if err != nil || strings.ContainsAny(string(ev.Kind), "\r\n") {
		ev = agent.Event{Kind: agent.EventError, ConversationID: ev.ConversationID, TurnID: ev.TurnID, Error: "an event could not be encoded"}
		data, _ = json.Marshal(ev)
	}
	es.mu.Lock()
	defer es.mu.Unlock()
	if es.closed {
		return
	}
	if ev.TurnID != "" {
		es.turnID = ev.TurnID
	}
	es.event(ev.Kind, data)
}

// event writes an event; es.mu is held.
func (es *eventStream) event(kind agent.EventKind, data []byte) {
	es.begin()
	es.seq++
	es.last = kind
	es.write(fmt.Appendf(nil, "id: %d\nevent: %s\ndata: %s\n\n", es.seq, kind, data))
}

// begin sends the response header once; es.mu is held.
func (es *eventStream) begin() {
	if es.started {
		return
	}
	es.started = true
	h := es.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	es.w.WriteHeader(http.StatusOK)
}

func (es *eventStream) write(b []byte) {
	_ = es.rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
	if _, err := es.w.Write(b); err == nil {
		_ = es.rc.Flush()
	}
}

// heartbeats sends an SSE comment every d until the returned stop is
// called (d <= 0: never), so proxies keep an idle stream open.
func (es *eventStream) heartbeats(d time.Duration) (stop func()) {
	if d <= 0 {
		return func() {}
	}
	quit, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				es.mu.Lock()
				if !es.closed {
					es.begin()
					es.write([]byte(": keep-alive\n\n"))
				}
				es.mu.Unlock()
			}
		}
	}()
	return func() { close(quit); <-finished }
}

// close ends the stream after the turn: with e non-nil, an error event
// unless the last event already was done or error. It reports false when
// nothing was sent yet, so the caller answers e as a JSON error instead.
func (es *eventStream) close(conversationID string, e *Error) bool {
	es.mu.Lock()
	defer es.mu.Unlock()
	es.closed = true
	if !es.started {
		if e != nil {
			return false
		}
		es.begin()
		return true
	}
	if e != nil && es.last != agent.EventDone && es.last != agent.EventError {
		data, _ := json.Marshal(agent.Event{Kind: agent.EventError, ConversationID: conversationID, Error: e.Detail.Message})
		es.event(agent.EventError, data)
	}
	return true
}

// cancelled ends the stream of a turn cancelled on request: with a done
// event whose stop is "cancelled" unless the engine already sent done.
// A stream with nothing sent yet starts with it.
func (es *eventStream) cancelled(conversationID string) {
	es.mu.Lock()
	defer es.mu.Unlock()
	es.closed = true
	if es.last == agent.EventDone {
		return
	}
	data, _ := json.Marshal(agent.Event{Kind: agent.EventDone, ConversationID: conversationID, TurnID: es.turnID, Stop: agent.StopCancelled})
	es.event(agent.EventDone, data)
}
