package bench

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
)

// ServeFakeModel is "quiver bench fake-model": the pinned fake model
// (FakeModel) on a new loopback port, printed on stderr, until ctx ends.
func ServeFakeModel(ctx context.Context, stderr io.Writer) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("fake model: %w", err)
	}
	fmt.Fprintf(stderr, "quiver bench fake-model: listening http://%s\n", ln.Addr())
	return NewFakeModel().Serve(ctx, ln)
}

// ServeBaseline is "quiver bench baseline": the Baseline calling the
// model at modelURL and replaying the request in requestFile, on a new
// loopback port, printed on stderr, until ctx ends.
func ServeBaseline(ctx context.Context, stderr io.Writer, modelURL, requestFile string) error {
	first, err := os.ReadFile(requestFile)
	if err != nil {
		return fmt.Errorf("baseline: %w", err)
	}
	b, err := NewBaseline(modelURL, first)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("baseline: %w", err)
	}
	fmt.Fprintf(stderr, "quiver bench baseline: listening http://%s\n", ln.Addr())
	return b.Serve(ctx, ln)
}
