// Package llmtest holds test doubles for models: a scripted in-process
// Model, fake provider servers that speak each provider's real wire format
// over httptest, and one behaviour suite every adapter passes against its
// fake server.
package llmtest

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/turn"
)

// Reply is one scripted model reply. A fake server streams it in the
// provider's wire format; the scripted Model yields it as events.
type Reply struct {
	// Text is streamed as these deltas, in order.
	Text []string
	// ToolCalls are streamed after the text, each one's arguments split
	// into several deltas where the wire format allows.
	ToolCalls []llm.ToolCall
	// Usage is reported at the end.
	Usage llm.Usage
	// Stop overrides the stop reason; empty means tool_calls when there are
	// calls, else end.
	Stop llm.StopReason
	// Fail, when set, answers with this HTTP error instead of a reply.
	Fail *Failure
	// Truncate, when set, cuts the stream off after the first text delta,
	// without the provider's end-of-stream marker.
	Truncate bool
}

// Failure is an HTTP error answer.
type Failure struct {
	Status int
	// RetryAfter is sent as the Retry-After header when non-empty.
	RetryAfter string
	// Kind selects the provider's error body for that kind of failure
	// (context length, auth, ...); the fake maps it to the real body.
	Kind    llm.ErrorKind
	Message string
}

// StopReason returns the reply's stop reason.
func (r Reply) StopReason() llm.StopReason {
	switch {
	case r.Stop != "":
		return r.Stop
	case len(r.ToolCalls) > 0:
		return llm.StopToolCalls
	}
	return llm.StopEnd
}

// Seen is one request a fake server received, decoded back to neutral form
// by the fake, with the headers it came with.
type Seen struct {
	Header http.Header
	Req    llm.Request
	// Raw is the request body as received.
	Raw json.RawMessage
}

// Fake is a provider's fake server: it answers successive requests with the
// scripted replies, in the provider's wire format, and decodes each request.
type Fake interface {
	// Name is the provider name ("openai", ...).
	Name() string
	// Handler answers requests: respond records each decoded request and
	// returns the reply to stream for it.
	Handler(t *testing.T, respond func(Seen) Reply) http.Handler
}

// Server is a running fake provider server.
type Server struct {
	URL string
	ts  *httptest.Server

	mu      sync.Mutex
	replies []Reply
	seen    []Seen
	// reply, when set, answers each request from the request itself
	// instead of from the script.
	reply func(llm.Request) Reply
}

// Start starts fake on loopback answering with replies in order; a request
// beyond the script fails the test. The server closes with the test.
func Start(t *testing.T, fake Fake, replies ...Reply) *Server {
	t.Helper()
	s := StartServer(t, fake, replies...)
	t.Cleanup(s.Close)
	return s
}

// StartServer is Start without tying the server's life to t: the caller
// closes it (benchmarks that count goroutines after shutdown).
func StartServer(t *testing.T, fake Fake, replies ...Reply) *Server {
	s := &Server{replies: replies}
	s.ts = httptest.NewServer(fake.Handler(t, s.respond(t)))
	s.URL = s.ts.URL
	return s
}

// StartFunc starts fake answering every request with reply(request), for
// many concurrent conversations whose next reply depends on their own
// history. The caller closes the server.
func StartFunc(t *testing.T, fake Fake, reply func(llm.Request) Reply) *Server {
	s := &Server{reply: reply}
	s.ts = httptest.NewServer(fake.Handler(t, s.respond(t)))
	s.URL = s.ts.URL
	return s
}

func (s *Server) respond(t *testing.T) func(Seen) Reply {
	next := s.next(t)
	return func(seen Seen) Reply {
		s.record(seen)
		if s.reply != nil {
			return s.reply(seen.Req)
		}
		return next()
	}
}

// Close shuts the server down, closing its connections.
func (s *Server) Close() {
	s.ts.CloseClientConnections()
	s.ts.Close()
}

