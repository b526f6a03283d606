package sqlite

import (
	"fmt"
	"testing"
	"time"

	"github.com/quiverhq/quiver/store"
)

// TestSetMCPServerToolsRefuses checks the arguments outside the contract
// are refused and write nothing: the store, not only the service above
// it, bounds what a discovery can store.
func TestSetMCPServerToolsRefuses(t *testing.T) {
	s := openTest(t, t.TempDir())
	srv := store.MCPServer{ID: "id", OrgID: "org", Name: "srv", Type: store.MCPGeneral}
	if err := s.CreateMCPServer(t.Context(), srv, 0); err != nil {
		t.Fatalf("CreateMCPServer: %v", err)
	}
	tooMany := make([]string, maxMCPTools+1)
	for i := range tooMany {
		tooMany[i] = fmt.Sprint("tool", i)
	}
	tests := []struct {
		name  string
		tools []string
	}{
		{"Nil", nil},
		{"TooMany", tooMany},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			changed, err := s.SetMCPServerTools(t.Context(), "org", "id", tc.tools, time.Now())
			if changed || err == nil {
				t.Errorf("SetMCPServerTools = %v, %v; want false and an error", changed, err)
			}
			got, err := s.GetMCPServer(t.Context(), "org", "srv")
			if err != nil || got.Tools != nil || !got.DiscoveredAt.IsZero() {
				t.Errorf("after a refused discovery: Tools %v, DiscoveredAt %v, err %v; want nil, zero, nil",
					got.Tools, got.DiscoveredAt, err)
			}
		})
	}
}

// TestMCPFamilyIndex checks the schema's backstop for the one enabled
// server per typed family rule, for a write that skipped the store's check.
func TestMCPFamilyIndex(t *testing.T) {
	s := openTest(t, t.TempDir())
	const insert = `INSERT INTO mcp_servers (org_id, id, name, url, type, enabled,
			created_at, updated_at)
		VALUES ('org', ?, ?, '', ?, ?, '', '')`
	tests := []struct {
		id, typ string
		enabled bool
		wantErr bool
	}{
		{"ws1", store.MCPWebSearch, true, false},
		{"ws2", store.MCPWebSearch, true, true},
		{"ws3", store.MCPWebSearch, false, false},
		{"g1", store.MCPGeneral, true, false},
		{"g2", store.MCPGeneral, true, false},
	}
	for _, tc := range tests {
		_, err := s.writer.ExecContext(t.Context(), insert, tc.id, tc.id, tc.typ, tc.enabled)
		if (err != nil) != tc.wantErr {
			t.Errorf("insert %s (%s, enabled %v): err = %v, want error %v", tc.id, tc.typ, tc.enabled, err, tc.wantErr)
		}
	}
}
