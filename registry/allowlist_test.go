package registry_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/tool"
)

// checkCatalog has the shipped shape: families of several tools, tools
// without a family, and an MCP server's tool admitted only as server/tool.
func checkCatalog() *registry.Catalog {
	c := registry.New()
	c.Register(
		mk(tool.Spec{Name: "read_file", Family: "workspace", AlwaysOn: true}),
		mk(tool.Spec{Name: "calculate", Family: "calc", AlwaysOn: true}),
		mk(tool.Spec{Name: "web_search", Family: "web_search"}),
		mk(tool.Spec{Name: "fetch_url", Family: "url_fetch"}),
		mk(tool.Spec{Name: "research_web", Family: "research"}),
		mk(tool.Spec{Name: "echo", Family: "mcp:tools", AllowAs: []string{"tools/echo", "tools/*"}}),
	)
	return c
}

func TestCheckAllowlist(t *testing.T) {
	servers := registry.RegisteredServers{
		"github":   {"create_issue", "list_issues"},
		"search-1": {"search"},
		"fresh":    nil, // registered, never discovered
	}
	tests := []struct {
		name    string
		allow   []string
		servers registry.RegisteredServers
		want    []registry.Warning
	}{
		{name: "empty allowlist", allow: nil, servers: servers, want: nil},
		{name: "tool names", allow: []string{"web_search", "fetch_url", "calculate"}, servers: servers, want: nil},
		{name: "family names", allow: []string{"url_fetch", "research", "workspace"}, servers: servers, want: nil},
		{
			name: "unknown name with the closest tool name", allow: []string{"web_serch"}, servers: servers,
			want: []registry.Warning{{Entry: "web_serch", Message: `"web_serch" is not a tool or family name`, Suggestion: "web_search"}},
		},
		{
			name: "transposed letters are one edit", allow: []string{"calcualte"},
			want: []registry.Warning{{Entry: "calcualte", Message: `"calcualte" is not a tool or family name`, Suggestion: "calculate"}},
		},
		{
			name: "closest family name", allow: []string{"url_fetsh"},
			want: []registry.Warning{{Entry: "url_fetsh", Message: `"url_fetsh" is not a tool or family name`, Suggestion: "url_fetch"}},
		},
		{
			name: "unknown name with nothing close", allow: []string{"memory"},
			want: []registry.Warning{{Entry: "memory", Message: `"memory" is not a tool or family name`}},
		},
		{
			name: "an MCP tool's bare name admits nothing", allow: []string{"echo"},
			want: []registry.Warning{{Entry: "echo", Message: `"echo" is not a tool or family name`}},
		},
		{
			name: "a server's name alone points at server/*", allow: []string{"github"}, servers: servers,
			want: []registry.Warning{{Entry: "github", Message: `"github" is an MCP server, not a tool or family name`, Suggestion: "github/*"}},
		},
		{name: "server/* of a registered server", allow: []string{"github/*", "fresh/*"}, servers: servers, want: nil},
		{name: "server/tool of a registered server", allow: []string{"github/create_issue", "search-1/search"}, servers: servers, want: nil},
		{name: "a tool of a server never discovered is not checked", allow: []string{"fresh/anything"}, servers: servers, want: nil},
		{
			name: "server/* of an unregistered server", allow: []string{"bitbucket/*"}, servers: servers,
			want: []registry.Warning{{Entry: "bitbucket/*", Message: `no MCP server "bitbucket" is registered in this organisation`}},
		},
		{
			name: "server/* of a misspelt server", allow: []string{"githb/*"}, servers: servers,
			want: []registry.Warning{{Entry: "githb/*", Message: `no MCP server "githb" is registered in this organisation`, Suggestion: "github/*"}},
		},
		{
			name: "server/tool of an unregistered server", allow: []string{"search-2/search"}, servers: servers,
			want: []registry.Warning{{Entry: "search-2/search", Message: `no MCP server "search-2" is registered in this organisation`, Suggestion: "search-1/search"}},
		},
		{
			name: "no server registered at all", allow: []string{"github/*"}, servers: registry.RegisteredServers{},
			want: []registry.Warning{{Entry: "github/*", Message: `no MCP server "github" is registered in this organisation`}},
		},
		{
			name: "misspelt server and tool", allow: []string{"githb/creat_issue", "githb/nothing_like_it"}, servers: servers,
			want: []registry.Warning{
				{Entry: "githb/creat_issue", Message: `no MCP server "githb" is registered in this organisation`, Suggestion: "github/create_issue"},
				{Entry: "githb/nothing_like_it", Message: `no MCP server "githb" is registered in this organisation`},
			},
		},
		{
			name: "a tool the server did not offer", allow: []string{"github/creat_issue"}, servers: servers,
			want: []registry.Warning{{Entry: "github/creat_issue", Message: `MCP server "github" had no tool "creat_issue" at its last discovery`, Suggestion: "github/create_issue"}},
		},
		{name: "unknown registrations: MCP entries not checked", allow: []string{"gitlab/*", "x/y"}, servers: nil, want: nil},
		{
			name: "duplicates warn on the repetition", allow: []string{"web_search", "github/*", "web_search", "github/*", "web_search"}, servers: servers,
			want: []registry.Warning{
				{Entry: "web_search", Message: `"web_search" is listed more than once`},
				{Entry: "github/*", Message: `"github/*" is listed more than once`},
				{Entry: "web_search", Message: `"web_search" is listed more than once`},
			},
		},
		{
			name: "warnings in allowlist order", allow: []string{"web_serch", "calculate", "bitbucket/*", "researh"}, servers: servers,
			want: []registry.Warning{
				{Entry: "web_serch", Message: `"web_serch" is not a tool or family name`, Suggestion: "web_search"},
				{Entry: "bitbucket/*", Message: `no MCP server "bitbucket" is registered in this organisation`},
				{Entry: "researh", Message: `"researh" is not a tool or family name`, Suggestion: "research"},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := checkCatalog().CheckAllowlist(tc.allow, tc.servers)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("CheckAllowlist(%q) (-want +got):\n%s", tc.allow, d)
			}
		})
	}
}

