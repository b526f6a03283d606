package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/quiverhq/quiver/engine"

	"github.com/quiverhq/quiver/dispatch"
	"github.com/quiverhq/quiver/mcpserver"
	"github.com/quiverhq/quiver/netguard"
	"github.com/quiverhq/quiver/secret"
	"github.com/quiverhq/quiver/tool"
)

var mcpServeUsage = usageText("mcp-serve")

// shutdownGrace bounds how long stopping waits for calls already sent.
const shutdownGrace = 10 * time.Second

type serveFlags struct {
	in       TurnInput
	df       dataFlags
	stdio    bool
	addr     string
	public   bool
	tokenEnv string
	http     mcpserver.HTTPConfig
}

// listFlag collects a repeatable flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func parseServe(args []string, env Env) (serveFlags, error) {
	fs := newFlags("mcp serve")
	var c serveFlags
	var hosts, origins listFlag
	c.in.register(fs)
	fs.BoolVar(&c.stdio, "stdio", false, "")
	fs.StringVar(&c.addr, "http", "", "")
	fs.BoolVar(&c.public, "public", false, "")
	fs.StringVar(&c.tokenEnv, "token-env", "", "")
	fs.Var(&hosts, "allow-host", "")
	fs.Var(&origins, "allow-origin", "")
	fs.StringVar(&c.in.ConversationID, "conversation", "", "")
	c.df.register(fs)
	if _, err := parseArgs(fs, args, mcpServeUsage, env.Stdout, 0, ""); err != nil {
		return c, err
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
	rt, eng, sess, err := openTurnSession(ctx, c.in, "", c.df, env)
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
		return srv.RunStdio(ctx, env.Stdin, env.Stdout, shutdownGrace)
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
