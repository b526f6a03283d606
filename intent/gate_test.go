package intent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/quiverhq/quiver/intent"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// rawTool builds a tool named like a real one, with an empty object schema.
func rawTool(name, family string, alwaysOn bool) *tool.Tool {
	return tool.NewRaw(tool.Spec{
		Name: name, Family: family, AlwaysOn: alwaysOn, Description: "Test stand-in for " + name + ".",
		Fragments: []string{"Fragment of " + name + "."},
	}, &jsonschema.Schema{Type: "object"}, func(context.Context, tool.Scope, json.RawMessage) (tool.Result, error) {
		return tool.Result{}, nil
	})
}

// gateCatalog registers stand-ins of the real tools, in a mixed order, plus
// an MCP replacement of web_search and a tool no target opens.
func gateCatalog() (*registry.Catalog, registry.Toolset) {
	c := registry.New()
	c.Register(
		rawTool("list_files", "workspace", true),
		rawTool("web_search", "web_search", false),
		rawTool("schedule_task", "", false),
		rawTool("fetch_url", "url_fetch", false),
		rawTool("generate_image", "", false),
		rawTool("save_memory", "", false),
		rawTool("review_capabilities", "", false),
		rawTool("calculate", "", false),
		rawTool("search-1_brave_search", "web_search", false),
		rawTool("read_tool_result", "", true),
		rawTool("weather_widget", "", false),
		rawTool("generate_anime_image", "", false),
	)
	var allow []string
	for _, t := range c.Tools() {
		allow = append(allow, t.Name())
	}
	facts := turn.Facts{Model: turn.Model{Name: "m", Caps: turn.Capabilities{Tools: true}}, Agent: turn.Agent{Allow: allow}}
	return c, c.Select(facts)
}

func TestGate(t *testing.T) {
	c, selected := gateCatalog()
	cases := []struct {
		name string
		open []string
		want []string
	}{
		{"nothing open declares nothing", nil, nil},
		{"one target", []string{intent.Reminder}, []string{"schedule_task"}},
		{"open order arranges declarations", []string{intent.Image, intent.Search},
			[]string{"generate_image", "generate_anime_image", "web_search", "fetch_url", "search-1_brave_search", "read_tool_result"}},
		{"the other order", []string{intent.Search, intent.Image},
			[]string{"web_search", "fetch_url", "search-1_brave_search", "read_tool_result", "generate_image", "generate_anime_image"}},
		{"capabilities brings the URL reader", []string{intent.Capabilities}, []string{"fetch_url", "review_capabilities"}},
		{"a tool two targets share is declared once, with the first", []string{intent.Files, intent.Search},
			[]string{"list_files", "read_tool_result", "web_search", "fetch_url", "search-1_brave_search"}},
		{"a target whose tools were not selected adds nothing", []string{intent.Video}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := intent.Gate(selected, c, tc.open)
			if diff := cmp.Diff(tc.want, got.Names(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("declared (-want +got):\n%s", diff)
			}
			if got.Len()+len(got.Excluded()) != c.Len() {
				t.Errorf("%d declared + %d excluded, want %d catalog tools", got.Len(), len(got.Excluded()), c.Len())
			}
			for _, name := range got.Names() {
				if _, ok := selected.Lookup(name); !ok {
					t.Errorf("Gate added %s, which selection left out", name)
				}
			}
		})
	}
}

func TestGateReasons(t *testing.T) {
	c, selected := gateCatalog()
	got := intent.Gate(selected, c, []string{intent.Image})
	reasons := map[string]string{}
	for _, e := range got.Excluded() {
		reasons[e.Name] = e.Reason
	}
	want := map[string]string{
		"web_search":            "nothing in the conversation asks for search",
		"search-1_brave_search": "nothing in the conversation asks for search",
		"fetch_url":             "nothing in the conversation asks for search or capabilities",
		"schedule_task":         "nothing in the conversation asks for reminder",
		"list_files":            "nothing in the conversation asks for files",
		"weather_widget":        "not a tool the mode opens",
	}
	for name, w := range want {
		if r := reasons[name]; !strings.HasPrefix(r, "deliberate tool mode: ") || !strings.HasSuffix(r, w) {
			t.Errorf("%s: reason %q, want one ending %q", name, r, w)
		}
	}
	if len(got.Fragments()) != 2 {
		t.Errorf("fragments %q, want those of the two image tools", got.Fragments())
	}
	if fam := got.Families(); fam["web_search"] || !fam["generate_image"] {
		t.Errorf("families %v", fam)
	}
}

func TestGateKeepsSelectionExclusions(t *testing.T) {
	c, _ := gateCatalog()
	// An agent that allows only the web_search family: selection leaves the
	// other optional tools out with its own reason, and Gate keeps it.
	facts := turn.Facts{Model: turn.Model{Caps: turn.Capabilities{Tools: true}}, Agent: turn.Agent{Allow: []string{"web_search"}}}
	got := intent.Gate(c.Select(facts), c, []string{intent.Search, intent.Image})
	if diff := cmp.Diff([]string{"web_search", "search-1_brave_search", "read_tool_result"}, got.Names()); diff != "" {
		t.Errorf("declared (-want +got):\n%s", diff)
	}
	for _, e := range got.Excluded() {
		if e.Name == "generate_image" && e.Reason != "not in the agent's allowlist" {
			t.Errorf("generate_image: reason %q", e.Reason)
		}
	}
}
