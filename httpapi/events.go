package httpapi

import (
	"fmt"
	"net/http"
	"reflect"
	"sync"
	"time"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/runs"
)

var reflectEvent = reflect.TypeFor[agent.Event]()

// streamWriteTimeout bounds each write to a client: a stalled reader
// fails the write (the stream stops writing; the turn goes on) instead of
// blocking the turn.
const streamWriteTimeout = 10 * time.Second

// eventStream writes Server-Sent Events. The response starts (200,
// text/event-stream) with the first event or heartbeat, so errors before
// it can still be JSON with their status. Safe for concurrent use. A
// write that fails (the client left, or stalled past streamWriteTimeout)
// ends the writing: nothing more is sent, and the turn goes on.
type eventStream struct {
	mu      sync.Mutex
	w       http.ResponseWriter
	rc      *http.ResponseController
	started bool
	closed  bool
	// broken is set once a write failed.
	broken bool
}

func newEventStream(w http.ResponseWriter) *eventStream {
	return &eventStream{w: w, rc: http.NewResponseController(w)}
}

// recorded writes one recorded event, its number as the SSE id (what a
// reader resumes from with Last-Event-ID); nothing after close.
func (es *eventStream) recorded(ev runs.Event) {
	es.mu.Lock()
	defer es.mu.Unlock()
	if es.closed {
		return
	}
	es.begin()
	es.write(fmt.Appendf(nil, "id: %d\nevent: %s\ndata: %s\n\n", ev.Seq, ev.Kind, ev.Data))
}

// unnumbered writes an event that is not part of the turn's recorded
// stream: no id, so a reader's Last-Event-ID stays on the last recorded
// one.
func (es *eventStream) unnumbered(kind agent.EventKind, data []byte) {
	es.mu.Lock()
	defer es.mu.Unlock()
	if es.closed {
		return
	}
	es.begin()
	es.write(fmt.Appendf(nil, "event: %s\ndata: %s\n\n", kind, data))
}

// open starts the response now (a stream with no error left to answer as
// JSON), so the client sees its headers before the first event.
func (es *eventStream) open() {
	es.mu.Lock()
	defer es.mu.Unlock()
	es.begin()
	if err := es.rc.Flush(); err != nil {
		es.broken = true
	}
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

// write sends b and flushes it; es.mu is held.
func (es *eventStream) write(b []byte) {
	if es.broken {
		return
	}
	_ = es.rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
	if _, err := es.w.Write(b); err != nil {
		es.broken = true
		return
	}
	if err := es.rc.Flush(); err != nil {
		es.broken = true
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

// close ends the stream: nothing is written after it. It reports false
// when nothing was sent yet and e is set, so the caller answers e as a
// JSON error instead; with nothing sent and no error the stream starts
// (an empty 200).
func (es *eventStream) close(e *Error) bool {
	es.mu.Lock()
	defer es.mu.Unlock()
	es.closed = true
	if !es.started {
		if e != nil {
			return false
		}
		es.begin()
	}
	return true
}
