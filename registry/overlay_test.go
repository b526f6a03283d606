package registry_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/tool"
)

func names(ts []*tool.Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name())
	}
	return out
}

// mcpTool is a tool the way mcpclient imports one: optional, admitted by
// server/tool and server/*.
func mcpTool(server, name string, mod func(*tool.Spec)) *tool.Tool {
	spec := tool.Spec{Name: name, AllowAs: []string{server + "/" + name, server + "/*"}}
	if mod != nil {
		mod(&spec)
	}
	return mk(spec)
}

func TestWithHidesAndAppends(t *testing.T) {
	base := catalog()
	before := names(base.Tools())
	o := registry.Overlay{
		Tools: []*tool.Tool{
			mcpTool("brave", "brave_search", func(s *tool.Spec) { s.Family = "web"; s.Macros = []string{"search_tool"} }),
			mcpTool("notes", "web_search", nil), // takes the name the overlay hides
		},
		Hide:    map[string]string{"web_search": "replaced by MCP server brave", "not_registered": "ignored"},
		Dropped: []registry.Exclusion{{Name: "notes/bad.name", Reason: "name is not usable"}},
	}
	c := base.With(o)

	want := []string{"read_file", "calculate", "fetch_url", "save_memory", "analyze_image", "brave_search", "web_search"}
	if diff := cmp.Diff(want, names(c.Tools())); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, names(base.Tools())); diff != "" {
		t.Errorf("the base catalog changed (-before +after):\n%s", diff)
	}
	if got, _ := base.Lookup("web_search"); got == o.Tools[1] {
		t.Error("the base catalog resolves web_search to the overlay's tool")
	}
	if len(base.Select(facts([]string{"web"}, nil)).Excluded()) != 2 {
		t.Errorf("the base catalog reports the overlay's exclusions: %v", base.Select(facts([]string{"web"}, nil)).Excluded())
	}

	ts := c.Select(facts([]string{"web", "notes/*"}, nil))
	if diff := cmp.Diff([]string{"read_file", "calculate", "fetch_url", "brave_search", "web_search"}, ts.Names()); diff != "" {
		t.Errorf("toolset (-want +got):\n%s", diff)
	}
	wantLeft := []registry.Exclusion{
		{"web_search", "replaced by MCP server brave"},
		{"notes/bad.name", "name is not usable"},
		{"save_memory", "not in the agent's allowlist"},
		{"analyze_image", "not in the agent's allowlist"},
	}
	if diff := cmp.Diff(wantLeft, ts.Excluded()); diff != "" {
		t.Errorf("excluded (-want +got):\n%s", diff)
	}
	if got := ts.Macros()["search_tool"]; got != "brave_search" {
		t.Errorf("search_tool = %q", got)
	}
	// The overlay's tool is the one the catalog resolves and runs.
	if got, _ := c.Lookup("web_search"); got != o.Tools[1] {
		t.Error("web_search does not resolve to the overlay's tool")
	}
	// Fragments of hidden tools go; those a kept tool shares stay.
	if diff := cmp.Diff([]string{"Files live in the workspace.", "Cite sources."}, ts.Fragments()); diff != "" {
		t.Errorf("fragments (-want +got):\n%s", diff)
	}
}

func TestWithChained(t *testing.T) {
	c := catalog().
		With(registry.Overlay{Hide: map[string]string{"fetch_url": "first"}, Dropped: []registry.Exclusion{{"a/x", "dropped first"}}}).
		With(registry.Overlay{Hide: map[string]string{"web_search": "second"}})
	want := []registry.Exclusion{{"fetch_url", "first"}, {"a/x", "dropped first"}, {"web_search", "second"}}
	ts := c.Select(facts([]string{"web"}, nil))
	if diff := cmp.Diff(want, ts.Excluded()[:3]); diff != "" {
		t.Errorf("excluded (-want +got):\n%s", diff)
	}
}

func TestWithEmptyOverlay(t *testing.T) {
	base := catalog()
	c := base.With(registry.Overlay{Hide: map[string]string{}})
	if c != base {
		t.Error("an empty overlay built a new catalog; want the base itself, so what is kept per catalog is reused")
	}
	if diff := cmp.Diff(names(base.Tools()), names(c.Tools())); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	f := facts([]string{"web"}, nil)
	if diff := cmp.Diff(base.Select(f).Excluded(), c.Select(f).Excluded()); diff != "" {
		t.Errorf("excluded (-base +overlaid):\n%s", diff)
	}
}

