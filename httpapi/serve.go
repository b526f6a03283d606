package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/quiverhq/quiver/netguard"
)

// ServeConfig is how Serve runs a server and stops it. The zero value
// gives running requests no time to finish and runs nothing beside them.
type ServeConfig struct {
	// Grace is how long the requests running when ctx ends (turns) may
	// take to finish before they are cancelled.
	Grace time.Duration
	// Background runs beside the server (sweeps, connection pools)
	// under the requests' context: it starts before the first request,
	// its context ends when the requests are cancelled, and Serve
	// returns only once it has returned. Nil runs nothing.
	Background func(ctx context.Context)
	// Stopping is called once ctx has ended, before shutdown begins (to
	// tell the operator); nil calls nothing.
	Stopping func()
	// Limits bound the connections (netguard.NewServer); zero fields
	// take their defaults.
	Limits netguard.ServerLimits
}

// Serve serves h on ln until ctx ends, then shuts down gracefully: new
// connections are refused, the requests already running get cfg.Grace to
// finish, and are then cancelled (their context ends, so a turn records
// itself as interrupted) and given a few seconds more to write that down
// before their connections are closed. Requests' contexts do not end
// with ctx; only this shutdown ends them.
//
// It returns nil after a shutdown, or the error of the HTTP server
// prefixed "serve: " when serving fails first; either way ln is closed
// and cfg.Background has returned.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, cfg ServeConfig) error {
	requests, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	srv := netguard.NewServer(h, cfg.Limits)
	srv.BaseContext = func(net.Listener) context.Context { return requests }
	bgDone := make(chan struct{})
	go func() {
		defer close(bgDone)
		if cfg.Background != nil {
			cfg.Background(requests)
		}
	}()
	// What the background work uses (the store) is closed after this
	// returns, so it ends first.
	defer func() { cancel(); <-bgDone }()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	if cfg.Stopping != nil {
		cfg.Stopping()
	}
	err := shutdown(ctx, srv, cfg.Grace, cancel)
	<-served // http.ErrServerClosed, once ln is closed
	return err
}

// recordGrace is how long requests cancelled past the grace have to
// record that they were cut short before their connections are closed.
const recordGrace = 5 * time.Second

// shutdown stops srv: it waits up to grace for the running requests,
// then cancels them (cancel ends their context) and waits up to
// recordGrace more before closing what is left. A request past the grace
// is no error; Shutdown's other errors are returned.
func shutdown(ctx context.Context, srv *http.Server, grace time.Duration, cancel context.CancelFunc) error {
	gctx, gcancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
	defer gcancel()
	err := srv.Shutdown(gctx)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	rctx, rcancel := context.WithTimeout(context.Background(), recordGrace)
	defer rcancel()
	srv.Shutdown(rctx)
	srv.Close()
	return nil
}
