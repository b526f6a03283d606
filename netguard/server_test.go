package netguard_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/quiverhq/quiver/netguard"
)

// safety bounds every wait on a connection, so that a missing limit
// fails the test instead of hanging it; the limits under test are far
// shorter.
const safety = 20 * time.Second

// serve serves h under l on loopback until the test ends and returns
// the address.
func serve(t *testing.T, h http.Handler, l netguard.ServerLimits) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := netguard.NewServer(h, l)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// dial opens a connection to addr whose reads give up after safety.
func dial(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.SetReadDeadline(time.Now().Add(safety)); err != nil {
		t.Fatal(err)
	}
	return c, bufio.NewReader(c)
}

func write(t *testing.T, c net.Conn, s string) {
	t.Helper()
	if _, err := io.WriteString(c, s); err != nil {
		t.Fatal(err)
	}
}

// readResponse reads one response from r, its body whole.
func readResponse(t *testing.T, r *bufio.Reader) (int, string) {
	t.Helper()
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return resp.StatusCode, string(b)
}

func ok(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") }

// TestIdleConnectionClosed: a keep-alive connection idle past
// IdleTimeout is closed by the server.
func TestIdleConnectionClosed(t *testing.T) {
	addr := serve(t, http.HandlerFunc(ok), netguard.ServerLimits{IdleTimeout: 20 * time.Millisecond})
	c, r := dial(t, addr)
	write(t, c, "GET / HTTP/1.1\r\nHost: quiver\r\n\r\n")
	if status, body := readResponse(t, r); status != 200 || body != "ok" {
		t.Fatalf("got %d %q", status, body)
	}
	// The connection stays open for another request until the server
	// closes it.
	if _, err := r.ReadByte(); !errors.Is(err, io.EOF) {
		t.Fatalf("idle connection: read gave %v, want EOF (closed by the server)", err)
	}
}

// TestOversizedHeaderIs431: headers past MaxHeaderBytes (the default)
// are refused with 431 before any handler runs.
func TestOversizedHeaderIs431(t *testing.T) {
	ran := false
	addr := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { ran = true; ok(w, r) }), netguard.ServerLimits{})
	c, r := dial(t, addr)
	write(t, c, "GET / HTTP/1.1\r\nHost: quiver\r\nX-Big: "+strings.Repeat("a", 2*netguard.DefaultMaxHeaderBytes)+"\r\n\r\n")
	if status, _ := readResponse(t, r); status != http.StatusRequestHeaderFieldsTooLarge || ran {
		t.Errorf("got %d (handler ran: %v), want 431", status, ran)
	}
}

// TestSlowBodyTimesOut: a body not sent within ReadTimeout fails the
// handler's read.
func TestSlowBodyTimesOut(t *testing.T) {
	addr := serve(t, http.HandlerFunc(readBody), netguard.ServerLimits{ReadTimeout: 20 * time.Millisecond})
	c, r := dial(t, addr)
	write(t, c, "POST / HTTP/1.1\r\nHost: quiver\r\nContent-Length: 10\r\n\r\nab")
	if status, _ := readResponse(t, r); status != http.StatusRequestTimeout {
		t.Errorf("got %d, want the handler's 408", status)
	}
}

// readBody answers 408 when the body cannot be read, else the body.
func readBody(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		w.WriteHeader(http.StatusRequestTimeout)
		return
	}
	w.Write(b)
}

// TestReadTimeoutSparesStreams: once its body is read, a request whose
// response streams on past ReadTimeout keeps its context (an event
// stream is not cut). The proof that the time has passed is a second
// request, started later, whose body deadline fired.
func TestReadTimeoutSparesStreams(t *testing.T) {
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/slow", readBody)
	mux.HandleFunc("/stream", func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		fmt.Fprint(w, "ready\n")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
		if r.Context().Err() != nil {
			fmt.Fprint(w, "cancelled\n")
			return
		}
		fmt.Fprint(w, "alive\n")
	})
	addr := serve(t, mux, netguard.ServerLimits{ReadTimeout: 20 * time.Millisecond})
	sc, sr := dial(t, addr)
	write(t, sc, "POST /stream HTTP/1.1\r\nHost: quiver\r\nContent-Length: 2\r\n\r\nhi")
	resp, err := http.ReadResponse(sr, nil)
	if err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewReader(resp.Body)
	if l, err := lines.ReadString('\n'); l != "ready\n" {
		t.Fatalf("stream: %q, %v", l, err)
	}
	c, r := dial(t, addr)
	write(t, c, "POST /slow HTTP/1.1\r\nHost: quiver\r\nContent-Length: 10\r\n\r\nab")
	if status, _ := readResponse(t, r); status != http.StatusRequestTimeout {
		t.Fatalf("slow body: got %d, want 408", status)
	}
	close(release)
	if l, err := lines.ReadString('\n'); l != "alive\n" {
		t.Errorf("stream after the read timeout: %q, %v", l, err)
	}
}
