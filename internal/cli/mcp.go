package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/quiverhq/quiver/internal/app"
	"github.com/quiverhq/quiver/mcpclient"
	"github.com/quiverhq/quiver/mcpserver"
	"github.com/quiverhq/quiver/netguard"
	"github.com/quiverhq/quiver/secret"
)

var (
	mcpUsage       = usageText("mcp")
	mcpAddUsage    = usageText("mcp-add")
	mcpListUsage   = usageText("mcp-list")
	mcpToggleUsage = usageText("mcp-toggle")
	mcpRemoveUsage = usageText("mcp-remove")
	mcpProbeUsage  = usageText("mcp-probe")
	mcpServeUsage  = usageText("mcp-serve")
)

// runMCP dispatches the "quiver mcp" subcommands.
func runMCP(ctx context.Context, args []string, env app.Env) error {
	sub, err := subcommand("mcp", args, mcpUsage, env.Stdout, "add", "list", "enable", "disable", "remove", "probe", "serve")
	if err != nil {
		return err
	}
	switch sub {
	case "serve":
		return runMCPServe(ctx, args[1:], env)
	case "add":
		return runMCPAdd(ctx, args[1:], env)
	case "list":
		return runMCPList(ctx, args[1:], env)
	case "enable":
		return runMCPToggle(ctx, args[1:], env, true)
	case "disable":
		return runMCPToggle(ctx, args[1:], env, false)
	case "remove":
		return runMCPRemove(ctx, args[1:], env)
	}
	return runMCPProbe(ctx, args[1:], env)
}

func runMCPAdd(ctx context.Context, args []string, env app.Env) error {
	fs := newFlags("mcp add")
	var o app.MCPAddOptions
	registerAdmin(fs, &o.MCPAdmin)
	var tokenEnv string
	var tokenStdin bool
	fs.StringVar(&o.Type, "type", "general", "")
	fs.StringVar(&tokenEnv, "token-env", "", "")
	fs.BoolVar(&tokenStdin, "token-stdin", false, "")
	fs.BoolVar(&o.JSON, "json", false, "")
	pos, err := parseArgs(fs, args, mcpAddUsage, env.Stdout, 2, "give NAME and URL")
	if err != nil {
		return err
	}
	o.Name, o.URL = pos[0], pos[1]
	if o.Token, err = readToken(tokenEnv, tokenStdin, env); err != nil {
		return err
	}
	return app.MCPAdd(ctx, o, env)
}

// readToken reads an auth token from an environment variable or the first
// line of standard input; never from the command line, where other users
// of the machine could read it.
func readToken(envVar string, fromStdin bool, env app.Env) (string, error) {
	switch {
	case envVar != "" && fromStdin:
		return "", usagef("give --token-env or --token-stdin, not both")
	case envVar != "":
		t := env.Getenv(envVar)
		if t == "" {
			return "", usagef("--token-env: $%s is empty", envVar)
		}
		return t, nil
	case fromStdin:
		line, err := bufio.NewReader(io.LimitReader(env.Stdin, 4096)).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return "", fmt.Errorf("read token: %w", err)
		}
		if t := strings.TrimSpace(line); t != "" {
			return t, nil
		}
		return "", usagef("--token-stdin: standard input held no token")
	}
	return "", nil
}

func runMCPList(ctx context.Context, args []string, env app.Env) error {
	fs := newFlags("mcp list")
	var o app.MCPListOptions
	registerAdmin(fs, &o.MCPAdmin)
	fs.BoolVar(&o.JSON, "json", false, "")
	if _, err := parseArgs(fs, args, mcpListUsage, env.Stdout, 0, "takes no arguments"); err != nil {
		return err
	}
	return app.MCPList(ctx, o, env)
}

func runMCPToggle(ctx context.Context, args []string, env app.Env, enable bool) error {
	name := "mcp disable"
	if enable {
		name = "mcp enable"
	}
	fs := newFlags(name)
	o := app.MCPToggleOptions{Enable: enable}
	registerAdmin(fs, &o.MCPAdmin)
	pos, err := parseArgs(fs, args, mcpToggleUsage, env.Stdout, 1, "give one NAME")
	if err != nil {
		return err
	}
	o.Name = pos[0]
	return app.MCPToggle(ctx, o, env)
}

func runMCPRemove(ctx context.Context, args []string, env app.Env) error {
	fs := newFlags("mcp remove")
	var o app.MCPRemoveOptions
	registerAdmin(fs, &o.MCPAdmin)
	fs.BoolVar(&o.Confirmed, "yes", false, "")
	pos, err := parseArgs(fs, args, mcpRemoveUsage, env.Stdout, 1, "give one NAME")
	if err != nil {
		return err
	}
	o.Name = pos[0]
	return app.MCPRemove(ctx, o, env)
}

