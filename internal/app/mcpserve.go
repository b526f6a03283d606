package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"github.com/quiverhq/quiver/engine"

	"github.com/quiverhq/quiver/dispatch"
	"github.com/quiverhq/quiver/mcpserver"
	"github.com/quiverhq/quiver/netguard"
	"github.com/quiverhq/quiver/secret"
	"github.com/quiverhq/quiver/tool"
)

const mcpServeUsage = `Usage: quiver mcp serve --agent FILE (--stdio | --http ADDR) [flags]

Serves the agent's toolset as an MCP server. The toolset is selected once, at
start, exactly as for a turn; every tools/call runs through dispatch as a
model's call would: the same refusal for tools outside the set, argument
validation, scope, limits, timeouts, and storing of long results (read them
with read_tool_result in the same session). Scope comes from the flags,
never from a client: each MCP session is one conversation of --user in
--org, created as theirs by its first call. See docs/mcp-serve.md.

--stdio serves one session on standard input and output. --http ADDR serves
Streamable HTTP at http://ADDR/mcp, each session (Mcp-Session-Id) its own
conversation; the URL is printed on standard error (ADDR may end in :0).
Requests whose Host is not this server (loopback names, the address they
arrived at, --allow-host) or whose Origin is not its own (or --allow-origin)
are refused with 403: this defeats DNS rebinding. Ctrl-C answers the calls
already sent, then stops.

Flags:
  --agent FILE          agent definition (YAML), required
  --stdio               serve over standard input and output
  --http ADDR           serve Streamable HTTP on ADDR (host:port); the host must
                        be a loopback address or localhost unless --public
  --public              allow --http on a non-loopback or every address (":8080");
                        needs --token-env
  --token-env VAR       require "Authorization: Bearer $VAR" on every HTTP request
  --allow-host HOST     also accept this Host header (name or address, optionally
                        with :port), e.g. behind a reverse proxy; repeatable
  --allow-origin URL    also accept this Origin (scheme://host[:port]); repeatable
  --conversation ID     conversation of the --stdio session (default: a new one);
                        it must be the caller's own (one of another user is
                        refused, exit 2); a new one becomes theirs
  --user NAME           caller's display name (scopes the workspace)
  --org O               caller's organisation (scopes the workspace)
  --department D        caller's department
  --tz ZONE             caller's IANA timezone
  --model P:NAME        override the agent's model (a model without tool
                        support gets no tools)
  --data DIR            data folder (default $QUIVER_DATA, else $XDG_DATA_HOME/quiver,
                        else ~/.local/share/quiver)
  --config FILE         deployment configuration (web engines, network mode, secrets,
                        MCP limits); the organisation's enabled MCP servers' tools
                        join the built-ins
`

// shutdownGrace bounds how long stopping waits for calls already sent.
const shutdownGrace = 10 * time.Second

type serveFlags struct {
	in       TurnInput
	stdio    bool
	addr     string
	public   bool
	tokenEnv string
	http     mcpserver.HTTPConfig
	data     string
	config   string
}

// listFlag collects a repeatable flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func parseServe(args []string, env Env) (serveFlags, error) {
	fs := newFlags("mcp serve")
	var c serveFlags
	var hosts, origins listFlag
	fs.StringVar(&c.in.AgentFile, "agent", "", "")
	fs.BoolVar(&c.stdio, "stdio", false, "")
	fs.StringVar(&c.addr, "http", "", "")
	fs.BoolVar(&c.public, "public", false, "")
	fs.StringVar(&c.tokenEnv, "token-env", "", "")
	fs.Var(&hosts, "allow-host", "")
	fs.Var(&origins, "allow-origin", "")
	fs.StringVar(&c.in.ConversationID, "conversation", "", "")
	fs.StringVar(&c.in.Caller.User, "user", "", "")
	fs.StringVar(&c.in.Caller.Org, "org", "", "")
	fs.StringVar(&c.in.Caller.Department, "department", "", "")
	fs.StringVar(&c.in.Caller.Timezone, "tz", "", "")
	fs.StringVar(&c.in.Model, "model", "", "")
	fs.StringVar(&c.data, "data", "", "")
	fs.StringVar(&c.config, "config", "", "")
	pos, err := parse(fs, args, mcpServeUsage, env.Stdout)
	if err != nil {
		return c, err
	}
	if len(pos) > 0 {
		return c, usagef("mcp serve: unexpected argument %q", pos[0])
	}
	c.http = mcpserver.HTTPConfig{AllowedHosts: hosts, AllowedOrigins: origins}
	if err := c.checkMode(); err != nil {
		return c, err
	}
	if c.tokenEnv != "" {
		tok := env.Getenv(c.tokenEnv)
		if tok == "" {
			return c, usagef("--token-env: $%s is empty", c.tokenEnv)
		}
		c.http.Token = secret.Redacted(tok)
	}
	return c, nil
}

