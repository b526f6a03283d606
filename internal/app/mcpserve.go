package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/quiverhq/quiver/engine"

	"github.com/quiverhq/quiver/dispatch"
	"github.com/quiverhq/quiver/mcpserver"
	"github.com/quiverhq/quiver/tool"
)

// shutdownGrace bounds how long stopping waits for calls already sent.
const shutdownGrace = 10 * time.Second

// MCPServeOptions is what "quiver mcp serve" runs with. The transport is
// taken as given: the caller has checked that the address is loopback
// unless the network is meant, and then that there is a token.
type MCPServeOptions struct {
	// Turn is who the sessions are for and with which agent. A
	// ConversationID (stdio only) is every session's conversation, checked
	// to be the caller's; "" gives each session its own.
	Turn TurnInput
	// Data is the configuration and the data folder.
	Data Data
	// Stdio serves one session on Env.Stdin and Env.Stdout; else Addr is
	// listened on, with HTTP's own settings (mcpserver.HTTPConfig).
	Stdio bool
	Addr  string
	HTTP  mcpserver.HTTPConfig
}

// MCPServe serves the agent's tools, selected once for the caller, over
// MCP until ctx ends; each session's turn is recorded in its conversation.
func MCPServe(ctx context.Context, o MCPServeOptions, env Env) error {
	env.defaults()
	rt, eng, sess, err := openTurnSession(ctx, o.Turn, "", o.Data.flags(), env)
	if err != nil {
		return err
	}
	defer rt.close()
	st := rt.st
	r := sess.Request() // the agent file as read once
	if o.Turn.ConversationID != "" {
		// Another user's conversation would have its stored results read
		// and turns written into it by someone who is not its owner.
		if err := ownerError(r.ConversationID, engine.CheckOwner(ctx, st, r)); err != nil {
			return err
		}
	}
	go rt.mcp.pool.Run(ctx) // idle connections closed while the server runs
	facts, toolset := sess.Facts(), sess.Toolset
	srvCfg := mcpserver.Config{
		Toolset:    toolset,
		Dispatcher: dispatch.New(dispatch.Config{Results: st, Quota: rt.quota, Now: env.Now, Logger: env.Logger}),
		Facts:      facts,
		Version:    Version, Logger: env.Logger,
		StartTurn: func(ctx context.Context, s tool.Scope) error {
			return startSession(ctx, eng, sess, s)
		},
	}
	if id := o.Turn.ConversationID; id != "" {
		srvCfg.NewConversation = func() string { return id }
	}
	srv := mcpserver.New(srvCfg)
	if o.Stdio {
		fmt.Fprintf(env.Stderr, "quiver: serving %d tools of agent %s over stdio\n", toolset.Len(), facts.Agent.Name)
		return srv.RunStdio(ctx, env.Stdin, env.Stdout, shutdownGrace)
	}
	return serveHTTP(ctx, srv, o, env)
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
// mcpserver.Server.RunHTTP) under the configuration's http limits.
func serveHTTP(ctx context.Context, srv *mcpserver.Server, c MCPServeOptions, env Env) error {
	cfg, err := c.Data.flags().loadConfig()
	if err != nil {
		return err
	}
	c.HTTP.Limits = cfg.HTTP.Limits()
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return fmt.Errorf("mcp serve: %w", err)
	}
	fmt.Fprintf(env.Stderr, "quiver: serving MCP at http://%s%s\n", ln.Addr(), mcpserver.EndpointPath)
	if err := srv.RunHTTP(ctx, ln, c.HTTP, shutdownGrace); err != nil {
		return fmt.Errorf("mcp serve: %w", err)
	}
	return nil
}
