package mcpserver

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Shutdown ends every session gracefully: it refuses new work (a new tool
// call is answered "server is shutting down", a new HTTP request gets 503),
// waits until every request already sent has been answered, and then closes
// every session. When ctx ends first, running tool calls are cancelled
// (each is answered with an internal error), the sessions are closed, and
// ctx's error is returned. Stop the listener before calling it; calling it
// twice is harmless.
func (s *Server) Shutdown(ctx context.Context) error {
	var err error
	select {
	case <-s.work.shut():
	case <-ctx.Done():
		err = ctx.Err()
		s.cancelStop()
	}
	for ss := range s.mcp.Sessions() {
		_ = ss.Close()
	}
	return err
}

// inflight counts requests that have been received and not yet answered.
// Counting ends at the transport (an HTTP POST returns once its answers are
// written; over stdio the response is seen being written) because the
// SDK's session Close may close the stream between a handler's return and
// the write of its response.
type inflight struct {
	mu      sync.Mutex
	n       int
	closing bool
	idle    chan struct{} // closed once closing and n == 0
}

func newInflight() *inflight { return &inflight{idle: make(chan struct{})} }

// add counts a request in, unless shut has been called.
func (f *inflight) add() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closing {
		return false
	}
	f.n++
	return true
}

// done counts an answered request out.
func (f *inflight) done() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n--
	if f.closing && f.n == 0 {
		close(f.idle)
	}
}

// shut stops counting new requests in and returns a channel closed once
// every counted request is answered.
func (f *inflight) shut() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.closing {
		f.closing = true
		if f.n == 0 {
			close(f.idle)
		}
	}
	return f.idle
}

func (f *inflight) isClosing() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closing
}

// countingTransport counts every request read from its connection until
// the response to it has been written.
type countingTransport struct {
	mcp.Transport
	work *inflight
}

func (t countingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &countingConn{Connection: c, work: t.work, pending: map[jsonrpc.ID]bool{}}, nil
}

type countingConn struct {
	mcp.Connection
	work    *inflight
	mu      sync.Mutex
	pending map[jsonrpc.ID]bool
}

// Read counts a call in once per id: a client that reuses the id of a
// call still pending gets one count for both, since answers are matched by
// id (counting it twice would leave one count no answer could take out,
// and Shutdown would wait for ever).
func (c *countingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		c.mu.Lock()
		if !c.pending[req.ID] && c.work.add() {
			c.pending[req.ID] = true
		}
		c.mu.Unlock()
	}
	return msg, err
}

func (c *countingConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.answered(resp.ID)
	}
	return err
}

// Close counts out whatever will now never be answered.
func (c *countingConn) Close() error {
	err := c.Connection.Close()
	c.mu.Lock()
	ids := make([]jsonrpc.ID, 0, len(c.pending))
	for id := range c.pending {
		ids = append(ids, id)
	}
	c.mu.Unlock()
	for _, id := range ids {
		c.answered(id)
	}
	return err
}

func (c *countingConn) answered(id jsonrpc.ID) {
	c.mu.Lock()
	was := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if was {
		c.work.done()
	}
}
