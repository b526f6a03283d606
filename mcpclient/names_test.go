package mcpclient

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/tool"
)

// providerName is what every model provider accepts as a function name.
var providerName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,63}$`)

// TestWireName pins the wire names: they are stored in transcripts and
// turn records and sent in cached prompt prefixes, so a change of the
// derivation renames tools people already use, and must fail here.
func TestWireName(t *testing.T) {
	tests := []struct {
		server, tool, want string
	}{
		{"docs", "search", "docs__search"},
		{"local-tools", "calculate", "local-tools__calculate"},
		{"Docs", "Search", "Docs__Search"},
		{"everything", "get-sum", "everything__get-sum"},
		{"srv", "__init__", "srv____init__"},
		// A registration name may start with a digit; a wire name may not.
		{"1password", "lookup", "mcp_1password__lookup"},
		// Characters providers refuse: sanitised, and told apart by a hash
		// of the server and the original name.
		{"github", "search.issues", "github__search_issues_4c2010e4"},
		{"github", "search/issues", "github__search_issues_bde1cbef"},
		{"github", "search_issues", "github__search_issues"},
		{"srv", "has space", "srv__has_space_b38aab35"},
		{"srv", "données", "srv__donn_es_1dbfefac"},
		{"srv", "日本語", "srv__c83978ce"},
		{"srv", "a\x00b", "srv__a_b_525fbde1"},
		{"srv", "", "srv__eb6bf0d8"},
		// Too long: cut to 64 with the hash.
		{"srv", strings.Repeat("n", 65), "srv__" + strings.Repeat("n", 50) + "_0b51d902"},
		{strings.Repeat("s", 32), strings.Repeat("t", 30), strings.Repeat("s", 32) + "__" + strings.Repeat("t", 30)},
		{strings.Repeat("s", 32), strings.Repeat("t", 31), strings.Repeat("s", 32) + "__" + strings.Repeat("t", 21) + "_d95ea547"},
		// Not a registration name (Add never stores one): still valid.
		{"bad_name", "x", "mcp_x_b77482fc__x"},
		{"", "", "mcp_x_0310da26__245dfd04"},
	}
	for _, tc := range tests {
		got := WireName(tc.server, tc.tool)
		if got != tc.want {
			t.Errorf("WireName(%q, %q) = %q, want %q", tc.server, tc.tool, got, tc.want)
		}
		if !providerName.MatchString(got) {
			t.Errorf("WireName(%q, %q) = %q: not a name every provider accepts", tc.server, tc.tool, got)
		}
	}
}

// FuzzWireName: for any server and tool names the wire name is valid for
// every provider and the same on every call; two registration names never
// share a wire name; and two tool names of one server share one only when
// one of them is plain and equals the other's sanitised-and-hashed form,
// which takes a hash collision or a server naming its tools to collide
// (route drops the second then).
func FuzzWireName(f *testing.F) {
	f.Add("docs", "search", "docs2", "search.v2")
	f.Add("1password", "a.b", "a", "a/b")
	f.Add(strings.Repeat("s", 32), strings.Repeat("ü", 128), "mcp", "__")
	f.Add("", "\xff\xfe", "bad_name", "")
	f.Fuzz(func(t *testing.T, server1, tool1, server2, tool2 string) {
		w1, w2 := WireName(server1, tool1), WireName(server2, tool2)
		for _, w := range []string{w1, w2} {
			if !providerName.MatchString(w) {
				t.Fatalf("wire name %q is not valid for every provider", w)
			}
		}
		if again := WireName(server1, tool1); again != w1 {
			t.Fatalf("WireName(%q, %q) = %q then %q", server1, tool1, w1, again)
		}
		if registrationName(server1) != namePattern.MatchString(server1) {
			t.Fatalf("registrationName(%q) = %v, namePattern says otherwise", server1, registrationName(server1))
		}
		valid := namePattern.MatchString(server1) && namePattern.MatchString(server2)
		if valid && server1 != server2 && w1 == w2 {
			t.Fatalf("servers %q and %q share the wire name %q", server1, server2, w1)
		}
		if server1 == server2 && tool1 != tool2 && w1 == w2 {
			part := strings.TrimPrefix(w1, serverPart(server1)+WireSeparator)
			if part != tool1 && part != tool2 {
				t.Fatalf("tools %q and %q of %q share the wire name %q", tool1, tool2, server1, w1)
			}
		}
	})
}

// TestSameToolNameOnTwoServers: two servers offering one tool name both
// keep it, under their own wire names, and each call reaches its server.
func TestSameToolNameOnTwoServers(t *testing.T) {
	e := newEnv(t, nil)
	a, b := startPeer(t, "a", peerOpts{}), startPeer(t, "b", peerOpts{})
	from := func(server string) mcp.ToolHandler {
		return func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "searched on " + server}}}, nil
		}
	}
	addRaw(a.srv, &mcp.Tool{Name: "search", Description: "Searches A."}, from("alpha"))
	addEcho(a.srv, "only_a")
	addRaw(b.srv, &mcp.Tool{Name: "search", Description: "Searches B."}, from("beta"))
	e.add(Registration{Name: "alpha", URL: a.URL})
	e.add(Registration{Name: "beta", URL: b.URL})
	cat, tr := e.overlaid()
	if len(tr.Overlay.Dropped) != 0 {
		t.Errorf("dropped %v, want none", tr.Overlay.Dropped)
	}
	ts := cat.Select(facts("alpha/*", "beta/search"))
	if diff := cmp.Diff([]string{"calculate", "alpha__only_a", "alpha__search", "beta__search"}, ts.Names()); diff != "" {
		t.Errorf("toolset (-want +got):\n%s", diff)
	}
	for name, want := range map[string]string{"alpha__search": "searched on alpha", "beta__search": "searched on beta"} {
		if res, err := run(t, ts, name, `{}`); err != nil || res.Content != want {
			t.Errorf("%s ran %+v, %v; want %q", name, res, err, want)
		}
	}
}

// TestLaterServerRenamesNothing: registering a third server that offers
// the same names changes no wire name, declaration or order of the first
// two, and a toolset stored by names before restores to the same tools.
func TestLaterServerRenamesNothing(t *testing.T) {
	e := newEnv(t, nil)
	peers := map[string]*peer{}
	for _, name := range []string{"alpha", "beta", "gamma"} {
		peers[name] = startPeer(t, name, peerOpts{})
		addEcho(peers[name].srv, "search")
		addEcho(peers[name].srv, "get.page")
	}
	e.add(Registration{Name: "alpha", URL: peers["alpha"].URL})
	e.add(Registration{Name: "beta", URL: peers["beta"].URL})
	declared := func(cat *registry.Catalog) map[string]tool.Declaration {
		out := map[string]tool.Declaration{}
		for _, tl := range cat.Select(facts("alpha/*", "beta/*", "gamma/*")).Tools() {
			out[tl.Name()] = tl.Declaration()
		}
		return out
	}
	before, _ := e.overlaid()
	stored := before.Select(facts("alpha/*", "beta/*")).Names()
	wantNames := []string{"calculate", "alpha__get_page_bb63f98c", "alpha__search", "beta__get_page_ff6500eb", "beta__search"}
	if diff := cmp.Diff(wantNames, stored); diff != "" {
		t.Fatalf("toolset (-want +got):\n%s", diff)
	}
	first := declared(before)

	e.add(Registration{Name: "gamma", URL: peers["gamma"].URL})
	after, _ := e.overlaid()
	second := declared(after)
	for name, d := range first {
		if diff := cmp.Diff(d, second[name]); diff != "" {
			t.Errorf("%s changed after gamma was added (-before +after):\n%s", name, diff)
		}
	}
	if _, ok := second["gamma__search"]; !ok || len(second) != len(first)+2 {
		t.Errorf("after gamma: %v", cmp.Diff(first, second))
	}
	// A turn stored before wire names held the bare name: it is left out,
	// never mapped to one of the servers' tools.
	restored := after.Restore(append(slices.Clone(stored), "search"))
	if diff := cmp.Diff(stored, restored.Names()); diff != "" {
		t.Errorf("restored toolset (-stored +restored):\n%s", diff)
	}
	if got := excluded(restored, "search"); got != "no longer registered" {
		t.Errorf("the old name search is excluded with %q", got)
	}
	if res, err := run(t, restored, "beta__get_page_ff6500eb", `{"text":"x"}`); err != nil || res.Content != "get.page: x" {
		t.Errorf("restored beta__get_page ran %+v, %v; want the server's get.page", res, err)
	}
}

// TestOddToolNamesReachTheirTools: names with characters providers refuse,
// unicode and names over 64 characters are offered under valid wire names
// at most 64 long, and a call reaches the server's tool under its real
// name. A nameless tool and one over MCP's 128 characters are dropped.
func TestOddToolNamesReachTheirTools(t *testing.T) {
	e := newEnv(t, nil)
	long := strings.Repeat("very_long_tool_name_", 6) // 120 characters
	odd := []string{"has.dot", "has space", "files/read", "tra cứu thời tiết", long, long + "2", "a_b", "a.b"}
	// The SDK refuses to list some of these from AddTool only by a log
	// line; the tools that it cannot hold at all are added on the way out.
	p := startPeer(t, "p", peerOpts{receiving: func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if lr, ok := res.(*mcp.ListToolsResult); ok && err == nil {
				lr.Tools = append(lr.Tools,
					&mcp.Tool{Name: "", Description: "Nameless.", InputSchema: map[string]any{"type": "object"}},
					&mcp.Tool{Name: strings.Repeat("x", 129), Description: "Too long.", InputSchema: map[string]any{"type": "object"}},
				)
			}
			return res, err
		}
	}})
	for _, n := range odd {
		addEcho(p.srv, n)
	}
	e.add(Registration{Name: "server-everything", URL: p.URL})
	cat, tr := e.overlaid()
	want := []registry.Exclusion{
		{Name: "server-everything/", Reason: "the tool has no name"},
		{Name: "server-everything/" + strings.Repeat("x", 128), Reason: "name is longer than 128 characters (the MCP limit)"},
	}
	if diff := cmp.Diff(want, tr.Overlay.Dropped); diff != "" {
		t.Errorf("dropped (-want +got):\n%s", diff)
	}
	ts := cat.Select(facts("server-everything/*"))
	seen := map[string]string{}
	for _, tl := range ts.Tools()[1:] {
		o := tl.Spec().Origin
		if o.Server != "server-everything" {
			t.Fatalf("%s has origin %+v", tl.Name(), o)
		}
		if !providerName.MatchString(tl.Name()) {
			t.Errorf("%s (for %q) is not valid for every provider", tl.Name(), o.Tool)
		}
		if prev, dup := seen[tl.Name()]; dup {
			t.Errorf("%q and %q share %s", prev, o.Tool, tl.Name())
		}
		seen[tl.Name()] = o.Tool
		if tl.Name() != WireName("server-everything", o.Tool) {
			t.Errorf("%s is not the wire name of %q", tl.Name(), o.Tool)
		}
		res, err := run(t, ts, tl.Name(), `{"text":"q"}`)
		if err != nil || res.Content != o.Tool+": q" {
			t.Errorf("%s ran %+v, %v; want the server's %q", tl.Name(), res, err, o.Tool)
		}
	}
	if len(seen) != len(odd) {
		t.Errorf("offered %v, want one tool for each of %q", seen, odd)
	}
}

// TestWireNameClashesDropped: the clashes wire names leave possible — a
// server listing a plain name equal to another of its tools' hashed form,
// or a built-in whose name has "__" in it — drop the later tool with a
// reason instead of reaching the catalog's duplicate-name panic.
func TestWireNameClashesDropped(t *testing.T) {
	hashed := WireName("srv", "a.b") // srv__a_b_<hash>
	conn := &Conn{}
	for _, n := range []string{"a.b", strings.TrimPrefix(hashed, "srv__"), "y"} {
		conn.tools = append(conn.tools, &mcp.Tool{Name: n, InputSchema: map[string]any{"type": "object"}})
	}
	states := []serverState{
		{reg: store.MCPServer{ID: "1", Name: "srv", Type: store.MCPGeneral}, conn: conn},
		{reg: store.MCPServer{ID: "2", Name: "x", Type: store.MCPGeneral}, conn: &Conn{tools: []*mcp.Tool{{Name: "y", InputSchema: map[string]any{"type": "object"}}}}},
	}
	base := builtins()
	base.Register(tool.NewRaw(tool.Spec{Name: "x__y", Description: "A built-in with a double underscore."}, schemaObject(),
		func(context.Context, tool.Scope, json.RawMessage) (tool.Result, error) { return tool.Result{}, nil }))
	imp := func(st serverState, t mcpTool, family string, macros []string, _ tool.Spec) (*tool.Tool, error) {
		return importTool(t.Tool, importSpec{server: st.reg.Name, family: family, macros: macros,
			call: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) { return &mcp.CallToolResult{}, nil }})
	}
	r := route(states, base, imp)
	want := []registry.Exclusion{
		{Name: "srv/" + strings.TrimPrefix(hashed, "srv__"), Reason: "its name " + hashed + " is already taken by srv/a.b"},
		{Name: "x/y", Reason: "its name x__y is a built-in tool's"},
	}
	if diff := cmp.Diff(want, r.overlay.Dropped); diff != "" {
		t.Errorf("dropped (-want +got):\n%s", diff)
	}
	var names []string
	for _, tl := range r.overlay.Tools {
		names = append(names, tl.Name())
	}
	if diff := cmp.Diff([]string{hashed, "srv__y"}, names); diff != "" {
		t.Errorf("routed (-want +got):\n%s", diff)
	}
	base.With(r.overlay) // must not panic
}

func TestDescribeNames(t *testing.T) {
	tests := []struct {
		tools []string
		want  string
	}{
		{nil, "Discovery unknown"},
		{[]string{}, "None discovered"},
		{[]string{"search", "get.page", "say\x1b[2J"}, `docs__search, docs__get_page_` + WireName("docs", "get.page")[len("docs__get_page_"):] + ` ("get.page"), ` + WireName("docs", "say\x1b[2J") + ` ("say\x1b[2J")`},
	}
	for _, tc := range tests {
		if got := DescribeNames("docs", tc.tools); got != tc.want {
			t.Errorf("DescribeNames(%q) = %q, want %q", tc.tools, got, tc.want)
		}
	}
	if got := WireNames("docs", []string{"a.b"}); !cmp.Equal(got, []ToolName{{Name: WireName("docs", "a.b"), Tool: "a.b"}}) || WireNames("docs", nil) != nil {
		t.Errorf("WireNames = %+v", got)
	}
}

// TestDroppedNamesPrintable: a tool a server lists under a name with
// terminal control codes is reported (when dropped) with those codes
// replaced, so a hostile server cannot write escape sequences to a
// terminal or a log through an exclusion line.
func TestDroppedNamesPrintable(t *testing.T) {
	long := "\x1b[2J" + strings.Repeat("a", MaxToolNameChars+10)
	states := []serverState{{reg: store.MCPServer{ID: "1", Name: "srv", Type: store.MCPGeneral},
		conn: &Conn{tools: []*mcp.Tool{{Name: long, InputSchema: map[string]any{"type": "object"}}}}}}
	imp := func(st serverState, t mcpTool, family string, macros []string, _ tool.Spec) (*tool.Tool, error) {
		return importTool(t.Tool, importSpec{server: st.reg.Name, family: family, macros: macros,
			call: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) { return &mcp.CallToolResult{}, nil }})
	}
	r := route(states, builtins(), imp)
	if len(r.overlay.Dropped) != 1 {
		t.Fatalf("dropped %v, want the over-long name", r.overlay.Dropped)
	}
	if name := r.overlay.Dropped[0].Name; strings.ContainsRune(name, '\x1b') || !strings.HasPrefix(name, "srv/\uFFFD[2J") {
		t.Errorf("dropped name %q holds a control code or lost its text", name)
	}
}
