// Package mcpserver exposes a turn's toolset as an MCP server on the official
// SDK. Every tools/call runs through the same dispatcher a model's call runs
// through, so an MCP client meets the same refusals, argument validation,
// scope, limits, timeouts and result storing as the model does.
//
// [Server.ServeStdio] and [Server.Handler] are the transports;
// [Server.RunStdio] and [Server.RunHTTP] serve one until a context ends
// and then shut down gracefully, and [CheckListen] is the rule for the
// address an HTTP server listens on (loopback unless made public).
package mcpserver

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/quiverhq/quiver/dispatch"
	"github.com/quiverhq/quiver/ids"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// Name is the server name every client reads in the initialize result.
const Name = "quiver"

// Meta keys a tools/call result may carry besides its text. The text itself
// already names a stored result's reference; the keys are for clients that
// want them without parsing it.
const (
	// MetaRef holds the reference of the stored full body ("res_…") when the
	// text is a truncated preview.
	MetaRef = "quiver/ref"
	// MetaEffect holds what the result asks of a surface (tool.Effect: a
	// clarifying question, suggested next actions). Nothing pauses over MCP;
	// the client decides what to do with it.
	MetaEffect = "quiver/effect"
)

// Config configures a Server. Dispatcher and the organisation and user of
// Facts are required; the zero value of every other field is documented on
// it.
type Config struct {
	// Toolset is what tools/list shows and tools/call may run. It is frozen
	// for the server's life; the zero value is an empty toolset.
	Toolset registry.Toolset
	// Dispatcher runs every tools/call.
	Dispatcher *dispatch.Dispatcher
	// Facts are the facts of the turn the server serves (its agent,
	// caller and place). They come from the server's configuration, never
	// from a client's arguments. Each session's turn is these facts with
	// the session's own conversation and turn id, and every call of the
	// session runs under that turn's Facts.Scope(), so the scope is built
	// where every other turn's is. Place.OrgID and Caller.UserID are
	// required.
	Facts turn.Facts
	// Version is the server version in the initialize result; "" means "dev".
	Version string
	// Logger receives infrastructure failures, with detail the client never
	// sees; nil discards.
	Logger *slog.Logger
	// IDs makes the id of each new session's conversation ("mcp_…", unless
	// NewConversation is set) and of the one turn its calls belong to
	// ("turn_…"); nil means ids.Random.
	IDs ids.Source
	// NewConversation returns the conversation of a new session, for a
	// caller that serves an existing conversation; nil means a new id from
	// IDs.
	NewConversation func() string
	// StartTurn is called once per session, before its first tools/call runs,
	// with the scope every call of that session uses; the caller records the
	// turn there (a session's stored results are read by conversation). Nil
	// records nothing. An error fails that call as an internal error, and the
	// session's next call tries again.
	StartTurn func(ctx context.Context, s tool.Scope) error
}

// Server serves one toolset to any number of MCP sessions: one over stdio,
// or many over Streamable HTTP. Each session is its own conversation. A
// Server is safe for concurrent use.
type Server struct {
	cfg  Config
	mcp  *mcp.Server
	list []*mcp.Tool // tools/list, in declaration order

	mu       sync.Mutex
	sessions map[*mcp.ServerSession]*session
	// work counts unanswered requests for Shutdown; stop cancels every
	// running call when Shutdown's grace ends.
	work       *inflight
	stop       context.Context
	cancelStop context.CancelFunc
}

// session is what a Server keeps of one MCP session: the facts of its
// turn, fixed when the turn is started.
type session struct {
	mu      sync.Mutex
	started bool
	facts   turn.Facts
}

// New returns a Server for cfg. It panics when Dispatcher or the Facts'
// Place.OrgID or Caller.UserID is missing: those are start-up mistakes.
func New(cfg Config) *Server {
	if cfg.Dispatcher == nil || cfg.Facts.Place.OrgID == "" || cfg.Facts.Caller.UserID == "" {
		panic("mcpserver: Config.Dispatcher, Facts.Place.OrgID and Facts.Caller.UserID are required")
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	cfg.IDs = ids.OrRandom(cfg.IDs)
	if cfg.NewConversation == nil {
		cfg.NewConversation = func() string { return cfg.IDs.New("mcp_") }
	}
	s := &Server{cfg: cfg, sessions: map[*mcp.ServerSession]*session{}, work: newInflight()}
	s.stop, s.cancelStop = context.WithCancel(context.Background())
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: Name, Version: cfg.Version}, &mcp.ServerOptions{
		Logger: cfg.Logger,
		// Tools only: the toolset is frozen, so no list-changed notices, and
		// no logging capability, since no tool sends log messages.
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
	})
	for _, t := range cfg.Toolset.Tools() {
		mt := &mcp.Tool{Name: t.Name(), Description: t.Spec().Description, InputSchema: t.Schema()}
		s.mcp.AddTool(mt, s.call)
		s.list = append(s.list, mt)
	}
	s.mcp.AddReceivingMiddleware(s.route)
	return s
}

