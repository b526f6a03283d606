package mcpclient

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestPoolClosedDuringConnect: a connect that finishes after the pool
// closed closes its connection instead of leaking it into a closed pool.
func TestPoolClosedDuringConnect(t *testing.T) {
	release, started := make(chan struct{}), make(chan struct{})
	closed := make(chan struct{})
	conn := &Conn{cancel: func() { close(closed) }}
	p := newPool(func(context.Context, poolKey, Target) (*Conn, error) {
		close(started)
		<-release
		return conn, nil
	}, time.Now, time.Minute, time.Minute)
	got := make(chan error, 1)
	go func() {
		_, err := p.get(context.Background(), poolKey{id: "a"}, Target{}, func(err error) string { return err.Error() })
		got <- err
	}()
	<-started // the connect is in flight
	p.closeAll()
	close(release)
	if err := <-got; !errors.Is(err, errPoolClosed) {
		t.Fatalf("get after close: %v", err)
	}
	<-closed // the late connection was closed
	if p.live() != 0 {
		t.Fatalf("%d live connections in a closed pool", p.live())
	}
	if _, ok := p.failed["a"]; ok {
		t.Fatal("closing started a cooldown")
	}
}

// TestPoolDropDuringConnect: disabling or removing a server while its
// connect runs closes the new connection instead of pooling it.
func TestPoolDropDuringConnect(t *testing.T) {
	release, started := make(chan struct{}), make(chan struct{})
	closed := make(chan struct{})
	conn := &Conn{cancel: func() { close(closed) }}
	p := newPool(func(context.Context, poolKey, Target) (*Conn, error) {
		close(started)
		<-release
		return conn, nil
	}, time.Now, time.Minute, time.Minute)
	got := make(chan error, 1)
	go func() {
		_, err := p.get(context.Background(), poolKey{id: "a"}, Target{}, func(err error) string { return err.Error() })
		got <- err
	}()
	<-started
	p.drop("a")
	close(release)
	if err := <-got; !errors.Is(err, errPoolClosed) {
		t.Fatalf("get after drop: %v", err)
	}
	<-closed
	if p.live() != 0 {
		t.Fatalf("%d live connections after the drop", p.live())
	}
}
