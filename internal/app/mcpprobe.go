package app

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/mcpclient"
)

const mcpProbeUsage = `Usage: quiver mcp probe URL [flags]

Connects to an MCP server without registering it, through the same guarded
client and rules a registration uses (Streamable HTTP, else SSE; no
redirects; the network policy), and prints the server's identity and tools.
A smoke test to run before "quiver mcp add". Exits 1 when a call fails.

Flags:
  --call NAME=JSON  call tool NAME with the JSON object as arguments
                    (repeatable)
  --call-all        call every listed tool once, with arguments generated
                    from its input schema (required fields only: the
                    default, first enum value or const when given, else
                    "test", 1, true, [] or {})
  --token-env VAR   read the auth token from environment variable VAR
  --token-stdin     read the auth token from the first line of standard input
  --self-hosted     allow local and private addresses and plain http (as
                    network.mode self-hosted does)
  --config FILE     deployment configuration (network.mode, mcp limits)
  --json            print JSON
`

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

func runMCPProbe(ctx context.Context, args []string, env Env) error {
	fs := newFlags("mcp probe")
	var calls callFlag
	var callAll, selfHosted, tokenStdin, asJSON bool
	var tokenEnv, cfgPath string
	fs.Var(&calls, "call", "")
	fs.BoolVar(&callAll, "call-all", false, "")
	fs.BoolVar(&selfHosted, "self-hosted", false, "")
	fs.StringVar(&tokenEnv, "token-env", "", "")
	fs.BoolVar(&tokenStdin, "token-stdin", false, "")
	fs.StringVar(&cfgPath, "config", "", "")
	fs.BoolVar(&asJSON, "json", false, "")
	pos, err := parse(fs, args, mcpProbeUsage, env.Stdout)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("mcp probe: give one URL")
	}
	if callAll && len(calls) > 0 {
		return usagef("mcp probe: give --call or --call-all, not both")
	}
	cfg, err := config.LoadConfig(cfgPath)
	if err != nil {
		return &UsageError{Msg: err.Error()}
	}
	if selfHosted {
		cfg.Network.Mode = "self-hosted"
	}
	token, err := readToken(tokenEnv, tokenStdin, env)
	if err != nil {
		return err
	}
	pool := mcpPool(cfg, env)
	defer pool.Close()
	conn, err := pool.Probe(ctx, pos[0], token)
	if err != nil {
		return mcpRefusal(err)
	}
	defer conn.Close()
	out := conn.Report(ctx, calls, callAll)
	if err := printProbe(env, out, asJSON); err != nil {
		return err
	}
	if out.Failed() {
		return resultError{}
	}
	return nil
}

// printProbe prints a probe's report: JSON, or a line per tool and a
// block per call.
func printProbe(env Env, out mcpclient.ProbeReport, asJSON bool) error {
	if asJSON {
		return writeJSON(env.Stdout, out)
	}
	fmt.Fprintf(env.Stdout, "server: %s %s (%s)\n", out.Server.Name, out.Server.Version, out.Transport)
	fmt.Fprintf(env.Stdout, "tools: %d\n", len(out.Tools))
	for _, t := range out.Tools {
		desc, _, _ := strings.Cut(strings.TrimSpace(t.Description), "\n")
		fmt.Fprintf(env.Stdout, "  %s  %s\n", t.Name, desc)
	}
	for _, c := range out.Calls {
		status := "ok"
		if c.IsError {
			status = "error"
		}
		fmt.Fprintf(env.Stdout, "call %s %s: %s\n%s\n", c.Tool, c.Arguments, status, c.Content)
	}
	return nil
}