func (s *Server) next(t *testing.T) func() Reply {
	return func() Reply {
		s.mu.Lock()
		defer s.mu.Unlock()
		if len(s.replies) == 0 {
			t.Errorf("fake server: request beyond the script")
			return Reply{Fail: &Failure{Status: 500, Kind: llm.ErrServer, Message: "script exhausted"}}
		}
		r := s.replies[0]
		s.replies = s.replies[1:]
		return r
	}
}

func (s *Server) record(seen Seen) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, seen)
}

// Seen returns the requests received so far.
func (s *Server) Seen() []Seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Seen(nil), s.seen...)
}

// Model is a scripted in-process llm.Model: each Stream call answers with
// the next reply. It records requests. Safe for concurrent use.
type Model struct {
	// ModelRef is what Ref returns ("provider:model").
	ModelRef string
	// Caps is what Capabilities reports; the zero value reports none, not
	// even tools.
	Caps turn.Capabilities
	// Refuse, when set, is CheckTool's answer.
	Refuse func(llm.ToolDef) error

	mu       sync.Mutex
	replies  []Reply
	requests []llm.Request
}

// NewModel returns a scripted model with tool support answering replies.
func NewModel(replies ...Reply) *Model {
	return &Model{ModelRef: "fake:scripted", Caps: turn.Capabilities{Tools: true, ParallelTools: true}, replies: replies}
}

// Push appends replies to the script.
func (m *Model) Push(replies ...Reply) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.replies = append(m.replies, replies...)
}

// Requests returns the requests received so far.
func (m *Model) Requests() []llm.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]llm.Request(nil), m.requests...)
}

// Ref implements llm.Model.
func (m *Model) Ref() string { return m.ModelRef }

// Capabilities implements llm.Model.
func (m *Model) Capabilities() turn.Capabilities { return m.Caps }

// CheckTool implements llm.Model.
func (m *Model) CheckTool(d llm.ToolDef) error {
	if m.Refuse != nil {
		return m.Refuse(d)
	}
	return nil
}

// Stream implements llm.Model.
func (m *Model) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		r, ok := m.take(req)
		if !ok {
			yield(llm.Event{}, &llm.Error{Kind: llm.ErrServer, Msg: "scripted model: no reply left"})
			return
		}
		for ev, err := range Events(r) {
			if ctx.Err() != nil {
				yield(llm.Event{}, ctx.Err())
				return
			}
			if !yield(ev, err) || err != nil {
				return
			}
		}
	}
}

func (m *Model) take(req llm.Request) (Reply, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests = append(m.requests, req)
	if len(m.replies) == 0 {
		return Reply{}, false
	}
	r := m.replies[0]
	m.replies = m.replies[1:]
	return r, true
}

// Events is the neutral event stream a reply stands for: what an adapter
// must produce from the fake server's wire format.
func Events(r Reply) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		if r.Fail != nil {
			yield(llm.Event{}, &llm.Error{Kind: r.Fail.Kind, Status: r.Fail.Status, Msg: r.Fail.Message})
			return
		}
		for i, d := range r.Text {
			if !yield(llm.Event{Kind: llm.EventText, Text: d}, nil) {
				return
			}
			if r.Truncate && i == 0 {
				yield(llm.Event{}, &llm.Error{Kind: llm.ErrServer, Msg: "stream truncated"})
				return
			}
		}
		for _, c := range r.ToolCalls {
			if !yield(llm.Event{Kind: llm.EventToolCallStart, ToolCall: llm.ToolCall{ID: c.ID, Name: c.Name}}, nil) ||
				!yield(llm.Event{Kind: llm.EventToolCall, ToolCall: c}, nil) {
				return
			}
		}
		if !yield(llm.Event{Kind: llm.EventUsage, Usage: r.Usage}, nil) {
			return
		}
		yield(llm.Event{Kind: llm.EventDone, Stop: r.StopReason()}, nil)
	}
}

// Call is a convenience for scripts: a tool call with JSON arguments.
func Call(id, name string, args any) llm.ToolCall {
	b, err := json.Marshal(args)
	if err != nil {
		panic(fmt.Sprintf("llmtest.Call: %v", err))
	}
	return llm.ToolCall{ID: id, Name: name, Args: b}
}
