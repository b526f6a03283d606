package app_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestIAskOverMCP: web_search's last-resort IAsk engine served by a tool of
// a deployment-configured MCP server, the only engine in the chain.
func TestIAskOverMCP(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "iask", Version: "1"}, nil)
	type in struct {
		Query string `json:"query"`
	}
	var asked []string
	mcp.AddTool(srv, &mcp.Tool{Name: "iask_search", Description: "Asks IAsk."}, func(ctx context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		asked = append(asked, a.Query)
		text := `{"answer":"Quiver is a tool layer.","sources":[{"title":"Quiver docs","url":"https://quiver.example/docs"}]}`
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer hs.Close()

	dir := t.TempDir()
	cfg := writeConfig(t, dir, "network:\n  mode: self-hosted\nweb:\n  duckduckgo_disabled: true\n  iask_mcp_url: "+hs.URL+"\n")
	agentPath := writeConfig(t, t.TempDir(), "name: a\nmodel: openai:gpt-4.1-mini\ntools: [web_search]\n")
	code, out, stderr := runEnv(t, filepath.Join(dir, "data"), nil, "", "call", "web_search", "--agent", agentPath,
		"--args", `{"query":"what is quiver"}`, "--config", cfg)
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, stderr)
	}
	for _, want := range []string{"Quiver is a tool layer.", "https://quiver.example/docs", "iask"} {
		if !strings.Contains(out, want) {
			t.Errorf("answer lacks %q:\n%s", want, out)
		}
	}
	if len(asked) != 1 || asked[0] != "what is quiver" {
		t.Errorf("the IAsk tool was asked %q", asked)
	}
}
