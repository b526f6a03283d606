package mcpclient

import (
	"net/url"
	"time"

	"github.com/quiverhq/quiver/store"
)

// View is a registration as people may read it ("quiver mcp list
// --json"): the token only as "set" or "not set", the URL without its
// query (which may carry keys).
type View struct {
	Name    string   `json:"name"`
	Type    string   `json:"type"`
	Enabled bool     `json:"enabled"`
	URL     string   `json:"url"`
	Token   string   `json:"token"`
	Tools   []string `json:"tools"`
	// Discovery is Snapshot of Tools.
	Discovery string `json:"discovery"`
	// Names maps each discovered tool to the name models call it by
	// (server__tool, see docs/mcp.md), in discovery order; null before a
	// discovery.
	Names        []ToolName `json:"names"`
	CreatedAt    time.Time  `json:"created_at"`
	UpdatedAt    time.Time  `json:"updated_at"`
	DiscoveredAt time.Time  `json:"discovered_at,omitzero"`
}

// ViewOf is the View of a stored registration.
func ViewOf(s store.MCPServer) View {
	token := "not set"
	if s.Token != "" {
		token = "set"
	}
	return View{
		Name: s.Name, Type: s.Type, Enabled: s.Enabled, URL: displayURL(s.URL), Token: token,
		Tools: s.Tools, Discovery: Snapshot(s.Tools), Names: WireNames(s.Name, s.Tools),
		CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt, DiscoveredAt: s.DiscoveredAt,
	}
}

// ViewsOf is the View of each stored registration, in order; never nil.
func ViewsOf(recs []store.MCPServer) []View {
	out := make([]View, len(recs))
	for i, r := range recs {
		out[i] = ViewOf(r)
	}
	return out
}

// displayURL shows a server URL with its query, if any, as "…"; a URL
// that does not parse is reduced to its Origin.
func displayURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return Origin(raw)
	}
	if u.RawQuery != "" {
		u.RawQuery = "…"
	}
	return u.String()
}
