package app

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/mcpclient"
)

var mcpProbeUsage = usageText("mcp-probe")

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
	pos, err := parseArgs(fs, args, mcpProbeUsage, env.Stdout, 1, "give one URL")
	if err != nil {
		return err
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
	if err := emit(env.Stdout, asJSON, out); err != nil {
		return err
	}
	if out.Failed() {
		return resultError{}
	}
	return nil
}
