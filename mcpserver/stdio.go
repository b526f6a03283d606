package mcpserver

import (
	"context"
	"errors"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServeStdio serves one MCP session over newline-delimited JSON-RPC on r and
// w (a process's stdin and stdout), which is one conversation. It returns
// nil when the client closes r, when Shutdown closes the session (the
// graceful way to stop), or when ctx ends (which closes the session at
// once); other errors are the transport's.
func (s *Server) ServeStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	// The reader is wrapped so that closing the session can unblock a read
	// that r itself (os.Stdin) would never give up.
	pr, pw := io.Pipe()
	go func() {
		_, err := io.Copy(pw, r)
		pw.CloseWithError(err)
	}()
	t := countingTransport{&mcp.IOTransport{Reader: pr, Writer: nopWriteCloser{w}}, s.work}
	ss, err := s.mcp.Connect(ctx, t, nil)
	if err != nil {
		return err
	}
	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }()
	select {
	case err = <-ended:
	case <-ctx.Done():
		err = ss.Close()
		<-ended
	}
	pr.Close()
	// The session ended as asked: the client closed r, or the server closed
	// the session (the error then only says so).
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) ||
		errors.Is(err, io.ErrClosedPipe) || ctx.Err() != nil || s.work.isClosing() {
		return nil
	}
	return err
}

// nopWriteCloser leaves closing w to its owner.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
