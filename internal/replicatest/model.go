package replicatest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
)

// CalcPrefix starts a user message that the default reply answers with a
// calculate tool call on the rest of the message ("calc: 6 * 7"), then,
// once the result is back, with "the result is 42.".
const CalcPrefix = "calc: "

// Model is a fake OpenAI Chat Completions server on loopback, speaking the
// real wire format (llmtest.OpenAI), that every replica of a cluster
// reaches through OPENAI_BASE_URL. Its replies are computed from each
// request (Reply), so any number of conversations on any replica run
// against it at once. Safe for concurrent use.
type Model struct {
	// URL is the server's base URL.
	URL string

	srv *httptest.Server
	// keep says whether requests are recorded (Seen).
	keep atomic.Bool

	mu    sync.Mutex
	reply func(llm.Request) llmtest.Reply
	holds []*Held
	seen  []llmtest.Seen
	count int
}

// StartModel starts a Model answering with Echo; it closes when tb ends.
// The fake reports a request the real API would refuse as a failure of
// tb when tb is a *testing.T; under a benchmark, as a failed turn.
func StartModel(tb testing.TB) *Model {
	tb.Helper()
	m := &Model{reply: Echo}
	m.keep.Store(true)
	t, _ := tb.(*testing.T)
	if t == nil {
		t = &testing.T{} // detached: llmtest reports on a *testing.T
	}
	m.srv = httptest.NewServer(m.hold(llmtest.OpenAI{}.Handler(t, m.respond)))
	m.URL = m.srv.URL
	tb.Cleanup(m.Close)
	return m
}

// Close shuts the server down, closing its connections; it is idempotent.
func (m *Model) Close() {
	m.srv.CloseClientConnections()
	m.srv.Close()
}

// SetReply makes reply answer every request from now on (nil: Echo).
func (m *Model) SetReply(reply func(llm.Request) llmtest.Reply) {
	if reply == nil {
		reply = Echo
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reply = reply
}

// Record sets whether requests are kept for Seen (on by default); a
// benchmark of thousands of turns turns it off.
func (m *Model) Record(on bool) { m.keep.Store(on) }

// Seen returns the requests recorded so far, in arrival order.
func (m *Model) Seen() []llmtest.Seen {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]llmtest.Seen(nil), m.seen...)
}

// Requests is how many requests the server answered or is answering.
func (m *Model) Requests() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.count
}

func (m *Model) respond(s llmtest.Seen) llmtest.Reply {
	m.mu.Lock()
	m.count++
	if m.keep.Load() {
		m.seen = append(m.seen, s)
	}
	reply := m.reply
	m.mu.Unlock()
	return reply(s.Req)
}

// Echo is the default reply: a tool result is answered "the result is
// CONTENT."; a last user message starting with CalcPrefix calls
// calculate with the rest; any other "echo: TEXT", in three deltas.
func Echo(req llm.Request) llmtest.Reply {
	usage := llm.Usage{InputTokens: 900, OutputTokens: 12}
	last := req.Messages[len(req.Messages)-1]
	if last.Role == llm.Tool && len(last.Results) > 0 {
		return llmtest.Reply{Text: []string{"the result ", "is ", last.Results[0].Content + "."}, Usage: usage}
	}
	text := LastUserText(req)
	if expr, ok := strings.CutPrefix(text, CalcPrefix); ok {
		call := llmtest.Call("call_1", "calculate", map[string]string{"expression": expr})
		return llmtest.Reply{ToolCalls: []llm.ToolCall{call}, Usage: usage}
	}
	return llmtest.Reply{Text: []string{"echo", ": ", text}, Usage: usage}
}

// LastUserText is the text of the request's last user message ("" when
// none).
func LastUserText(req llm.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == llm.User {
			return req.Messages[i].Text
		}
	}
	return ""
}

// Held is a model request kept waiting by Model.Hold.
type Held struct {
	mark    string
	arrived chan struct{}
	release chan struct{}
	once    sync.Once
}

// Hold makes the next request whose body contains mark wait, before any
// byte of its answer, until Release is called or its client goes away
// (the replica that sent it stopped or was killed). Use a mark that only
// the request to hold carries: a conversation's later requests repeat its
// earlier messages. mark is matched as JSON carries it, so it may hold
// quotes or non-ASCII text.
func (m *Model) Hold(mark string) *Held {
	h := &Held{mark: jsonString(mark), arrived: make(chan struct{}), release: make(chan struct{})}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.holds = append(m.holds, h)
	return h
}

// Arrived is closed once the held request has arrived.
func (h *Held) Arrived() <-chan struct{} { return h.arrived }

// Release lets the held request be answered; it is idempotent.
func (h *Held) Release() { h.once.Do(func() { close(h.release) }) }

// take removes and returns the first hold whose mark body contains.
func (m *Model) take(body []byte) *Held {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, h := range m.holds {
		if bytes.Contains(body, []byte(h.mark)) {
			m.holds = append(m.holds[:i], m.holds[i+1:]...)
			return h
		}
	}
	return nil
}

// hold wraps the fake: a request a Hold matches waits for its release.
func (m *Model) hold(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if h := m.take(body); h != nil {
			close(h.arrived)
			select {
			case <-h.release:
			case <-r.Context().Done():
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// jsonString is s as a JSON string, for marks inside request bodies,
// which carry message text JSON-escaped.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return strings.Trim(string(b), `"`)
}
