package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/mcpclient"
)

func TestMCPList(t *testing.T) {
	f := newFixture(t, nil)
	f.mcpServer("org_a", "alpha", nil, "")
	f.mcpServer("org_a", "beta", []string{}, "sealed-token")
	f.mcpServer("org_a", "gamma", []string{"search", "fetch"}, "")
	f.mcpServer("org_b", "delta", nil, "")

	r := f.do(f.alice, "GET", "/api/mcp-servers", nil)
	var list struct{ Servers []httpapi.MCPServer }
	f.ok(r, http.StatusOK, &list)
	at := start
	want := []httpapi.MCPServer{
		{Name: "alpha", URL: "https://alpha.example/mcp", Type: "general", Enabled: true, Token: "not set", Discovery: "unknown", Tools: []string{}, Names: []mcpclient.ToolName{}, CreatedAt: start, UpdatedAt: start},
		{Name: "beta", URL: "https://beta.example/mcp", Type: "general", Enabled: true, Token: "set", Discovery: "none", Tools: []string{}, Names: []mcpclient.ToolName{}, DiscoveredAt: &at, CreatedAt: start, UpdatedAt: start},
		{Name: "gamma", URL: "https://gamma.example/mcp", Type: "general", Enabled: true, Token: "not set", Discovery: "discovered", Tools: []string{"search", "fetch"},
			Names: []mcpclient.ToolName{{Name: "gamma__search", Tool: "search"}, {Name: "gamma__fetch", Tool: "fetch"}}, DiscoveredAt: &at, CreatedAt: start, UpdatedAt: start},
	}
	if diff := cmp.Diff(want, list.Servers); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	if strings.Contains(string(r.body), "sealed-token") {
		t.Error("the list shows a token")
	}

	var one httpapi.MCPServer
	f.ok(f.do(f.alice, "GET", "/api/mcp-servers/gamma", nil), http.StatusOK, &one)
	if diff := cmp.Diff(want[2], one); diff != "" {
		t.Errorf("one server (-want +got):\n%s", diff)
	}
	wantError(t, f.do(f.alice, "GET", "/api/mcp-servers/delta", nil), http.StatusNotFound, "not_found")
}

func TestMCPWrites(t *testing.T) {
	f := newFixture(t, nil)
	body := map[string]any{"name": "search", "url": "https://search.example/mcp", "token": "s3cret", "type": "web_search"}

	var s httpapi.MCPServer
	r := f.do(f.alice, "POST", "/api/mcp-servers", body)
	f.ok(r, http.StatusCreated, &s)
	if s.Name != "search" || s.Type != "web_search" || s.Token != "set" || !s.Enabled || s.Discovery != "discovered" || strings.Contains(string(r.body), "s3cret") {
		t.Errorf("added %s", r.body)
	}
	wantError(t, f.do(f.alice, "POST", "/api/mcp-servers", body), http.StatusConflict, "name_taken")
	other := map[string]any{"name": "search2", "url": "https://s2.example/mcp", "type": "web_search"}
	wantError(t, f.do(f.alice, "POST", "/api/mcp-servers", other), http.StatusConflict, "type_in_use")
	down := map[string]any{"name": "down", "url": "http://unreachable"}
	r = f.do(f.alice, "POST", "/api/mcp-servers", down)
	wantError(t, r, http.StatusBadRequest, "invalid_request")
	if !strings.Contains(string(r.body), "connection test failed") {
		t.Errorf("the connection test's message is not shown: %s", r.body)
	}
	wantError(t, f.do(f.alice, "POST", "/api/mcp-servers", map[string]any{"name": "x", "url": "https://x.example", "type": "shell"}), http.StatusBadRequest, "invalid_request")

	f.clock.Advance(time.Minute)
	f.ok(f.do(f.alice, "POST", "/api/mcp-servers/search/disable", nil), http.StatusNoContent, nil)
	f.ok(f.do(f.alice, "GET", "/api/mcp-servers/search", nil), http.StatusOK, &s)
	if s.Enabled || !s.UpdatedAt.Equal(start.Add(time.Minute)) {
		t.Errorf("after disable %+v", s)
	}
	f.ok(f.do(f.alice, "POST", "/api/mcp-servers", other), http.StatusCreated, nil)
	wantError(t, f.do(f.alice, "POST", "/api/mcp-servers/search/enable", nil), http.StatusConflict, "type_in_use")
	wantError(t, f.do(f.alice, "POST", "/api/mcp-servers/nope/enable", nil), http.StatusNotFound, "not_found")

	wantError(t, f.do(f.alice, "DELETE", "/api/mcp-servers/search", nil), http.StatusBadRequest, "confirmation_required")
	f.ok(f.do(f.alice, "GET", "/api/mcp-servers/search", nil), http.StatusOK, nil)
	f.ok(f.do(f.alice, "DELETE", "/api/mcp-servers/search?confirm=true", nil), http.StatusNoContent, nil)
	wantError(t, f.do(f.alice, "GET", "/api/mcp-servers/search", nil), http.StatusNotFound, "not_found")
	wantError(t, f.do(f.alice, "DELETE", "/api/mcp-servers/search?confirm=true", nil), http.StatusNotFound, "not_found")
}

func TestMCPWithoutAdmin(t *testing.T) {
	f := newFixture(t, func(c *httpapi.Config) { c.MCP = nil })
	f.mcpServer("org_a", "alpha", nil, "")
	f.ok(f.do(f.alice, "GET", "/api/mcp-servers", nil), http.StatusOK, nil)
	wantError(t, f.do(f.alice, "POST", "/api/mcp-servers", map[string]any{"name": "x", "url": "https://x.example/mcp"}), http.StatusNotImplemented, "not_configured")
	wantError(t, f.do(f.alice, "POST", "/api/mcp-servers/alpha/disable", nil), http.StatusNotImplemented, "not_configured")
	wantError(t, f.do(f.alice, "DELETE", "/api/mcp-servers/alpha?confirm=true", nil), http.StatusNotImplemented, "not_configured")
}
