package app

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/store"
)

// TestValidateAgentAllowlist: an agent save (the HTTP API's ValidateAgent)
// checks the allowlist against the organisation's built-ins and its
// registered MCP servers, enabled or not, and returns the warnings beside
// the template's; a clean allowlist has none.
func TestValidateAgentAllowlist(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	env := Env{Now: func() time.Time { return now }}
	env.defaults()
	rt, err := openRuntime(ctx, t.TempDir(), config.Config{}, env)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.close()
	srv := store.MCPServer{ID: "srv_1", OrgID: "acme", Name: "github", URL: "https://github.example/mcp",
		Type: store.MCPGeneral, Tools: []string{"create_issue"}, CreatedAt: now, UpdatedAt: now}
	if err := rt.st.CreateMCPServer(ctx, srv, 0); err != nil {
		t.Fatal(err)
	}
	api := rt.apiEngine(rt.newEngine(config.Config{}, nil, false, env), orgRuntimes{orgs: rt.orgs}, env)
	admin := httpapi.Caller{OrgID: "acme", UserID: "ana", Role: store.RoleAdmin}

	tests := []struct {
		name   string
		caller httpapi.Caller
		tools  string
		want   []registry.Warning
	}{
		{name: "clean", caller: admin, tools: "[web_search, research, github/*, github/create_issue]"},
		{name: "misspelt tool, unregistered server, repeated entry", caller: admin,
			tools: "[web_serch, bitbucket/*, github/creat_issue, research, research]",
			want: []registry.Warning{
				{Entry: "web_serch", Message: `"web_serch" is not a tool or family name`, Suggestion: "web_search"},
				{Entry: "bitbucket/*", Message: `no MCP server "bitbucket" is registered in this organisation`},
				{Entry: "github/creat_issue", Message: `MCP server "github" had no tool "creat_issue" at its last discovery`, Suggestion: "github/create_issue"},
				{Entry: "research", Message: `"research" is listed more than once`},
			}},
		{name: "another organisation's server", caller: httpapi.Caller{OrgID: "other", UserID: "bo", Role: store.RoleAdmin},
			tools: "[github/*]",
			want:  []registry.Warning{{Entry: "github/*", Message: `no MCP server "github" is registered in this organisation`}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := api.ValidateAgent(ctx, tc.caller, []byte("name: helper\nprompt: You help.\ntools: "+tc.tools+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			if v.Name != "helper" {
				t.Errorf("name %q", v.Name)
			}
			if d := cmp.Diff(tc.want, v.Allowlist); d != "" {
				t.Errorf("allowlist warnings (-want +got):\n%s", d)
			}
		})
	}
}
