// Package turnstream reads a turn's server-sent event stream as Quiver's
// HTTP API sends it (POST …/messages, GET …/events): one event at a time,
// or to its end as a Turn. The replica harness and quiver bench read
// turns through it.
package turnstream

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/quiverhq/quiver/agent"
)

// Event is one server-sent event of a turn's stream: its SSE fields and
// its data decoded as the agent's event.
type Event struct {
	// ID is the event's id: field, what a client resuming the stream sends
	// as Last-Event-ID; "" when it had none.
	ID string
	// Name is its event: field ("" when none).
	Name string
	// Data is its data, as sent.
	Data []byte
	agent.Event
}

// Stream is an open event stream, read one event at a time. It is not
// safe for concurrent use; Close may be called from any goroutine to cut
// it (a client that drops the connection).
type Stream struct {
	resp *http.Response
	br   *bufio.Reader
}

// New reads resp's body as an event stream; closing the stream closes
// the body.
func New(resp *http.Response) *Stream {
	return &Stream{resp: resp, br: bufio.NewReader(resp.Body)}
}

// Header is the stream's response header.
func (s *Stream) Header() http.Header { return s.resp.Header }

// Close closes the connection's body; a later Next fails.
func (s *Stream) Close() error { return s.resp.Body.Close() }

// Next returns the next event, skipping comments (heartbeats). It
// returns io.EOF when the stream ended cleanly between events, and
// io.ErrUnexpectedEOF when it ended inside one.
func (s *Stream) Next() (Event, error) {
	var ev Event
	var data []string
	started := false
	for {
		line, err := s.br.ReadString('\n')
		if err != nil {
			if errors.Is(err, io.EOF) && !started && line == "" {
				return Event{}, io.EOF
			}
			if errors.Is(err, io.EOF) {
				return Event{}, io.ErrUnexpectedEOF
			}
			return Event{}, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if !started {
				continue
			}
			if data == nil {
				ev, started = Event{}, false // fields without data: no event
				continue
			}
			return ev, ev.decode(strings.Join(data, "\n"))
		}
		if strings.HasPrefix(line, ":") {
			continue // a comment: the heartbeat
		}
		started = true
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			ev.ID = value
		case "event":
			ev.Name = value
		case "data":
			data = append(data, value)
		}
	}
}

// decode sets the event's data and decodes it.
func (ev *Event) decode(data string) error {
	ev.Data = []byte(data)
	if err := json.Unmarshal(ev.Data, &ev.Event); err != nil {
		return fmt.Errorf("event %q: %w", data, err)
	}
	return nil
}

// ReadTurn reads the stream to its end and returns the turn. It returns
// an error for an error event, a broken stream, or a stream that ends
// without a done event; the events read so far are in the Turn.
func (s *Stream) ReadTurn() (Turn, error) {
	var t Turn
	var text strings.Builder
	for {
		ev, err := s.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Text = text.String()
			return t, fmt.Errorf("read the stream after %d events: %w", len(t.Events), err)
		}
		t.Events = append(t.Events, ev)
		if ev.TurnID != "" {
			t.ID = ev.TurnID
		}
		switch ev.Kind {
		case agent.EventText:
			text.WriteString(ev.Text)
		case agent.EventDone:
			t.Stop = ev.Stop
		case agent.EventError:
			t.Text = text.String()
			return t, fmt.Errorf("error event: %s", ev.Error)
		}
	}
	t.Text = text.String()
	if n := len(t.Events); n == 0 || t.Events[n-1].Kind != agent.EventDone {
		return t, fmt.Errorf("the stream ended without done (events %v)", t.Kinds())
	}
	return t, nil
}

// Turn is one turn's event stream, read to its end.
type Turn struct {
	// ID is the turn's id, as its events carry it.
	ID string
	// Events are every event, in order.
	Events []Event
	// Text is the text deltas joined.
	Text string
	// Stop is the done event's stop reason ("" without a done event).
	Stop string
}

// Kinds are the events' types, in order.
func (t Turn) Kinds() []string {
	kinds := make([]string, len(t.Events))
	for i, e := range t.Events {
		kinds[i] = string(e.Kind)
	}
	return kinds
}
