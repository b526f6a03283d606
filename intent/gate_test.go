package intent_test

import (
	"context"
	"encoding/json"
	"slices"
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

// gateCatalog registers stand-ins of the real tools, in a mixed order: the
// always-on helpers among them, a workspace tool, an MCP replacement of
// web_search and a tool no target opens.
func gateCatalog() (*registry.Catalog, registry.Toolset) {
	c := registry.New()
	c.Register(
		rawTool("list_files", "workspace", true),
		rawTool("ask_clarifying_question", "", true),
		rawTool("web_search", "web_search", false),
		rawTool("schedule_task", "", false),
		rawTool("fetch_url", "url_fetch", false),
		rawTool("generate_image", "", false),
		rawTool("save_memory", "", false),
		rawTool("review_capabilities", "", false),
		rawTool("calculate", "", true),
		rawTool("search-1_brave_search", "web_search", false),
		rawTool("read_tool_result", "", true),
		rawTool("weather_widget", "", false),
		rawTool("generate_anime_image", "", false),
		rawTool("read_transcript", "", true),
	)
	var allow []string
	for _, t := range c.Tools() {
		allow = append(allow, t.Name())
	}
	facts := turn.Facts{Model: turn.Model{Name: "m", Caps: turn.Capabilities{Tools: true}}, Agent: turn.Agent{Allow: allow}}
	return c, c.Select(facts)
}

// helpers are gateCatalog's always-on helpers in registration order.
var helpers = []string{"ask_clarifying_question", "calculate", "read_tool_result", "read_transcript"}

// withHelpers returns the helpers followed by names.
func withHelpers(names ...string) []string { return append(slices.Clone(helpers), names...) }

func TestGate(t *testing.T) {
	c, selected := gateCatalog()
	gateAll := intent.GateOptions{GateAlwaysOn: true}
	cases := []struct {
		name string
		opts intent.GateOptions
		open []string
		want []string
	}{
		{"nothing open declares the helpers", intent.GateOptions{}, nil, helpers},
		{"one target comes after the helpers", intent.GateOptions{}, []string{intent.Reminder}, withHelpers("schedule_task")},
		{"open order arranges declarations after the helpers", intent.GateOptions{}, []string{intent.Image, intent.Search},
			withHelpers("generate_image", "generate_anime_image", "web_search", "fetch_url", "search-1_brave_search")},
		{"the workspace set is gated", intent.GateOptions{}, []string{intent.Files, intent.Search},
			withHelpers("list_files", "web_search", "fetch_url", "search-1_brave_search")},
		{"a helper's own target adds nothing", intent.GateOptions{}, []string{intent.Calculator}, helpers},
		{"gating the helpers too, nothing open declares nothing", gateAll, nil, nil},
		{"gating the helpers too, one target", gateAll, []string{intent.Reminder}, []string{"schedule_task"}},
		{"gating the helpers too, open order arranges declarations", gateAll, []string{intent.Image, intent.Search},
			[]string{"generate_image", "generate_anime_image", "web_search", "fetch_url", "search-1_brave_search", "read_tool_result"}},
		{"gating the helpers too, the other order", gateAll, []string{intent.Search, intent.Image},
			[]string{"web_search", "fetch_url", "search-1_brave_search", "read_tool_result", "generate_image", "generate_anime_image"}},
		{"gating the helpers too, the calculator opens", gateAll, []string{intent.Calculator}, []string{"calculate"}},
		{"capabilities brings the URL reader", gateAll, []string{intent.Capabilities}, []string{"fetch_url", "review_capabilities"}},
		{"a tool two targets share is declared once, with the first", gateAll, []string{intent.Files, intent.Search},
			[]string{"list_files", "read_tool_result", "web_search", "fetch_url", "search-1_brave_search"}},
		{"a target whose tools were not selected adds nothing", gateAll, []string{intent.Video}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := intent.Gate(selected, c, tc.open, tc.opts)
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

// TestGateStablePrefix opens targets one by one, as a conversation does,
// and checks that each turn's declarations start with the last turn's:
// the helpers never move when a target opens.
func TestGateStablePrefix(t *testing.T) {
	c, selected := gateCatalog()
	for _, opts := range []intent.GateOptions{{}, {GateAlwaysOn: true}} {
		var open, prev []string
		for _, target := range []string{intent.Image, intent.Calculator, intent.Search, intent.Files, intent.Reminder} {
			open = append(open, target)
			got := intent.Gate(selected, c, open, opts).Names()
			if len(got) < len(prev) || !slices.Equal(prev, got[:len(prev)]) {
				t.Errorf("%+v: after opening %v declared %v, which does not start with %v", opts, open, got, prev)
			}
			prev = got
		}
	}
}

func TestGateReasons(t *testing.T) {
	c, selected := gateCatalog()
	const gated = "deliberate tool mode, always-on tools gated by the organisation: "
	cases := []struct {
		name string
		opts intent.GateOptions
		want map[string]string
		// fragments is how many distinct fragments the declared tools keep.
		fragments int
	}{
		{"helpers kept", intent.GateOptions{}, map[string]string{
			"web_search":            "deliberate tool mode: nothing in the conversation asks for search",
			"search-1_brave_search": "deliberate tool mode: nothing in the conversation asks for search",
			"fetch_url":             "deliberate tool mode: nothing in the conversation asks for search or capabilities",
			"schedule_task":         "deliberate tool mode: nothing in the conversation asks for reminder",
			"list_files":            "deliberate tool mode: nothing in the conversation asks for files",
			"weather_widget":        "deliberate tool mode: not a tool the mode opens",
		}, len(helpers) + 2},
		{"helpers gated too", intent.GateOptions{GateAlwaysOn: true}, map[string]string{
			"web_search":              "deliberate tool mode: nothing in the conversation asks for search",
			"list_files":              "deliberate tool mode: nothing in the conversation asks for files",
			"weather_widget":          "deliberate tool mode: not a tool the mode opens",
			"ask_clarifying_question": gated + "no request opens it, so it is never declared",
			"read_transcript":         gated + "no request opens it, so it is never declared",
			"calculate":               gated + "nothing in the conversation asks for calculator",
			"read_tool_result":        gated + "nothing in the conversation asks for search or files or code",
		}, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := intent.Gate(selected, c, []string{intent.Image}, tc.opts)
			reasons := map[string]string{}
			for _, e := range got.Excluded() {
				reasons[e.Name] = e.Reason
			}
			for name, w := range tc.want {
				if r := reasons[name]; r != w {
					t.Errorf("%s: reason %q, want %q", name, r, w)
				}
			}
			if !tc.opts.GateAlwaysOn {
				for _, name := range helpers {
					if r, ok := reasons[name]; ok {
						t.Errorf("helper %s left out: %q", name, r)
					}
				}
			}
			if len(got.Fragments()) != tc.fragments {
				t.Errorf("fragments %q, want %d", got.Fragments(), tc.fragments)
			}
			if fam := got.Families(); fam["web_search"] || !fam["generate_image"] {
				t.Errorf("families %v", fam)
			}
		})
	}
}

// TestExplain: each declared tool says which rule declared it — the
// helpers kept, a target this message opened with its match, or one an
// earlier turn opened.
func TestExplain(t *testing.T) {
	c, selected := gateCatalog()
	res := intent.Result{Targets: []string{intent.Search}, Matches: []intent.Match{
		{Target: intent.Search, Trigger: "look it up", Source: intent.SourcePack, Lang: "en"},
	}}
	open := []string{intent.Image, intent.Search}
	kept := intent.ReasonKept
	cases := []struct {
		name string
		opts intent.GateOptions
		want []intent.Declared
	}{
		{"helpers kept", intent.GateOptions{}, []intent.Declared{
			{"ask_clarifying_question", kept}, {"calculate", kept}, {"read_tool_result", kept}, {"read_transcript", kept},
			{"generate_image", "opened by: image (earlier in this conversation)"},
			{"generate_anime_image", "opened by: image (earlier in this conversation)"},
			{"web_search", `opened by: search (phrase "look it up", pack)`},
			{"fetch_url", `opened by: search (phrase "look it up", pack)`},
			{"search-1_brave_search", `opened by: search (phrase "look it up", pack)`},
		}},
		{"helpers gated too", intent.GateOptions{GateAlwaysOn: true}, []intent.Declared{
			{"generate_image", "opened by: image (earlier in this conversation)"},
			{"generate_anime_image", "opened by: image (earlier in this conversation)"},
			{"web_search", `opened by: search (phrase "look it up", pack)`},
			{"fetch_url", `opened by: search (phrase "look it up", pack)`},
			{"search-1_brave_search", `opened by: search (phrase "look it up", pack)`},
			{"read_tool_result", `opened by: search (phrase "look it up", pack)`},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := intent.Explain(intent.Gate(selected, c, open, tc.opts), res, open, tc.opts)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Explain (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOpenedBy(t *testing.T) {
	cases := []struct {
		m    intent.Match
		want string
	}{
		{intent.Match{Target: "image", Trigger: "pfp", Source: intent.SourceCustom}, `opened by: image (phrase "pfp", custom)`},
		{intent.Match{Target: "media-analysis", Trigger: "image attachment", Source: intent.SourceAttachment}, "opened by: media-analysis (image attachment)"},
		{intent.Match{Target: "apps", Trigger: "^", Source: intent.SourceAlways}, "opened by: apps (custom trigger ^, every turn)"},
		{intent.Match{Target: "search", Trigger: "x", Source: intent.SourceConversation}, "opened by: search (earlier in this conversation)"},
	}
	for _, tc := range cases {
		if got := intent.OpenedBy(tc.m); got != tc.want {
			t.Errorf("OpenedBy(%+v) = %q, want %q", tc.m, got, tc.want)
		}
	}
}

func TestGateKeepsSelectionExclusions(t *testing.T) {
	c, _ := gateCatalog()
	// An agent that allows only the web_search family: selection leaves the
	// other optional tools out with its own reason, and Gate keeps it.
	facts := turn.Facts{Model: turn.Model{Caps: turn.Capabilities{Tools: true}}, Agent: turn.Agent{Allow: []string{"web_search"}}}
	got := intent.Gate(c.Select(facts), c, []string{intent.Search, intent.Image}, intent.GateOptions{})
	if diff := cmp.Diff(withHelpers("web_search", "search-1_brave_search"), got.Names()); diff != "" {
		t.Errorf("declared (-want +got):\n%s", diff)
	}
	for _, e := range got.Excluded() {
		if e.Name == "generate_image" && e.Reason != "not in the agent's allowlist" {
			t.Errorf("generate_image: reason %q", e.Reason)
		}
	}
	// A model without tools gets no helper either: Gate never adds one.
	none := intent.Gate(c.Select(turn.Facts{}), c, nil, intent.GateOptions{})
	if none.Len() != 0 {
		t.Errorf("a model without tools declared %v", none.Names())
	}
}
