package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/quiverhq/quiver/netguard"
)

// EndpointPath is where RunHTTP serves the Streamable HTTP handler.
const EndpointPath = "/mcp"

// CheckListen reports whether the Streamable HTTP server may listen on
// addr: it must be host:port with a port from 0 to 65535, and its host
// pass netguard.CheckListenHost (unless public, a loopback address or
// "localhost"), so that nothing beyond this machine reaches the tools by
// default. Any other host, or none (every interface), gives an error
// wrapping netguard.ErrNotLoopback.
func CheckListen(addr string, public bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not host:port", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("port %q is not a number from 0 to 65535", port)
	}
	return netguard.CheckListenHost(host, public)
}

// RunStdio serves one session on r and w (see ServeStdio) until the
// client closes r, or until ctx ends: then it shuts down gracefully,
// answering the calls already sent within grace (the calls still running
// after it are cancelled, which is logged), and returns. Its error is
// ServeStdio's.
func (s *Server) RunStdio(ctx context.Context, r io.Reader, w io.Writer, grace time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- s.ServeStdio(context.Background(), r, w) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	s.shutdownWithin(grace)
	return <-done
}

// RunHTTP serves Streamable HTTP under cfg (see Handler) at EndpointPath
// on ln until ctx ends; then it stops accepting connections, answers the
// requests already sent within grace, closes the sessions and returns
// nil. cfg must validate (HTTPConfig.Validate); its Limits bound the
// connections. The error is the HTTP
// server's, unwrapped, when serving fails; ln is closed on return.
func (s *Server) RunHTTP(ctx context.Context, ln net.Listener, cfg HTTPConfig, grace time.Duration) error {
	mux := http.NewServeMux()
	mux.Handle(EndpointPath, s.Handler(cfg))
	hs := netguard.NewServer(mux, cfg.Limits)
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	gctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	stopped := make(chan error, 1)
	go func() { stopped <- hs.Shutdown(gctx) }()
	s.shutdown(gctx)
	if err := <-stopped; err != nil {
		hs.Close()
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// shutdownWithin shuts s down, waiting at most grace for the calls
// already sent.
func (s *Server) shutdownWithin(grace time.Duration) {
	gctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	s.shutdown(gctx)
}

// shutdown is Shutdown with its error logged: the calls cancelled when
// ctx ended first.
func (s *Server) shutdown(ctx context.Context) {
	if err := s.Shutdown(ctx); err != nil {
		s.cfg.Logger.Warn("mcp serve: calls cancelled at shutdown", "error", err)
	}
}
