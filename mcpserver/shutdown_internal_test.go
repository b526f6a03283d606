package mcpserver

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// scriptedConn reads the given messages in order and records writes.
type scriptedConn struct {
	mcp.Connection
	in []jsonrpc.Message
}

func (c *scriptedConn) Read(context.Context) (jsonrpc.Message, error) {
	m := c.in[0]
	c.in = c.in[1:]
	return m, nil
}

func (c *scriptedConn) Write(context.Context, jsonrpc.Message) error { return nil }

// TestDuplicateIDCountedOnce: a client that sends a second call with the
// id of one still pending gets both counted once, so the one answer for
// that id leaves nothing in flight and Shutdown does not wait for ever.
func TestDuplicateIDCountedOnce(t *testing.T) {
	id, err := jsonrpc.MakeID(float64(7))
	if err != nil {
		t.Fatal(err)
	}
	other, _ := jsonrpc.MakeID(float64(8))
	call := func(id jsonrpc.ID) *jsonrpc.Request { return &jsonrpc.Request{ID: id, Method: "tools/call"} }
	work := newInflight()
	c := &countingConn{
		Connection: &scriptedConn{in: []jsonrpc.Message{call(id), call(id), call(other)}},
		work:       work, pending: map[jsonrpc.ID]bool{},
	}
	for range 3 {
		if _, err := c.Read(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if work.n != 2 {
		t.Fatalf("in flight after two distinct ids = %d, want 2", work.n)
	}
	for _, ans := range []jsonrpc.ID{id, id, other} {
		if err := c.Write(context.Background(), &jsonrpc.Response{ID: ans}); err != nil {
			t.Fatal(err)
		}
	}
	if work.n != 0 {
		t.Fatalf("in flight after every id was answered = %d, want 0", work.n)
	}
	select {
	case <-work.shut():
	default:
		t.Fatal("shut is not idle with nothing in flight")
	}
}
