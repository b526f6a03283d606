package replicatest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// WireCounter is a TCP proxy on loopback between PostgreSQL clients (the
// replicas) and the server that counts what the clients send, by
// PostgreSQL protocol message: how many statements they run and how many
// round trips that takes, which is what each turn costs the database
// whatever machine it runs on. It reads the protocol in the clear, so the
// URLs it hands out say sslmode=disable. Safe for concurrent use.
type WireCounter struct {
	ln     net.Listener
	target string

	statements atomic.Int64
	roundTrips atomic.Int64
	parses     atomic.Int64
	bytes      atomic.Int64
	conns      sync.WaitGroup

	mu     sync.Mutex
	byText map[string]int64
}

// WireCounts are a WireCounter's totals.
type WireCounts struct {
	// Statements are executions: each Execute of the extended protocol
	// and each simple Query.
	Statements int64
	// RoundTrips are the client's waits for the server: each Sync (which
	// ends a pipeline of Parse, Bind, Execute…) and each simple Query.
	RoundTrips int64
	// Parses are statements prepared (Parse messages): a client that
	// caches its prepared statements sends one per statement text and
	// connection.
	Parses int64
	// Bytes are the bytes the clients sent.
	Bytes int64
}

// Sub is c minus earlier, field by field.
func (c WireCounts) Sub(earlier WireCounts) WireCounts {
	return WireCounts{c.Statements - earlier.Statements, c.RoundTrips - earlier.RoundTrips, c.Parses - earlier.Parses, c.Bytes - earlier.Bytes}
}

// Add is c plus more, field by field.
func (c WireCounts) Add(more WireCounts) WireCounts {
	return WireCounts{c.Statements + more.Statements, c.RoundTrips + more.RoundTrips, c.Parses + more.Parses, c.Bytes + more.Bytes}
}

// Protocol constants (PostgreSQL's frontend/backend protocol, version 3).
const (
	sslRequestCode    = 80877103
	gssEncRequestCode = 80877104
	cancelRequestCode = 80877102
	maxUntypedLen     = 10_000 // a start-up packet is small
	statementKeyLen   = 90
)

// StartWireCounter starts a counter in front of the server of dbURL and
// returns it with dbURL pointed at it (sslmode=disable). It stops when
// tb ends.
func StartWireCounter(tb testing.TB, dbURL string) (*WireCounter, string) {
	tb.Helper()
	u, err := url.Parse(dbURL)
	if err != nil || u.Host == "" {
		tb.Fatalf("replicatest: wire counter: %q is not a postgres:// URL with a host", dbURL)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("replicatest: wire counter: %v", err)
	}
	w := &WireCounter{ln: ln, target: u.Host, byText: map[string]int64{}}
	go w.serve()
	tb.Cleanup(func() { ln.Close(); w.conns.Wait() })
	q := u.Query()
	q.Set("sslmode", "disable")
	u.RawQuery = q.Encode()
	u.Host = ln.Addr().String()
	return w, u.String()
}

// Counts returns the totals so far.
func (w *WireCounter) Counts() WireCounts {
	return WireCounts{w.statements.Load(), w.roundTrips.Load(), w.parses.Load(), w.bytes.Load()}
}

func (w *WireCounter) serve() {
	for {
		client, err := w.ln.Accept()
		if err != nil {
			return
		}
		w.conns.Go(func() { w.proxy(client) })
	}
}

// proxy relays one connection, counting the client's messages; either
// side closing ends both directions.
func (w *WireCounter) proxy(client net.Conn) {
	defer client.Close()
	server, err := net.Dial("tcp", w.target)
	if err != nil {
		return
	}
	defer server.Close()
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(client, server)
		client.Close()
		close(done)
	}()
	_ = w.relayClient(client, server)
	server.Close()
	<-done
}

