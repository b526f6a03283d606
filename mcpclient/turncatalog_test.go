package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/tool"
)

// listedServers is a store whose enabled servers are list's answer.
type listedServers struct {
	store.MCPServers
	list func() ([]store.MCPServer, error)
}

func (l listedServers) ListEnabledMCPServers(context.Context, string) ([]store.MCPServer, error) {
	return l.list()
}

// withResearch is the test built-ins plus research_web, which a typed
// server's replacement hides too.
func withResearch() *registry.Catalog {
	c := builtins()
	c.Register(tool.NewRaw(tool.Spec{Name: researchTool, Description: "Researches."}, schemaObject(),
		func(context.Context, tool.Scope, json.RawMessage) (tool.Result, error) { return tool.Result{}, nil }))
	return c
}

// TestTurnCatalogFailsClosed: when the registrations cannot be read, the
// turn's catalog hides web_search, fetch_url and research_web with one
// reason (a replacement cannot be ruled out), keeps the other built-ins,
// gives no notices and logs the failure.
func TestTurnCatalogFailsClosed(t *testing.T) {
	var logged bytes.Buffer
	e := newEnv(t, func(c *testConfig) {
		c.Registrations.Store = listedServers{c.Registrations.Store, func() ([]store.MCPServer, error) {
			return nil, errors.New("disk on fire")
		}}
		c.Pool.Logger = slog.New(slog.NewTextHandler(&logged, nil))
	})
	cat, notices := TurnCatalog(context.Background(), e.regs, e.pool, org, e.mode, withResearch())
	if notices != nil {
		t.Errorf("notices = %q, want none", notices)
	}
	ts := cat.Select(facts("web_search", "fetch_url", researchTool, "lookup"))
	if diff := cmp.Diff([]string{"calculate", "lookup"}, ts.Names()); diff != "" {
		t.Errorf("selected (-want +got):\n%s", diff)
	}
	const reason = "MCP servers could not be read, so a replacement cannot be ruled out"
	for _, name := range []string{"web_search", "fetch_url", researchTool} {
		if got := excluded(ts, name); got != reason {
			t.Errorf("%s excluded with %q, want %q", name, got, reason)
		}
	}
	if !strings.Contains(logged.String(), "mcp servers could not be read") || !strings.Contains(logged.String(), "disk on fire") {
		t.Errorf("log = %q, want the failure", logged.String())
	}
}

// TestTurnCatalogAppliesToolset: the turn's catalog holds the enabled
// servers' tools under their wire names, and a toolset's notices are
// returned for the caller to show (here two enabled web_search servers,
// which a store written before the family rule may hold: both skipped,
// the built-in kept).
func TestTurnCatalogAppliesToolset(t *testing.T) {
	p := startPeer(t, "p", peerOpts{})
	addEcho(p.srv, "echo")
	var enabled []store.MCPServer
	e := newEnv(t, func(c *testConfig) {
		c.Registrations.Store = listedServers{c.Registrations.Store, func() ([]store.MCPServer, error) { return enabled, nil }}
	})
	enabled = []store.MCPServer{{ID: "1", OrgID: org, Name: "srv", URL: p.URL, Type: store.MCPGeneral, Enabled: true}}
	cat, notices := TurnCatalog(context.Background(), e.regs, e.pool, org, e.mode, withResearch())
	if _, ok := cat.Lookup("srv__echo"); !ok || notices != nil {
		t.Errorf("srv__echo offered %t, notices %q; want it offered and no notices", ok, notices)
	}

	enabled = []store.MCPServer{
		{ID: "2", OrgID: org, Name: "brave", URL: p.URL, Type: store.MCPWebSearch, Enabled: true},
		{ID: "3", OrgID: org, Name: "exa", URL: p.URL, Type: store.MCPWebSearch, Enabled: true},
	}
	cat, notices = TurnCatalog(context.Background(), e.regs, e.pool, org, e.mode, withResearch())
	want := []string{"2 enabled web_search servers (brave, exa): none is used; disable all but one"}
	if diff := cmp.Diff(want, notices); diff != "" {
		t.Errorf("notices (-want +got):\n%s", diff)
	}
	if _, ok := cat.Lookup("web_search"); !ok {
		t.Error("web_search hidden by two conflicting servers")
	}
}