// checkMode validates the transport flags: one transport, HTTP on loopback
// unless --public (and then with a token), HTTP-only flags only with HTTP.
func (c serveFlags) checkMode() error {
	switch {
	case c.stdio == (c.addr != ""):
		return usagef("mcp serve: give exactly one of --stdio and --http ADDR")
	case c.stdio && (c.public || c.tokenEnv != "" || len(c.http.AllowedHosts) > 0 || len(c.http.AllowedOrigins) > 0):
		return usagef("mcp serve: --public, --token-env, --allow-host and --allow-origin go with --http")
	case c.stdio:
		return nil
	case c.in.ConversationID != "":
		return usagef("mcp serve: --conversation goes with --stdio; over HTTP each session is its own conversation")
	}
	if err := checkListen(c.addr, c.public); err != nil {
		return err
	}
	if c.public && c.tokenEnv == "" {
		return usagef("--public: also give --token-env VAR; without a token anyone who reaches the port can run the agent's tools")
	}
	if err := c.http.Validate(); err != nil {
		return usagef("mcp serve: %v", err)
	}
	return nil
}

// checkListen validates --http ADDR (see mcpserver.CheckListen).
func checkListen(addr string, public bool) error {
	err := mcpserver.CheckListen(addr, public)
	if errors.Is(err, netguard.ErrNotLoopback) {
		return usagef("--http: %v; use 127.0.0.1:PORT, or add --public (with --token-env) to serve the network", err)
	}
	if err != nil {
		return usagef("--http: %v", err)
	}
	return nil
}

func runMCPServe(ctx context.Context, args []string, env Env) error {
	c, err := parseServe(args, env)
	if err != nil {
		return err
	}
	rt, eng, sess, err := openTurnSession(ctx, c.in, "", c.data, c.config, env)
	if err != nil {
		return err
	}
	defer rt.close()
	st := rt.st
	r := sess.Request() // the agent file as read once
	if c.in.ConversationID != "" {
		if err := checkOwner(ctx, st, r); err != nil {
			return err
		}
	}
	go rt.mcp.Run(ctx) // idle connections closed while the server runs
	facts, toolset := sess.Facts(), sess.Toolset
	srvCfg := mcpserver.Config{
		Toolset:    toolset,
		Dispatcher: dispatch.New(dispatch.Config{Results: st, Now: env.Now, Logger: env.Logger}),
		Facts:      facts,
		Version:    Version, Logger: env.Logger,
		StartTurn: func(ctx context.Context, s tool.Scope) error {
			return startSession(ctx, eng, sess, s)
		},
	}
	if c.in.ConversationID != "" {
		srvCfg.NewConversation = func() string { return c.in.ConversationID }
	}
	srv := mcpserver.New(srvCfg)
	if c.stdio {
		fmt.Fprintf(env.Stderr, "quiver: serving %d tools of agent %s over stdio\n", toolset.Len(), facts.Agent.Name)
		return serveStdio(ctx, srv, env)
	}
	return serveHTTP(ctx, srv, c, env)
}

// startSession enters an MCP session into its conversation (see
// engine.Engine.Record: the conversation is claimed for the caller,
// checked again here since another user may have taken it since start,
// and the session's turn recorded with the toolset frozen at start).
func startSession(ctx context.Context, eng *engine.Engine, sess *engine.Session, s tool.Scope) error {
	if err := notConsole(s.ConversationID); err != nil {
		return err
	}
	err := eng.Record(ctx, sess, s.TurnID, s.ConversationID)
	if errors.Is(err, engine.ErrNoConversation) {
		return usagef("--conversation: %q belongs to another user; give a conversation of your own", s.ConversationID)
	}
	return err
}

// serveStdio serves standard input and output (see
// mcpserver.Server.RunStdio).
func serveStdio(ctx context.Context, srv *mcpserver.Server, env Env) error {
	var in io.Reader = os.Stdin
	if env.Stdin != nil {
		in = env.Stdin
	}
	return srv.RunStdio(ctx, in, env.Stdout, shutdownGrace)
}

// serveHTTP listens, prints the URL, and serves until ctx ends (see
// mcpserver.Server.RunHTTP).
func serveHTTP(ctx context.Context, srv *mcpserver.Server, c serveFlags, env Env) error {
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return fmt.Errorf("mcp serve: %w", err)
	}
	fmt.Fprintf(env.Stderr, "quiver: serving MCP at http://%s%s\n", ln.Addr(), mcpserver.EndpointPath)
	if err := srv.RunHTTP(ctx, ln, c.http, shutdownGrace); err != nil {
		return fmt.Errorf("mcp serve: %w", err)
	}
	return nil
}