// route answers the two methods whose SDK defaults differ from a model's
// view of the toolset. tools/list keeps the toolset's declaration order
// (the SDK would sort by name). A tools/call of a name outside the toolset
// never reaches a registered handler, and the SDK would answer it with its
// own protocol error; dispatch answers it instead, with the refusal a model
// reads.
func (s *Server) route(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch r := req.(type) {
		case *mcp.ListToolsRequest:
			if r.Params == nil || r.Params.Cursor == "" {
				return &mcp.ListToolsResult{Tools: append([]*mcp.Tool{}, s.list...)}, nil
			}
		case *mcp.CallToolRequest:
			if _, in := s.cfg.Toolset.Lookup(r.Params.Name); !in {
				return s.call(ctx, r)
			}
		}
		return next(ctx, method, req)
	}
}

// errInternal is the whole answer to a call that failed for a reason on the
// server's side; the detail goes to the log.
var errInternal = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error"}

// errClosing answers calls that arrive after Shutdown began.
var errClosing = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "server is shutting down"}

// call runs one tools/call through dispatch. A result the model would read,
// error results included, is a CallToolResult; an infrastructure failure is
// a JSON-RPC internal error without detail.
func (s *Server) call(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if s.work.isClosing() {
		return nil, errClosing
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(s.stop, cancel)()

	scope, err := s.scopeOf(ctx, req.Session)
	if err != nil {
		s.cfg.Logger.Error("mcp: start turn", "session", req.Session.ID(), "error", err)
		return nil, errInternal
	}
	res, err := s.cfg.Dispatcher.Call(ctx, dispatch.Turn{Toolset: s.cfg.Toolset, Scope: scope},
		dispatch.Call{ID: "mcp", Name: req.Params.Name, Args: req.Params.Arguments})
	if err != nil {
		s.cfg.Logger.Error("mcp: tools/call", "tool", req.Params.Name, "conversation", scope.ConversationID, "error", err)
		return nil, errInternal
	}
	return toMCP(res), nil
}

// toMCP turns a dispatch result into the CallToolResult a client reads.
func toMCP(res tool.Result) *mcp.CallToolResult {
	out := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Content}}, IsError: res.IsError}
	if res.Ref != "" {
		out.Meta = mcp.Meta{MetaRef: res.Ref}
	}
	if res.Effect.Pause != nil || len(res.Effect.NextActions) > 0 || res.Effect.Checklist != nil {
		if out.Meta == nil {
			out.Meta = mcp.Meta{}
		}
		b, _ := json.Marshal(res.Effect) // plain strings: cannot fail
		out.Meta[MetaEffect] = json.RawMessage(b)
	}
	return out
}

// scopeOf returns the scope of ss's calls, its turn's Facts.Scope(),
// starting the turn on first use.
func (s *Server) scopeOf(ctx context.Context, ss *mcp.ServerSession) (tool.Scope, error) {
	sess := s.session(ss)
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.started {
		return sess.facts.Scope(), nil
	}
	f := s.sessionFacts(s.cfg.NewConversation(), s.cfg.IDs.New("turn_"))
	if s.cfg.StartTurn != nil {
		if err := s.cfg.StartTurn(ctx, f.Scope()); err != nil {
			return tool.Scope{}, err
		}
	}
	sess.started, sess.facts = true, f
	return f.Scope(), nil
}

// sessionFacts are the facts of a session's turn: the server's, in the
// session's conversation, as turn turnID.
func (s *Server) sessionFacts(conversationID, turnID string) turn.Facts {
	f := s.cfg.Facts
	f.Place.ConversationID, f.TurnID = conversationID, turnID
	return f
}

// session returns the state of ss, creating it on first sight; it is
// forgotten when ss ends.
func (s *Server) session(ss *mcp.ServerSession) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sess, ok := s.sessions[ss]; ok {
		return sess
	}
	sess := &session{}
	s.sessions[ss] = sess
	go func() {
		_ = ss.Wait()
		s.mu.Lock()
		delete(s.sessions, ss)
		s.mu.Unlock()
	}()
	return sess
}
