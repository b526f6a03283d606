package mcpclient

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/store"
)

// TestCheckAgent: an agent's allowlist is checked against the catalog and
// the organisation's registrations, a disabled one included and another
// organisation's not; an organisation with none registered has its
// server entries warned about, not skipped; the switches' warnings come
// after the allowlist's.
func TestCheckAgent(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	for _, s := range []store.MCPServer{
		{ID: "srv_1", OrgID: org, Name: "github", Tools: []string{"create_issue"}},
		{ID: "srv_2", OrgID: "other", Name: "gitlab", Tools: []string{"open_mr"}},
	} {
		s.URL, s.Type, s.CreatedAt, s.UpdatedAt = "https://"+s.Name+".example/mcp", store.MCPGeneral, t0, t0
		if err := st.CreateMCPServer(ctx, s, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.SetMCPServerEnabled(ctx, org, "github", false, t0); err != nil {
		t.Fatal(err)
	}
	cat := builtins()
	tests := []struct {
		name, org string
		allow     []string
		switches  map[string]bool
		want      []registry.Warning
	}{
		{name: "clean, disabled server counts", org: org, allow: []string{"web_search", "github/*", "github/create_issue"}},
		{name: "allowlist then switches", org: org,
			allow:    []string{"web_serch", "gitlab/*", "github/creat_issue"},
			switches: map[string]bool{"web_serch": false},
			want: []registry.Warning{
				{Entry: "web_serch", Message: `"web_serch" is not a tool or family name`, Suggestion: "web_search"},
				{Entry: "gitlab/*", Message: `no MCP server "gitlab" is registered in this organisation`, Suggestion: "github/*"},
				{Entry: "github/creat_issue", Message: `MCP server "github" had no tool "creat_issue" at its last discovery`, Suggestion: "github/create_issue"},
				{Field: "switches", Entry: "web_serch", Message: `"web_serch" is not a switch or tool family name: it changes nothing`, Suggestion: "web_search"},
			}},
		{name: "none registered", org: "empty", allow: []string{"github/*"},
			want: []registry.Warning{{Entry: "github/*", Message: `no MCP server "github" is registered in this organisation`}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CheckAgent(ctx, cat, st, tc.org, tc.allow, tc.switches)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("CheckAgent (-want +got):\n%s", d)
			}
		})
	}
}
