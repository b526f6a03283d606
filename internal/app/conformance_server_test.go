package app_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/quiverhq/quiver/dispatch"
	"github.com/quiverhq/quiver/internal/nodetools"
	"github.com/quiverhq/quiver/mcpserver"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/store/sqlite"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// TestConformanceServer runs the official MCP conformance suite's server
// scenarios against the quiver binary serving the example agent on
// loopback ("quiver mcp serve --http 127.0.0.1:0"), then stops it with
// SIGINT and expects a clean exit. docs/mcp-serve.md lists every scenario
// and why the others do not pass.
func TestConformanceServer(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the conformance suite")
	}
	x := nodetools.Require(t)
	bin := buildQuiver(t)
	cmd := exec.Command(bin, "mcp", "serve", "--agent", agentFile, "--http", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "QUIVER_DATA="+t.TempDir())
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	url, rest := readURL(stderr)
	if url == "" {
		t.Fatalf("no URL on stderr: %s", rest())
	}
	for _, scenario := range []string{
		"server-initialize", "ping", "tools-list", "dns-rebinding-protection", "server-sse-multiple-streams",
	} {
		t.Run(scenario, func(t *testing.T) { runServerScenario(t, x, url, scenario) })
	}
	cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); err != nil {
		t.Errorf("after SIGINT: %v\n%s", err, rest())
	}
}

// TestConformanceServerTestTools runs the scenarios that need test-only
// tools against an mcpserver.Server whose toolset holds Quiver tools doing
// what those scenarios ask, dispatched as any tool is.
func TestConformanceServerTestTools(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the conformance suite")
	}
	x := nodetools.Require(t)
	st, err := sqlite.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cat := registry.New()
	cat.Register(conformanceTools()...)
	srv := mcpserver.New(mcpserver.Config{
		Toolset:    cat.Select(turn.Facts{Model: turn.Model{Caps: turn.Capabilities{Tools: true}}}),
		Dispatcher: dispatch.New(dispatch.Config{Results: st, Logger: slog.New(slog.DiscardHandler)}),
		Facts:      turn.Facts{Place: turn.Place{OrgID: "conformance"}, Caller: turn.Caller{UserID: "suite"}},
	})
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv.Handler(mcpserver.HTTPConfig{}))
	ts := httptest.NewServer(mux)
	defer ts.Close()
	for _, scenario := range []string{"tools-call-simple-text", "tools-call-error", "json-schema-2020-12"} {
		t.Run(scenario, func(t *testing.T) { runServerScenario(t, x, ts.URL+"/mcp", scenario) })
	}
}

// conformanceTools are the suite's test tools that a Quiver tool can be:
// one text result, or an error. (Image, audio and resource content,
// logging, progress, sampling and elicitation are beyond a tool.Result.)
func conformanceTools() []*tool.Tool {
	type none struct{}
	schema := &jsonschema.Schema{}
	if err := json.Unmarshal([]byte(`{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"type": "object",
		"$defs": {"address": {"type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
		"properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
		"additionalProperties": false
	}`), schema); err != nil {
		panic(err)
	}
	return []*tool.Tool{
		tool.New(tool.Spec{Name: "test_simple_text", Description: "Tests simple text content response", AlwaysOn: true},
			func(context.Context, tool.Scope, none) (string, error) {
				return "This is a simple text response for testing.", nil
			}),
		tool.New(tool.Spec{Name: "test_error_handling", Description: "Tests error response handling", AlwaysOn: true},
			func(context.Context, tool.Scope, none) (string, error) {
				return "", errors.New("This tool intentionally returns an error for testing")
			}),
		tool.NewRaw(tool.Spec{Name: "json_schema_2020_12_tool", Description: "Tool with JSON Schema 2020-12 features", AlwaysOn: true},
			schema, func(_ context.Context, _ tool.Scope, args json.RawMessage) (tool.Result, error) {
				return tool.Result{Content: string(args)}, nil
			}),
	}
}

// readURL reads the server's stderr up to the line naming its URL, and
// keeps reading the rest in the background.
func readURL(r io.Reader) (url string, rest func() string) {
	var b syncBuf
	lines := bufio.NewScanner(r)
	for url == "" && lines.Scan() {
		if u, ok := strings.CutPrefix(lines.Text(), "quiver: serving MCP at "); ok {
			url = u
		} else {
			b.WriteString(lines.Text() + "\n")
		}
	}
	go func() {
		for lines.Scan() {
			b.WriteString(lines.Text() + "\n")
		}
	}()
	return url, b.String
}

// runServerScenario runs one server scenario and fails t unless the suite
// exits 0 and every check it wrote succeeded.
func runServerScenario(t *testing.T, x nodetools.Tools, url, scenario string) {
	t.Helper()
	dir := t.TempDir()
	out, err := x.Command(context.Background(), "conformance", "server", "--url", url, "--scenario", scenario, "-o", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("conformance %s: %v\n%s", scenario, err, out)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*", "checks.json"))
	if len(files) != 1 {
		t.Fatalf("want one checks.json, found %v\n%s", files, out)
	}
	raw, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var checks []struct {
		ID, Status, ErrorMessage string
	}
	if err := json.Unmarshal(raw, &checks); err != nil {
		t.Fatal(err)
	}
	passed := 0
	for _, c := range checks {
		switch c.Status {
		case "SUCCESS":
			passed++
		case "INFO":
		default:
			t.Errorf("check %s: %s %s", c.ID, c.Status, c.ErrorMessage)
		}
	}
	if passed == 0 {
		t.Errorf("no check succeeded:\n%s", out)
	}
	if t.Failed() {
		t.Logf("suite output:\n%s", out)
	}
}
