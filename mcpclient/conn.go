package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quiverhq/quiver/netguard"
	"github.com/quiverhq/quiver/secret"
)

// Target is a server to connect to.
type Target struct {
	URL   string
	Token secret.Redacted
}

// Transport names how a connection was made.
const (
	TransportStreamable = "streamable-http"
	TransportSSE        = "sse"
)

// Conn is a live session with one server and the tools it listed. It is
// safe for concurrent use.
type Conn struct {
	session   *mcp.ClientSession
	cancel    context.CancelFunc
	transport string
	server    mcp.Implementation
	// origin is the HTTP transport of the session; nil in tests that build
	// a Conn by hand.
	origin *originTransport

	mu    sync.Mutex
	tools []*mcp.Tool
	// stale is set when the server announced that its tool list changed.
	stale atomic.Bool
	// lastUsed is the Unix nano time of the last call or listing.
	lastUsed atomic.Int64
}

// dialer connects to servers.
type dialer struct {
	guarded *http.Client
	logger  *slog.Logger
	now     func() time.Time
	version string
	// maxBytes caps a response body or one event of a stream.
	maxBytes int64
}

// dial connects to t, Streamable HTTP first and then SSE, each attempt with
// a fresh client, and lists the server's tools; all within timeout, shared
// by both attempts. A Streamable HTTP attempt that timed out is not
// followed by an SSE one: the server is not answering, and trying again
// would double what a dead server costs. The session outlives ctx: Close
// ends it.
func (d *dialer) dial(ctx context.Context, t Target, timeout time.Duration) (*Conn, error) {
	endpoint, err := url.Parse(t.URL)
	if err != nil {
		return nil, errors.New("invalid URL")
	}
	deadline := time.Now().Add(timeout)
	hc := httpClientFor(d.guarded, endpoint, t.Token, d.maxBytes)
	c, errStream := d.attempt(ctx, TransportStreamable, &mcp.StreamableClientTransport{Endpoint: t.URL, HTTPClient: hc, MaxRetries: 2}, hc, deadline, timeout)
	if errStream == nil {
		return c, nil
	}
	if errors.Is(errStream, netguard.ErrBlocked) || errors.Is(errStream, errNoAnswer) || ctx.Err() != nil {
		return nil, errStream
	}
	hc = httpClientFor(d.guarded, endpoint, t.Token, d.maxBytes)
	c, errSSE := d.attempt(ctx, TransportSSE, &mcp.SSEClientTransport{Endpoint: t.URL, HTTPClient: hc}, hc, deadline, timeout)
	if errSSE == nil {
		return c, nil
	}
	if errors.Is(errSSE, netguard.ErrBlocked) {
		return nil, errSSE
	}
	return nil, fmt.Errorf("streamable HTTP: %w; SSE: %v", errStream, errSSE)
}

// attempt makes one connection over tr and discovers its tools by
// deadline. The connection's context is detached from ctx (the SSE
// transport ties its stream to it) and cancelled when the attempt fails or
// times out, or when the Conn is closed.
func (d *dialer) attempt(ctx context.Context, name string, tr mcp.Transport, hc *http.Client, deadline time.Time, timeout time.Duration) (*Conn, error) {
	connCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	origin := hc.Transport.(*originTransport)
	// An attempt given up sends nothing more: the SDK would otherwise
	// notify the server of the cancelled request and wait up to 5 s for a
	// server that is not answering.
	abandon := func() { origin.abandoned.Store(true); cancel() }
	stop := context.AfterFunc(ctx, abandon)
	timer := time.AfterFunc(time.Until(deadline), abandon)
	defer timer.Stop()
	defer stop()

	c := &Conn{cancel: cancel, transport: name, origin: origin}
	client := mcp.NewClient(&mcp.Implementation{Name: "quiver", Version: d.version}, &mcp.ClientOptions{
		Logger:       d.logger,
		Capabilities: &mcp.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			c.stale.Store(true)
			if h := listChanged.Load(); h != nil {
				(*h)()
			}
		},
	})
	session, err := client.Connect(connCtx, tr, nil)
	if err != nil {
		if origin.otherOrigin.Load() {
			// The session was sent to another origin (an SSE endpoint
			// event): the refused request is the cause, whatever the SDK
			// reports. It often reports something else: the refused write
			// of server/discover shuts the connection down, the SDK falls
			// back to initialize on it, and that fails with the write error
			// or with the end of the stream (EOF), whichever of its
			// goroutines got there first.
			err = errOtherOrigin
		}
		err = d.timeoutOr(connCtx, ctx, timeout, fmt.Errorf("connect: %w", err))
		cancel()
		return nil, err
	}
	c.session = session
	if r := session.InitializeResult(); r != nil && r.ServerInfo != nil {
		c.server = *r.ServerInfo
	}
	if err := c.refresh(connCtx); err != nil {
		err = d.timeoutOr(connCtx, ctx, timeout, c.explain(err))
		c.Close()
		return nil, err
	}
	c.touch(d.now())
	return c, nil
}

