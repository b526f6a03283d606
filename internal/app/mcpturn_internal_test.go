package app

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/store"
)

// loopbackMCP starts an MCP server with one tool, echo, on loopback and
// returns its URL and a count of the requests it got other than GETs
// (the SDK may open its standalone event stream, a GET, at any time).
func loopbackMCP(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "loop", Version: "1"}, nil)
	type echoIn struct {
		Text string `json:"text"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echoes text."}, func(context.Context, *mcp.CallToolRequest, echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
	})
	var sent atomic.Int64
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			sent.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
	return hs.URL + "/mcp", &sent
}

// TestTurnCatalogTakesOrgNetworkMode: in a self-hosted deployment, an
// organisation's turn catalog connects its MCP servers under the network
// mode of the organisation's settings, which the runtime passes in, and
// the admin API's Add tests a server under it too: a loopback server is
// offered while the organisation is self-hosted; once its settings say
// public, the server is left out without a request reaching it and a
// second loopback server cannot be added.
func TestTurnCatalogTakesOrgNetworkMode(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	env := Env{Now: func() time.Time { return now }}
	env.defaults()
	cfg := config.Config{}
	cfg.Network.Mode = "self-hosted"
	rt, err := openRuntime(ctx, t.TempDir(), cfg, env)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.close()
	if err := rt.st.CreateOrg(ctx, store.Org{ID: "acme", Name: "Acme", CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	admin := apiMCP{regs: rt.mcp.regs, orgs: rt.orgs}
	url, sent := loopbackMCP(t)
	if _, err := admin.Add(ctx, "acme", "loop", url, "", "general"); err != nil {
		t.Fatalf("Add while self-hosted: %v", err)
	}
	catalog := func() bool {
		t.Helper()
		cat, err := rt.newEngine(config.Config{}, nil, false, env).Catalog(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		_, ok := cat.Lookup("loop__echo")
		return ok
	}
	if !catalog() {
		t.Fatal("the loopback server's tool is not offered to a self-hosted organisation")
	}

	if _, err := rt.st.PutOrgSettings(ctx, store.OrgSettings{OrgID: "acme", Doc: []byte(`{"network_mode":"public"}`), UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	before := sent.Load()
	if catalog() {
		t.Error("the loopback server's tool is offered to a public organisation")
	}
	if got := sent.Load() - before; got != 0 {
		t.Errorf("the loopback server got %d requests after the switch to public", got)
	}
	other, otherSent := loopbackMCP(t)
	_, err = admin.Add(ctx, "acme", "other", other, "", "general")
	if _, bad := errors.AsType[*httpapi.BadRequest](err); !bad {
		t.Errorf("Add while public = %v, want a bad request", err)
	}
	if got := otherSent.Load(); got != 0 {
		t.Errorf("the server added while public got %d requests", got)
	}
}