// relayClient copies the client's messages to the server, counting
// them: the untyped start-up packets first, then typed messages.
func (w *WireCounter) relayClient(client io.Reader, server io.Writer) error {
	for {
		code, err := w.relayUntyped(client, server)
		if err != nil {
			return err
		}
		if code == sslRequestCode || code == gssEncRequestCode {
			continue // the server answers with one byte; the start-up packet follows
		}
		if code == cancelRequestCode {
			return nil
		}
		break // the start-up packet: typed messages follow
	}
	wc := &wireConn{w: w, statements: map[string]string{}, portals: map[string]string{}}
	var head [5]byte
	for {
		if _, err := io.ReadFull(client, head[:]); err != nil {
			return err
		}
		n := int64(binary.BigEndian.Uint32(head[1:])) - 4
		if n < 0 {
			return fmt.Errorf("wire counter: message %q of length %d", head[0], n+4)
		}
		w.count(head[0])
		w.bytes.Add(5 + n)
		if _, err := server.Write(head[:]); err != nil {
			return err
		}
		if !inspected(head[0]) {
			if _, err := io.CopyN(server, client, n); err != nil {
				return err
			}
			continue
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(client, body); err != nil {
			return err
		}
		wc.note(head[0], body)
		if _, err := server.Write(body); err != nil {
			return err
		}
	}
}

// inspected are the messages whose bodies name the statement run: Parse
// (a statement's text), Bind (which statement a portal runs), Execute
// (the portal run) and Query (a simple query's text).
func inspected(typ byte) bool { return typ == 'P' || typ == 'B' || typ == 'E' || typ == 'Q' }

// wireConn follows one connection's prepared statements and portals, to
// count each execution under its statement's text.
type wireConn struct {
	w          *WireCounter
	statements map[string]string // prepared statement name → text
	portals    map[string]string // portal name → statement text
}

// note reads an inspected message's body.
func (c *wireConn) note(typ byte, body []byte) {
	first, rest := cString(body)
	switch typ {
	case 'P':
		text, _ := cString(rest)
		c.statements[first] = text
	case 'B':
		stmt, _ := cString(rest)
		c.portals[first] = c.statements[stmt]
	case 'E':
		c.w.countText(c.portals[first])
	case 'Q':
		c.w.countText(first)
	}
}

// cString splits b after its first NUL-terminated string.
func cString(b []byte) (string, []byte) {
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return string(b), nil
	}
	return string(b[:i]), b[i+1:]
}

// countText counts one execution of the statement text, by its first
// statementKeyLen bytes with white space collapsed.
func (w *WireCounter) countText(text string) {
	key := strings.Join(strings.Fields(text), " ")
	if len(key) > statementKeyLen {
		key = key[:statementKeyLen] + "…"
	}
	if key == "" {
		key = "(unknown statement)"
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.byText[key]++
}

// ByStatement returns how many times each statement ran so far, by its
// text (the first statementKeyLen bytes, white space collapsed).
func (w *WireCounter) ByStatement() map[string]int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.byText)
}

// relayUntyped copies one untyped packet (length, then a code) and
// returns its code.
func (w *WireCounter) relayUntyped(client io.Reader, server io.Writer) (uint32, error) {
	var head [8]byte
	if _, err := io.ReadFull(client, head[:]); err != nil {
		return 0, err
	}
	n := int64(binary.BigEndian.Uint32(head[:4]))
	if n < 8 || n > maxUntypedLen {
		return 0, errors.New("wire counter: not a PostgreSQL start-up packet")
	}
	w.bytes.Add(n)
	if _, err := server.Write(head[:]); err != nil {
		return 0, err
	}
	if _, err := io.CopyN(server, client, n-8); err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint32(head[4:]), nil
}

// count notes one client message by its type byte.
func (w *WireCounter) count(typ byte) {
	switch typ {
	case 'Q':
		w.statements.Add(1)
		w.roundTrips.Add(1)
	case 'E':
		w.statements.Add(1)
	case 'S':
		w.roundTrips.Add(1)
	case 'P':
		w.parses.Add(1)
	}
}