// errNoAnswer reports an attempt that timed out.
var errNoAnswer = errors.New("no answer")

// timeoutOr reports a timed-out attempt as such rather than as the
// cancellation error the SDK returns.
func (d *dialer) timeoutOr(connCtx, ctx context.Context, timeout time.Duration, err error) error {
	if connCtx.Err() != nil && ctx.Err() == nil {
		return fmt.Errorf("%w within %s", errNoAnswer, timeout)
	}
	return err
}

// listChanged, when set (by a test), runs after a connection took a
// server's list_changed notification: nothing the server sees afterwards
// proves that the handler has run (with a ping answered as the proof, 1
// test run in 30 still found the handler late).
var listChanged atomic.Pointer[func()]

// refresh lists the server's tools (every page) and keeps them. The stale
// mark is cleared before listing, so that a change announced while the
// listing is under way marks the result stale again instead of being lost.
func (c *Conn) refresh(ctx context.Context) error {
	c.stale.Store(false)
	var tools []*mcp.Tool
	for t, err := range c.session.Tools(ctx, nil) {
		if err != nil {
			c.stale.Store(true)
			return fmt.Errorf("list tools: %w", err)
		}
		tools = append(tools, t)
		if len(tools) > maxListedTools {
			c.stale.Store(true)
			return fmt.Errorf("list tools: more than %d tools", maxListedTools)
		}
	}
	c.mu.Lock()
	c.tools = tools
	c.mu.Unlock()
	return nil
}

// maxListedTools bounds one server's tool list.
const maxListedTools = 500

// Tools returns the tools the server listed last.
func (c *Conn) Tools() []*mcp.Tool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tools
}

// Server is the identity the server gave at initialisation.
func (c *Conn) Server() mcp.Implementation { return c.server }

// Transport is TransportStreamable or TransportSSE.
func (c *Conn) Transport() string { return c.transport }

// Call calls one tool. ctx's end while the call waits cancels it; once
// it is answered, ctx may end at once (the callers' timeouts do) without
// costing the connection: see detach (calltail.go).
func (c *Conn) Call(ctx context.Context, name string, args any) (*mcp.CallToolResult, error) {
	cctx, release := detach(ctx)
	defer release()
	res, err := c.session.CallTool(cctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return nil, c.explain(err)
	}
	return res, nil
}

// errOverCap reports a response past the size cap.
var errOverCap = errors.New("the server's response is larger than the response size cap")

// explain names the cause of a failed exchange that the SDK reports only
// as a stream that ended early: a response body past the size cap.
func (c *Conn) explain(err error) error {
	if c.origin != nil && c.origin.overCap.Swap(false) {
		return fmt.Errorf("%w: %w", errOverCap, err)
	}
	return err
}

func (c *Conn) touch(now time.Time) { c.lastUsed.Store(now.UnixNano()) }

func (c *Conn) idleSince() time.Time { return time.Unix(0, c.lastUsed.Load()) }

// abandon makes every later request of the connection fail before it is
// sent: Close then ends the session without telling the server.
func (c *Conn) abandon() {
	if c.origin != nil {
		c.origin.abandoned.Store(true)
	}
}

// Close ends the session and its streams.
func (c *Conn) Close() error {
	var err error
	if c.session != nil {
		err = c.session.Close()
	}
	c.cancel()
	return err
}
