package mcpclient

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/quiverhq/quiver/store"
)

// TestViewOf: a registration's view shows the token only as set or not
// set, the URL without its query, the discovery in words and each tool's
// wire name; before any discovery, tools and names are null.
func TestViewOf(t *testing.T) {
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		rec  store.MCPServer
		want string
	}{
		{"token and query", store.MCPServer{
			Name: "docs", Type: store.MCPGeneral, Enabled: true, URL: "https://docs.example/mcp?key=s3cret#top", Token: "sealed",
			Tools: []string{"search", "get.page"}, CreatedAt: at, UpdatedAt: at, DiscoveredAt: at,
		}, `{"name":"docs","type":"general","enabled":true,"url":"https://docs.example/mcp?…#top","token":"set",` +
			`"tools":["search","get.page"],"discovery":"search, get.page",` +
			`"names":[{"name":"docs__search","tool":"search"},{"name":"` + WireName("docs", "get.page") + `","tool":"get.page"}],` +
			`"created_at":"2026-03-01T09:00:00Z","updated_at":"2026-03-01T09:00:00Z","discovered_at":"2026-03-01T09:00:00Z"}`},
		{"never discovered", store.MCPServer{
			Name: "new", Type: store.MCPWebSearch, URL: "http://10.0.0.2:8080/mcp", CreatedAt: at, UpdatedAt: at,
		}, `{"name":"new","type":"web_search","enabled":false,"url":"http://10.0.0.2:8080/mcp","token":"not set",` +
			`"tools":null,"discovery":"Discovery unknown","names":null,` +
			`"created_at":"2026-03-01T09:00:00Z","updated_at":"2026-03-01T09:00:00Z"}`},
		{"none discovered, unparsable URL", store.MCPServer{
			Name: "odd", URL: "https://odd.example/%zz?key=s3cret", Tools: []string{}, CreatedAt: at, UpdatedAt: at, DiscoveredAt: at,
		}, `{"name":"odd","type":"","enabled":false,"url":"` + Origin("https://odd.example/%zz?key=s3cret") + `","token":"not set",` +
			`"tools":[],"discovery":"None discovered","names":[],` +
			`"created_at":"2026-03-01T09:00:00Z","updated_at":"2026-03-01T09:00:00Z","discovered_at":"2026-03-01T09:00:00Z"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(ViewOf(tc.rec))
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.want {
				t.Errorf("view:\n got %s\nwant %s", b, tc.want)
			}
		})
	}
}

// TestViewsOf: one view per registration, in order; none is an empty
// list, never null.
func TestViewsOf(t *testing.T) {
	recs := []store.MCPServer{{Name: "b", Token: "sealed"}, {Name: "a"}}
	got := ViewsOf(recs)
	if len(got) != 2 || got[0].Name != "b" || got[0].Token != "set" || got[1].Name != "a" || got[1].Token != "not set" {
		t.Errorf("ViewsOf = %+v", got)
	}
	if b, _ := json.Marshal(ViewsOf(nil)); string(b) != "[]" {
		t.Errorf("ViewsOf(nil) = %s, want []", b)
	}
}
