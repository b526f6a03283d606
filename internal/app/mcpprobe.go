package app

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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

// ProbeOutput is what "quiver mcp probe --json" prints.
type ProbeOutput struct {
	Server    mcp.Implementation `json:"server"`
	Transport string             `json:"transport"`
	Tools     []ProbeTool        `json:"tools"`
	Calls     []ProbeCall        `json:"calls,omitempty"`
}

// ProbeTool is one listed tool.
type ProbeTool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// ProbeCall is one call's outcome.
type ProbeCall struct {
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	IsError   bool            `json:"is_error"`
	Content   string          `json:"content"`
}

// callFlag collects repeated --call NAME=JSON values.
type callFlag []ProbeCall

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
	*c = append(*c, ProbeCall{Tool: name, Arguments: json.RawMessage(args)})
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
	out := ProbeOutput{Server: conn.Server(), Transport: conn.Transport()}
	for _, t := range conn.Tools() {
		out.Tools = append(out.Tools, ProbeTool{Name: t.Name, Description: t.Description})
		if callAll {
			calls = append(calls, ProbeCall{Tool: t.Name, Arguments: sampleArgs(t.InputSchema)})
		}
	}
	failed := false
	for i, c := range calls {
		res, err := conn.Call(ctx, c.Tool, c.Arguments)
		if err != nil {
			calls[i].IsError, calls[i].Content = true, err.Error()
		} else {
			r := mcpclient.Render(c.Tool, res)
			calls[i].IsError, calls[i].Content = r.IsError, r.Content
		}
		failed = failed || calls[i].IsError
	}
	out.Calls = calls
	if err := printProbe(env, out, asJSON); err != nil {
		return err
	}
	if failed {
		return resultError{}
	}
	return nil
}

func printProbe(env Env, out ProbeOutput, asJSON bool) error {
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

// sampleArgs builds arguments for a tool from its input schema: every
// required property with its default, const or first enum value when the
// schema gives one, else a plain value of its type.
func sampleArgs(schema any) json.RawMessage {
	raw, _ := json.Marshal(schema)
	var s sampleSchema
	if json.Unmarshal(raw, &s) != nil {
		return json.RawMessage("{}")
	}
	b, err := json.Marshal(s.sample(0))
	if err != nil {
		return json.RawMessage("{}")
	}
	return b
}

// sampleSchema is the part of a JSON schema sampleArgs reads.
type sampleSchema struct {
	Type       any                      `json:"type"`
	Properties map[string]*sampleSchema `json:"properties"`
	Required   []string                 `json:"required"`
	Default    any                      `json:"default"`
	Const      any                      `json:"const"`
	Enum       []any                    `json:"enum"`
	Format     string                   `json:"format"`
}

func (s *sampleSchema) sample(depth int) any {
	switch {
	case s == nil:
		return "test"
	case s.Default != nil:
		return s.Default
	case s.Const != nil:
		return s.Const
	case len(s.Enum) > 0:
		return s.Enum[0]
	}
	switch s.typeName() {
	case "object":
		obj := map[string]any{}
		if depth < 8 {
			for _, name := range s.Required {
				obj[name] = s.Properties[name].sample(depth + 1)
			}
		}
		return obj
	case "array":
		return []any{}
	case "number", "integer":
		return 1
	case "boolean":
		return true
	case "null":
		return nil
	}
	if s.Format == "uri" || s.Format == "url" {
		return "https://example.com/"
	}
	return "test"
}

// typeName returns the schema's type, the first non-null one of a list.
func (s *sampleSchema) typeName() string {
	switch t := s.Type.(type) {
	case string:
		return t
	case []any:
		for _, e := range t {
			if name, ok := e.(string); ok && name != "null" {
				return name
			}
		}
	}
	if s.Properties != nil {
		return "object"
	}
	return ""
}