func TestWarningString(t *testing.T) {
	w := registry.Warning{Entry: "web_serch", Message: `"web_serch" is not a tool or family name`, Suggestion: "web_search"}
	if got, want := w.String(), `"web_serch" is not a tool or family name; did you mean "web_search"?`; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	w.Suggestion = ""
	if got, want := w.String(), `"web_serch" is not a tool or family name`; got != want {
		t.Errorf("String() without suggestion = %q, want %q", got, want)
	}
}

// TestCheckAllowlistSuggestionDistance: a suggestion is offered only
// within the edit distance allowed for the entry's length: one edit up to
// 4 characters, two up to 8, three beyond.
func TestCheckAllowlistSuggestionDistance(t *testing.T) {
	tests := []struct{ entry, want string }{
		{"cal", "calc"},                 // one edit, short
		{"cl", ""},                      // two edits from "calc": too far for a short name
		{"web_srch", "web_search"},      // two edits, 8 characters
		{"wb_srch", ""},                 // three edits, 7 characters: too far
		{"rsearh_wb", "research_web"},   // three edits, 9 characters
		{"rsrh_wb", ""},                 // five edits
		{"search_web", "research_web"},  // two insertions
		{"memory", ""},                  // far from everything
		{"reserch_web", "research_web"}, // one edit
	}
	for _, tc := range tests {
		ws := checkCatalog().CheckAllowlist([]string{tc.entry}, nil)
		if len(ws) != 1 || ws[0].Suggestion != tc.want {
			t.Errorf("%q: %+v, want one warning suggesting %q", tc.entry, ws, tc.want)
		}
	}
}

// FuzzCheckAllowlist: whatever the entries, the check does not panic, each
// warning is about an entry of the allowlist and names it, and a
// suggestion is never the entry itself and always a name that checks clean.
func FuzzCheckAllowlist(f *testing.F) {
	for _, s := range []string{"web_serch", "github/*", "githb/creat_issue", "", "/", "a/b/c", "web_search\nweb_search", "ünïcode", "github"} {
		f.Add(s)
	}
	servers := registry.RegisteredServers{"github": {"create_issue"}, "fresh": nil}
	c := checkCatalog()
	f.Fuzz(func(t *testing.T, lines string) {
		allow := strings.Split(lines, "\n")
		for _, w := range c.CheckAllowlist(allow, servers) {
			if !slices.Contains(allow, w.Entry) {
				t.Fatalf("warning about %q, not an entry of %q", w.Entry, allow)
			}
			server, _, _ := strings.Cut(w.Entry, "/")
			if !strings.Contains(w.Message, strconv.Quote(w.Entry)) && !strings.Contains(w.Message, strconv.Quote(server)) {
				t.Fatalf("message %q names neither the entry %q nor its server", w.Message, w.Entry)
			}
			if w.Suggestion == "" {
				continue
			}
			if w.Suggestion == w.Entry {
				t.Fatalf("%q suggests itself", w.Entry)
			}
			if again := c.CheckAllowlist([]string{w.Suggestion}, servers); again != nil {
				t.Fatalf("suggestion %q for %q does not check clean: %v", w.Suggestion, w.Entry, again)
			}
		}
	})
}

// TestCheckAgent: the allowlist's warnings in allowlist order, then the
// switches'; nil for a clean agent.
func TestCheckAgent(t *testing.T) {
	c := checkCatalog()
	servers := registry.RegisteredServers{"github": {"create_issue"}}
	if got := c.CheckAgent([]string{"web_search", "github/*"}, servers, map[string]bool{"web_search": false}); got != nil {
		t.Errorf("clean agent: %v, want nil", got)
	}
	got := c.CheckAgent([]string{"web_serch", "gitlab/*"}, servers, map[string]bool{"web_serch": true})
	want := append(c.CheckAllowlist([]string{"web_serch", "gitlab/*"}, servers), c.CheckSwitches(map[string]bool{"web_serch": true})...)
	if len(want) != 3 {
		t.Fatalf("fixture: want 3 warnings, have %v", want)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("CheckAgent (-want +got):\n%s", d)
	}
	if got[2].Field != "switches" {
		t.Errorf("last warning %+v, want the switch's", got[2])
	}
}

// TestNamesServers: an entry with a slash is an MCP server's.
func TestNamesServers(t *testing.T) {
	tests := []struct {
		allow []string
		want  bool
	}{
		{nil, false},
		{[]string{"web_search", "research"}, false},
		{[]string{"web_search", "github/*"}, true},
		{[]string{"github/create_issue"}, true},
	}
	for _, tc := range tests {
		if got := registry.NamesServers(tc.allow); got != tc.want {
			t.Errorf("NamesServers(%q) = %v, want %v", tc.allow, got, tc.want)
		}
	}
}
