package engine_test

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/quiverhq/quiver/builtin"
	"github.com/quiverhq/quiver/builtin/discovery"
	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/mcpclient"
	"github.com/quiverhq/quiver/prompt"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// mcpCatalog150 is the built-in catalog with the 124 MCP-shaped tools of
// builtin/discovery's testdata as an overlay, as an organisation with 16
// servers has it (26 built-ins that selection may give, 150 in all).
func mcpCatalog150(t *testing.T) *registry.Catalog {
	t.Helper()
	data, err := os.ReadFile("../builtin/discovery/testdata/mcp_catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	var listed []struct {
		Server, Name, Description string
		InputSchema               *jsonschema.Schema `json:"inputSchema"`
	}
	if err := json.Unmarshal(data, &listed); err != nil {
		t.Fatal(err)
	}
	var tools []*tool.Tool
	for _, m := range listed {
		spec := tool.Spec{Name: mcpclient.WireName(m.Server, m.Name), Family: "mcp_" + m.Server, Description: m.Description}
		tl, err := tool.Import(spec, m.InputSchema, func(context.Context, tool.Scope, json.RawMessage) (tool.Result, error) { return tool.Result{}, nil })
		if err != nil {
			t.Fatal(err)
		}
		tools = append(tools, tl)
	}
	return builtin.NewCatalog(builtin.CatalogDeps{}).With(registry.Overlay{Tools: tools})
}

// deferralScript is a conversation over the 150 tools: each turn's
// message is also the query the model searches with, and want the tool
// it then calls ("" for a turn that calls none).
var deferralScript = []struct{ msg, want string }{
	{"what's the weather in Hanoi tomorrow", "weather__get_forecast"},
	{"and hour by hour in the afternoon?", "weather__get_hourly_forecast"},
	{"put a calendar event on Friday at 3pm with Minh", "gcal__create_event"},
	{"thanks!", ""},
	{"remember that I prefer morning meetings", "save_memory"},
	{"open a github issue for the login bug", "github__create_issue"},
	{"post a message in slack that the release is out", "slack__post_message"},
	{"what's 17% of 2,340?", "calculate"},
	{"any new weather alerts for the coast?", "weather__get_alerts"},
	{"move the Friday meeting to 4pm", "gcal__update_event"},
	{"great, that's all", ""},
	{"create a jira ticket for the billing error", "jira__create_issue"},
}

// catalogOf is a turn's tool.Catalog for the discovery tools.
type catalogOf struct{ avail, declared registry.Toolset }

func (c catalogOf) Available() []*tool.Tool { return c.avail.Tools() }
func (c catalogOf) Declared(name string) bool {
	_, ok := c.declared.Lookup(name)
	return ok
}

// TestDeferralOn150Tools measures, over deferralScript, what a
// conversation declares with and without deferral: the definition
// characters sent over all model calls, the prefix (definitions then
// system prompt) sent, and how much of it each call shares with the one
// before (what a provider's prefix cache can reuse). Under deferral a
// turn whose tool is not declared searches first (one more model call),
// with the query the message gives, through search_tools itself; a tool
// it does not find counts as a miss.
func TestDeferralOn150Tools(t *testing.T) {
	cat := mcpCatalog150(t)
	var allow []string
	for _, tl := range cat.Tools() {
		if strings.HasPrefix(tl.Family(), "mcp_") && !slices.Contains(allow, tl.Family()) {
			allow = append(allow, tl.Family())
		}
	}
	allow = append(allow, "web_search", "fetch_url", "research_web", "memory", "documents", "knowledge", "budget", "conversation_search", "checklist")
	f := turn.Facts{
		TurnID: "t", Start: time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC),
		Agent:    turn.Agent{Name: "ops", Allow: allow, Switches: map[string]bool{"memory": true, "budget": true, "conversation_search": true}},
		Model:    turn.Model{Provider: "openai", Name: "gpt-4.1-mini", Caps: turn.Capabilities{Tools: true}},
		Backends: []string{"embedding", "web_search"},
	}
	all := cat.Select(f)
	t.Logf("selected %d tools of %d", all.Len(), cat.Len())
	if all.Len() < 140 {
		t.Fatalf("selected %d tools, want the 150-tool catalog's nearly all", all.Len())
	}
	search := discoveryTool(t, cat, discovery.SearchName)
	type stats struct{ calls, defChars, prefixBytes, stableBytes, misses int }
	measure := func(deferOn bool) stats {
		var st stats
		var prev string
		d := engine.Deferral{Off: !deferOn}
		base := d.Defer(cat, all)
		req, err := prompt.Fixed(f, base)
		if err != nil {
			t.Fatal(err)
		}
		system := req.System
		var called []string
		send := func(ts registry.Toolset) {
			var defs []tool.Declaration
			chars := 0
			for _, tl := range ts.Tools() {
				defs = append(defs, tl.Declaration())
				chars += tl.DeclarationChars()
			}
			b, _ := json.Marshal(defs)
			prefix := string(b) + system
			st.calls++
			st.defChars += chars
			st.prefixBytes += len(prefix)
			st.stableBytes += commonPrefix(prefix, prev)
			prev = prefix
		}
		for _, step := range deferralScript {
			ts, _ := cat.Extend(base, all, called)
			if step.want == "" {
				send(ts) // answers
				continue
			}
			if _, ok := ts.Lookup(step.want); !ok {
				send(ts) // calls search_tools
				ctx := tool.WithCatalog(context.Background(), catalogOf{avail: all, declared: ts})
				args, _ := json.Marshal(map[string][]string{"queries": {step.msg}})
				res, err := search.Run(ctx, turn.Scope{}, args)
				if err != nil || res.IsError {
					t.Fatalf("search_tools: %v %s", err, res.Content)
				}
				ts, _ = cat.Extend(ts, all, res.Effect.Declare)
				if _, ok := ts.Lookup(step.want); !ok {
					st.misses++
					t.Logf("search %q did not find %s: %v", step.msg, step.want, res.Effect.Declare)
					continue
				}
			}
			send(ts) // calls the tool
			send(ts) // answers
			if !slices.Contains(called, step.want) {
				called = append(called, step.want)
			}
		}
		return st
	}
	off, on := measure(false), measure(true)
	for _, r := range []struct {
		name string
		s    stats
	}{{"all declared", off}, {"deferred", on}} {
		t.Logf("%-12s model calls %d, definition chars sent %d, prefix bytes sent %d, of them shared with the call before %d (%.1f%%), search misses %d",
			r.name, r.s.calls, r.s.defChars, r.s.prefixBytes, r.s.stableBytes, 100*float64(r.s.stableBytes)/float64(r.s.prefixBytes), r.s.misses)
	}
	// Under 30%: 24.9% when search_tools missed one turn's tool, 27.1%
	// once it found every one (a found tool's turn sends two more calls,
	// and the tools found stay declared for the turns after).
	if on.defChars*10 > off.defChars*3 {
		t.Errorf("deferral sent %d definition characters, not under 30%% of %d", on.defChars, off.defChars)
	}
	if on.misses > 2 {
		t.Errorf("%d of the script's tools not found by search_tools", on.misses)
	}
}

func discoveryTool(t *testing.T, cat *registry.Catalog, name string) *tool.Tool {
	t.Helper()
	tl, ok := cat.Lookup(name)
	if !ok {
		t.Fatalf("the catalog has no %s", name)
	}
	return tl
}

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}
