package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
)

// The pinned model replies (docs/bench.md, "The workload"). A request
// whose last message is not a tool result is answered with toolReply, one
// calculate call; one that ends with the tool result, with textReply.
var (
	// toolArgs is the calculate call's arguments, streamed in three pieces.
	toolArgs = []string{`{"expre`, `ssion":"6`, ` * 7"}`}
	// textDeltas is the final answer, streamed as eight content deltas.
	textDeltas = []string{"The ", "result ", "of ", "6 * 7 ", "is ", "42", ", as ", "calculated."}
)

// FakeModel is the pinned fake of OpenAI's Chat Completions endpoint that
// quiver bench runs as a process of its own ("quiver bench fake-model"),
// so that the CPU it spends is not counted as Quiver's. It answers every
// request with the same pre-rendered chunk streams (the real wire format:
// a role chunk, deltas, a finish chunk, a usage chunk, "data: [DONE]"),
// and keeps the first request it saw for the baseline to replay. Safe for
// concurrent use.
type FakeModel struct {
	srv       *http.Server
	toolReply [][]byte
	textReply [][]byte
	conns     connSet

	requests atomic.Int64
	mu       sync.Mutex
	first    []byte
}

// NewFakeModel returns a fake model, not yet serving.
func NewFakeModel() *FakeModel {
	m := &FakeModel{toolReply: renderToolReply(), textReply: renderTextReply()}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /chat/completions", m.complete)
	mux.HandleFunc("POST /v1/chat/completions", m.complete)
	mux.HandleFunc("GET /bench/first-request", m.firstRequest)
	mux.HandleFunc("GET /bench/requests", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, m.requests.Load())
	})
	mux.HandleFunc("POST /bench/close-idle", func(w http.ResponseWriter, _ *http.Request) {
		m.conns.closeIdle()
		w.WriteHeader(http.StatusNoContent)
	})
	m.srv = &http.Server{Handler: mux, ConnState: m.conns.track}
	return m
}

// connSet is the connections a server has open and the state of each.
// Safe for concurrent use; the zero value is ready.
type connSet struct {
	mu    sync.Mutex
	conns map[net.Conn]http.ConnState
}

// track is an http.Server's ConnState hook.
func (s *connSet) track(c net.Conn, st http.ConnState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st == http.StateClosed || st == http.StateHijacked {
		delete(s.conns, c)
		return
	}
	if s.conns == nil {
		s.conns = make(map[net.Conn]http.ConnState)
	}
	s.conns[c] = st
}

// closeIdle closes every connection not serving a request: the idle ones
// and the new ones that never carried one. The client's transport then
// ends their goroutines. New ones matter: a client's transport dials a
// spare connection when a request waits, and pools it unused when another
// one frees up first; http.Server.SetKeepAlivesEnabled(false) leaves such
// a connection open for its first 5 seconds, and the measured server kept
// its two goroutines (issue 16: the 4 goroutines "left" after a burst).
func (s *connSet) closeIdle() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c, st := range s.conns {
		if st == http.StateNew || st == http.StateIdle {
			c.Close()
			delete(s.conns, c)
		}
	}
}

// Serve answers on ln until ctx ends.
func (m *FakeModel) Serve(ctx context.Context, ln net.Listener) error {
	go func() {
		<-ctx.Done()
		m.srv.Close()
	}()
	if err := m.srv.Serve(ln); err != http.ErrServerClosed {
		return fmt.Errorf("fake model: %w", err)
	}
	return nil
}

// complete answers one Chat Completions request with a pinned reply.
func (m *FakeModel) complete(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var req struct {
		Messages []struct {
			Role string `json:"role"`
		} `json:"messages"`
	}
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if err != nil || len(req.Messages) == 0 {
		http.Error(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	m.requests.Add(1)
	reply := m.toolReply
	if req.Messages[len(req.Messages)-1].Role == "tool" {
		reply = m.textReply
	} else {
		m.keepFirst(body)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	f, _ := w.(http.Flusher)
	for _, ev := range reply {
		if _, err := w.Write(ev); err != nil {
			return
		}
		if f != nil {
			f.Flush() // one chunk per write, as a model streams
		}
	}
}

func (m *FakeModel) keepFirst(body []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.first == nil {
		m.first = body
	}
}

// firstRequest writes the body of the first request answered with the
// tool call (404 before there is one).
func (m *FakeModel) firstRequest(w http.ResponseWriter, _ *http.Request) {
	m.mu.Lock()
	first := m.first
	m.mu.Unlock()
	if first == nil {
		http.NotFound(w, nil)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(first)
}

// chunkWriter renders chat.completion.chunk events, one slice each.
type chunkWriter struct{ events [][]byte }

func (c *chunkWriter) chunk(choices []any, usage any) {
	b, err := json.Marshal(map[string]any{
		"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1700000000,
		"model": "bench-model", "system_fingerprint": "fp_bench", "choices": choices, "usage": usage,
	})
	if err != nil {
		panic(err) // fixed values: cannot fail
	}
	c.events = append(c.events, []byte("data: "+string(b)+"\n\n"))
}

func (c *chunkWriter) delta(delta map[string]any, finish any) {
	c.chunk([]any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}}, nil)
}

func (c *chunkWriter) end(finish string) [][]byte {
	c.delta(map[string]any{}, finish)
	c.chunk([]any{}, map[string]any{"prompt_tokens": 900, "completion_tokens": 12, "total_tokens": 912})
	c.events = append(c.events, []byte("data: [DONE]\n\n"))
	return c.events
}

// renderToolReply is the calculate call: a role chunk, the call's id and
// name, its arguments in three pieces, finish, usage.
func renderToolReply() [][]byte {
	var c chunkWriter
	c.delta(map[string]any{"role": "assistant", "content": ""}, nil)
	c.delta(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": "call_1", "type": "function",
		"function": map[string]any{"name": "calculate", "arguments": ""}}}}, nil)
	for _, a := range toolArgs {
		c.delta(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": a}}}}, nil)
	}
	return c.end("tool_calls")
}

// renderTextReply is the answer: a role chunk, eight content deltas,
// finish, usage.
func renderTextReply() [][]byte {
	var c chunkWriter
	c.delta(map[string]any{"role": "assistant", "content": ""}, nil)
	for _, d := range textDeltas {
		c.delta(map[string]any{"content": d}, nil)
	}
	return c.end("stop")
}
