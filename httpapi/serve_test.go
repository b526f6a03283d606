package httpapi_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/netguard"
)

// served is a running httpapi.Serve: its address, the cancel of its ctx,
// the channel closed when Stopping is called, the one closed when
// Background's context has ended, and the one Serve's error arrives on.
type served struct {
	url      string
	stop     context.CancelFunc
	stopping chan struct{}
	bgEnded  chan struct{}
	done     chan error
}

// startServe runs httpapi.Serve of h on a loopback port with grace.
func startServe(t *testing.T, h http.Handler, grace time.Duration) served {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s := served{url: "http://" + ln.Addr().String(), stop: cancel,
		stopping: make(chan struct{}), bgEnded: make(chan struct{}), done: make(chan error, 1)}
	go func() {
		s.done <- httpapi.Serve(ctx, ln, h, httpapi.ServeConfig{
			Grace:      grace,
			Background: func(ctx context.Context) { <-ctx.Done(); close(s.bgEnded) },
			Stopping:   func() { close(s.stopping) },
		})
	}()
	return s
}

// getBody sends GET url and returns the body, or the error.
func getBody(url string) (string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// isClosed reports whether ch is closed, without waiting.
func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestServeLetsRunningRequestsFinish: a request running when ctx ends
// finishes within the grace, its context still live, and the background
// work runs until it has; then Serve returns nil.
func TestServeLetsRunningRequestsFinish(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	reqErr := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-release
		reqErr <- r.Context().Err()
		io.WriteString(w, "done")
	})
	s := startServe(t, h, time.Hour)
	body := make(chan string, 1)
	go func() {
		b, err := getBody(s.url)
		if err != nil {
			b = err.Error()
		}
		body <- b
	}()
	<-started
	s.stop()
	<-s.stopping
	if isClosed(s.bgEnded) {
		t.Error("the background work ended while a request was still running")
	}
	close(release)
	if got := <-body; got != "done" {
		t.Errorf("the running request got %q, want done", got)
	}
	if err := <-reqErr; err != nil {
		t.Errorf("the running request's context ended with ctx: %v", err)
	}
	if err := <-s.done; err != nil {
		t.Errorf("Serve = %v, want nil", err)
	}
	if !isClosed(s.bgEnded) {
		t.Error("Serve returned before the background work ended")
	}
}

// TestServeCancelsRequestsPastGrace: a request still running when the
// grace is over has its context cancelled, and Serve returns nil once it
// has returned.
func TestServeCancelsRequestsPastGrace(t *testing.T) {
	started := make(chan struct{})
	reqErr := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-r.Context().Done()
		reqErr <- r.Context().Err()
	})
	s := startServe(t, h, 0)
	go getBody(s.url)
	<-started
	s.stop()
	if err := <-s.done; err != nil {
		t.Errorf("Serve = %v, want nil", err)
	}
	select {
	case err := <-reqErr:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the request's context ended with %v, want context.Canceled", err)
		}
	default:
		t.Error("Serve returned before the cancelled request did")
	}
	if !isClosed(s.bgEnded) {
		t.Error("Serve returned before the background work ended")
	}
}

// TestServeFailing: a listener that cannot accept makes Serve return the
// server's error, prefixed "serve: ", after the background work ended;
// Stopping is not called.
func TestServeFailing(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	bgEnded, stopped := false, false
	err = httpapi.Serve(context.Background(), ln, http.NotFoundHandler(), httpapi.ServeConfig{
		Background: func(ctx context.Context) { <-ctx.Done(); bgEnded = true },
		Stopping:   func() { stopped = true },
	})
	if err == nil || !strings.HasPrefix(err.Error(), "serve: ") || !errors.Is(err, net.ErrClosed) {
		t.Errorf("Serve = %v, want serve: ... wrapping net.ErrClosed", err)
	}
	if !bgEnded || stopped {
		t.Errorf("background ended %t, Stopping called %t; want true, false", bgEnded, stopped)
	}
}

// TestServeZeroConfig: with no background work and no Stopping, Serve
// stops when ctx ends and closes the listener.
func TestServeZeroConfig(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := httpapi.Serve(ctx, ln, http.NotFoundHandler(), httpapi.ServeConfig{}); err != nil {
		t.Errorf("Serve = %v, want nil", err)
	}
	if _, err := ln.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Accept after Serve = %v, want net.ErrClosed", err)
	}
}

// TestServeLimits: Serve bounds its connections by ServeConfig.Limits
// (netguard.NewServer, tested there): an idle keep-alive connection is
// closed after IdleTimeout, and headers past MaxHeaderBytes get 431.
func TestServeLimits(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })
	go func() {
		done <- httpapi.Serve(ctx, ln, h, httpapi.ServeConfig{Limits: netguard.ServerLimits{IdleTimeout: 20 * time.Millisecond}})
	}()
	defer func() { cancel(); <-done }()
	// get sends GET / with header on a new connection and returns the
	// status and the connection's reader; reads give up after 20s, so a
	// missing limit fails rather than hangs.
	get := func(header string) (int, *bufio.Reader) {
		t.Helper()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.SetReadDeadline(time.Now().Add(20 * time.Second))
		if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: quiver\r\n"+header+"\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, br
	}
	status, br := get("X-Small: a")
	if status != http.StatusOK {
		t.Fatalf("status %d", status)
	}
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Errorf("idle keep-alive connection: read gave %v, want EOF (closed by the server)", err)
	}
	if status, _ := get("X-Big: " + strings.Repeat("a", 100<<10)); status != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("100 KiB of headers: status %d, want 431", status)
	}
}
