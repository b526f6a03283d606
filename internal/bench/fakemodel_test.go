package bench_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/quiverhq/quiver/internal/bench"
)

// TestFakeModelClosesUnusedConnections: the fake model's close-idle also
// closes a connection that never carried a request, as a client's
// transport leaves in its pool when it dialled a spare that another
// request's connection made unnecessary. http.Server keeps such a
// connection for its first 5 seconds, which kept its client's goroutines
// alive in the measured server: quiver bench counted them as left by the
// burst.
func TestFakeModelClosesUnusedConnections(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- bench.NewFakeModel().Serve(ctx, ln) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Error(err)
		}
	}()
	// Dialled before the client's connection, so accepted (and tracked)
	// before close-idle is served: the listener accepts in order.
	spare, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer spare.Close()
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	resp, err := c.Post("http://"+ln.Addr().String()+"/bench/close-idle", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("close-idle: %s", resp.Status)
	}
	// The connection was closed before close-idle answered; the bound
	// only turns a connection left open into a failure instead of a hang.
	if err := spare.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := spare.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Errorf("read from the unused connection after close-idle: %v, want EOF (closed by the server)", err)
	}
}