// callFlag collects repeated --call NAME=JSON values.
type callFlag []mcpclient.ProbeCall

func (c *callFlag) String() string { return "" }

func (c *callFlag) Set(v string) error {
	name, args, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return fmt.Errorf("want NAME=JSON")
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(args), &obj); err != nil || obj == nil {
		return fmt.Errorf("%s: arguments must be a JSON object", name)
	}
	*c = append(*c, mcpclient.ProbeCall{Tool: name, Arguments: json.RawMessage(args)})
	return nil
}

func runMCPProbe(ctx context.Context, args []string, env app.Env) error {
	fs := newFlags("mcp probe")
	var o app.MCPProbeOptions
	var calls callFlag
	var tokenStdin bool
	var tokenEnv string
	fs.Var(&calls, "call", "")
	fs.BoolVar(&o.CallAll, "call-all", false, "")
	fs.BoolVar(&o.SelfHosted, "self-hosted", false, "")
	fs.StringVar(&tokenEnv, "token-env", "", "")
	fs.BoolVar(&tokenStdin, "token-stdin", false, "")
	fs.StringVar(&o.Config, "config", "", "")
	fs.BoolVar(&o.JSON, "json", false, "")
	pos, err := parseArgs(fs, args, mcpProbeUsage, env.Stdout, 1, "give one URL")
	if err != nil {
		return err
	}
	if o.CallAll && len(calls) > 0 {
		return usagef("mcp probe: give --call or --call-all, not both")
	}
	o.URL, o.Calls = pos[0], calls
	if o.Token, err = readToken(tokenEnv, tokenStdin, env); err != nil {
		return err
	}
	return app.MCPProbe(ctx, o, env)
}

// serveFlags are mcp serve's flags: the options, and those that only
// check the transport.
type serveFlags struct {
	app.MCPServeOptions
	public   bool
	tokenEnv string
}

func runMCPServe(ctx context.Context, args []string, env app.Env) error {
	fs := newFlags("mcp serve")
	var c serveFlags
	var hosts, origins listFlag
	registerTurn(fs, &c.Turn)
	fs.BoolVar(&c.Stdio, "stdio", false, "")
	fs.StringVar(&c.Addr, "http", "", "")
	fs.BoolVar(&c.public, "public", false, "")
	fs.StringVar(&c.tokenEnv, "token-env", "", "")
	fs.Var(&hosts, "allow-host", "")
	fs.Var(&origins, "allow-origin", "")
	fs.StringVar(&c.Turn.ConversationID, "conversation", "", "")
	registerData(fs, &c.Data)
	if _, err := parseArgs(fs, args, mcpServeUsage, env.Stdout, 0, ""); err != nil {
		return err
	}
	c.HTTP = mcpserver.HTTPConfig{AllowedHosts: hosts, AllowedOrigins: origins}
	if err := c.checkMode(); err != nil {
		return err
	}
	if c.tokenEnv != "" {
		tok := env.Getenv(c.tokenEnv)
		if tok == "" {
			return usagef("--token-env: $%s is empty", c.tokenEnv)
		}
		c.HTTP.Token = secret.Redacted(tok)
	}
	return app.MCPServe(ctx, c.MCPServeOptions, env)
}

// checkMode validates the transport flags: one transport, HTTP on loopback
// unless --public (and then with a token), HTTP-only flags only with HTTP.
func (c serveFlags) checkMode() error {
	switch {
	case c.Stdio == (c.Addr != ""):
		return usagef("mcp serve: give exactly one of --stdio and --http ADDR")
	case c.Stdio && (c.public || c.tokenEnv != "" || len(c.HTTP.AllowedHosts) > 0 || len(c.HTTP.AllowedOrigins) > 0):
		return usagef("mcp serve: --public, --token-env, --allow-host and --allow-origin go with --http")
	case c.Stdio:
		return nil
	case c.Turn.ConversationID != "":
		return usagef("mcp serve: --conversation goes with --stdio; over HTTP each session is its own conversation")
	}
	if err := checkListen(c.Addr, c.public); err != nil {
		return err
	}
	if c.public && c.tokenEnv == "" {
		return usagef("--public: also give --token-env VAR; without a token anyone who reaches the port can run the agent's tools")
	}
	if err := c.HTTP.Validate(); err != nil {
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