func TestWithPanicsOnCollision(t *testing.T) {
	tests := map[string]registry.Overlay{
		"name of a kept built-in": {Tools: []*tool.Tool{mcpTool("s", "calculate", nil)}},
		"two overlay tools":       {Tools: []*tool.Tool{mcpTool("a", "dup", nil), mcpTool("b", "dup", nil)}},
	}
	for name, o := range tests {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("With did not panic")
				}
			}()
			catalog().With(o)
		})
	}
}

func TestAllowAs(t *testing.T) {
	c := registry.New()
	c.Register(
		mcpTool("srv", "echo", nil),
		mcpTool("srv", "sum", nil),
		mcpTool("other", "ping", func(s *tool.Spec) { s.Family = "net" }),
	)
	tests := []struct {
		allow []string
		want  []string
	}{
		{nil, nil},
		{[]string{"srv/echo"}, []string{"echo"}},
		{[]string{"srv/*"}, []string{"echo", "sum"}},
		{[]string{"srv/echo", "other/*"}, []string{"echo", "ping"}},
		{[]string{"net"}, []string{"ping"}},
		{[]string{"sum"}, nil}, // a bare name never admits a server's tool
		{[]string{"srv", "srv/", "*", "srv/ech", "other/echo"}, nil},
	}
	for _, tc := range tests {
		ts := c.Select(facts(tc.allow, nil))
		if diff := cmp.Diff(tc.want, ts.Names(), cmp.Comparer(func(a, b []string) bool { return len(a) == 0 && len(b) == 0 || cmp.Equal(a, b) })); diff != "" {
			t.Errorf("allow %q (-want +got):\n%s", tc.allow, diff)
		}
	}
}

// TestAdmitsRestored: a restored name that now belongs to a tool the
// allowlist does not admit (another MCP server's) is reported, so it can
// be left out.
func TestAdmitsRestored(t *testing.T) {
	c := registry.New()
	c.Register(mcpTool("evil", "search_issues", nil))
	f := facts([]string{"github/*"}, nil)
	ts := c.Restore([]string{"search_issues"})
	if ts.Len() != 1 {
		t.Fatalf("restore: %v", ts.Names())
	}
	tl, _ := ts.Lookup("search_issues")
	if reason := registry.Admits(f, tl); reason == "" {
		t.Fatal("a tool outside the allowlist was admitted on restore")
	}
	if reason := registry.Admits(facts([]string{"evil/*"}, nil), tl); reason != "" {
		t.Fatalf("allowed tool refused: %s", reason)
	}
}

// TestWithReplacesInPlace: a replacement takes its tool's position (so
// declaration order stays the catalog's), adds no exclusion, and leaves
// the base catalog unchanged; replacing an unknown name panics.
func TestWithReplacesInPlace(t *testing.T) {
	base := catalog()
	own := mk(tool.Spec{Name: "fetch_url", Family: "web", Description: "the organisation's own"})
	c := base.With(registry.Overlay{Replace: []*tool.Tool{own}})
	if diff := cmp.Diff(names(base.Tools()), names(c.Tools())); diff != "" {
		t.Errorf("order (-base +replaced):\n%s", diff)
	}
	if got, _ := c.Lookup("fetch_url"); got != own {
		t.Error("the overlaid catalog does not resolve fetch_url to the replacement")
	}
	if got, _ := base.Lookup("fetch_url"); got == own {
		t.Error("the base catalog changed")
	}
	f := facts([]string{"web"}, nil)
	if diff := cmp.Diff(base.Select(f).Excluded(), c.Select(f).Excluded()); diff != "" {
		t.Errorf("a replacement changed the exclusions (-base +replaced):\n%s", diff)
	}
	defer func() {
		if recover() == nil {
			t.Error("replacing a name the catalog does not hold did not panic")
		}
	}()
	base.With(registry.Overlay{Replace: []*tool.Tool{mk(tool.Spec{Name: "not_registered"})}})
}
