package prompt_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/quiverhq/quiver/internal/golden"

	"github.com/google/go-cmp/cmp"
	"github.com/quiverhq/quiver/prompt"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/tmpl"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// richCatalog has tools behind several macros and families.
func richCatalog() *registry.Catalog {
	h := func(context.Context, tool.Scope, in) (string, error) { return "", nil }
	mk := func(name, family string, macros []string, always bool, frags ...string) *tool.Tool {
		return tool.New(tool.Spec{Name: name, Family: family, Macros: macros, AlwaysOn: always, Fragments: frags,
			Description: "Does " + name + ". Mentions {memory_tool} and {{if tool:x}}verbatim{{/if}}."}, h)
	}
	c := registry.New()
	c.Register(
		mk("calculate", "calc", []string{"calculator_tool"}, true),
		mk("web_search", "web_search", []string{"web_search_tool", "news_search_tool"}, false,
			"{{if tool_family:url_fetch}}Open promising results with {url_fetch_tool}.{{else}}Answer from the result snippets.{{/if}}"),
		mk("fetch_url", "url_fetch", []string{"url_fetch_tool", "url_metadata_tool"}, false),
		mk("save_memory", "memory", []string{"memory_tool"}, false),
	)
	return c
}

func turnFacts(prompt string, allow []string, switches map[string]bool, tools bool) turn.Facts {
	return turn.Facts{
		Start:  time.Date(2026, 11, 29, 23, 3, 0, 0, time.UTC),
		Caller: turn.Caller{DisplayName: "Ana"},
		Agent:  turn.Agent{Name: "a", Prompt: tmpl.Author(prompt), Allow: allow, Switches: switches},
		Model:  turn.Model{Provider: "openai", Name: "m", Caps: turn.Capabilities{Tools: tools}},
	}
}

func TestSystemRendersAuthoredText(t *testing.T) {
	src := "Hi.\n{{if tool:save_memory}}\nRemember with {memory_tool}.\n{{else}}\nNo memory; {memory_tool}.\n{{/if}}\n{{if capability:flying}}x{{/if}}Search: {web_search_tool}."
	tests := []struct {
		name     string
		facts    turn.Facts
		want     string
		warnings []string
	}{
		{
			name:     "everything allowed",
			facts:    turnFacts(src, []string{"web_search", "url_fetch", "memory"}, nil, true),
			want:     "Hi.\nRemember with `save_memory`.\nSearch: `web_search`.\n\nOpen promising results with `fetch_url`.",
			warnings: []string{`unknown capability "flying" in {{if capability:flying}}; treated as false`},
		},
		{
			name:     "search without the URL reader",
			facts:    turnFacts(src, []string{"web_search"}, nil, true),
			want:     "Hi.\nNo memory; the long-term memory tool, which is not available right now.\nSearch: `web_search`.\n\nAnswer from the result snippets.",
			warnings: []string{`unknown capability "flying" in {{if capability:flying}}; treated as false`},
		},
		{
			name:     "model without tools: macros degrade to prose",
			facts:    turnFacts(src, []string{"web_search", "memory"}, nil, false),
			want:     "Hi.\nNo memory; the long-term memory tool, which is not available right now.\nSearch: the web search tool, which is not available right now.",
			warnings: []string{`unknown capability "flying" in {{if capability:flying}}; treated as false`},
		},
	}
	c := richCatalog()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := prompt.Assemble(tc.facts, c.Select(tc.facts))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, req.System); diff != "" {
				t.Errorf("system (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.warnings, req.Warnings); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWarningsOncePerRender: the agent prompt and the fragments are one
// render, so a warning they share is reported once.
func TestWarningsOncePerRender(t *testing.T) {
	h := func(context.Context, tool.Scope, in) (string, error) { return "", nil }
	c := registry.New()
	c.Register(
		tool.New(tool.Spec{Name: "a", Description: "A.", AlwaysOn: true, Fragments: []string{"{{if capability:flying}}A{{/if}}"}}, h),
		tool.New(tool.Spec{Name: "b", Description: "B.", AlwaysOn: true, Fragments: []string{"{{if capability:flying}}B{{/if}}"}}, h),
	)
	f := turnFacts("{{if capability:flying}}P{{/if}}Plain.", nil, nil, true)
	sys, err := prompt.System(f, c.Select(f))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`unknown capability "flying" in {{if capability:flying}}; treated as false`}
	if diff := cmp.Diff(want, sys.Warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}

// TestOnlyAuthoredTextIsTemplate: text that no admin authored (a caller's
// name, tool descriptions, which later come from MCP servers) reaches the
// model byte for byte.
func TestOnlyAuthoredTextIsTemplate(t *testing.T) {
	c := richCatalog()
	f := turnFacts("Plain.", []string{"memory"}, nil, true)
	f.Caller.DisplayName = "{memory_tool} {{if tool:save_memory}}X{{/if}}"
	req, err := prompt.Assemble(f, c.Select(f))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(req.Context, "{memory_tool} {{if tool:save_memory}}X{{/if}}") {
		t.Errorf("display name was rendered: %q", req.Context)
	}
	for _, d := range req.Tools {
		if !strings.HasSuffix(d.Description, "Mentions {memory_tool} and {{if tool:x}}verbatim{{/if}}.") {
			t.Errorf("description of %s was rendered: %q", d.Name, d.Description)
		}
	}
}

func TestToolUseSwitchOff(t *testing.T) {
	c := richCatalog()
	f := turnFacts("", []string{"web_search"}, map[string]bool{"tool_use": false}, true)
	ts := c.Select(f)
	if ts.Len() != 0 || ts.Excluded()[0].Reason != "tool use is switched off for this agent" {
		t.Fatalf("tool_use off: %d tools, %v", ts.Len(), ts.Excluded())
	}
	sys, err := prompt.System(f, ts)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sys.Text, "You cannot use tools") {
		t.Errorf("default prompt did not take the no-tools branch:\n%s", sys.Text)
	}
}

// TestDefaultPromptGolden renders the shipped default prompt under several
// capability sets.
func TestDefaultPromptGolden(t *testing.T) {
	c := richCatalog()
	sets := []struct {
		name     string
		allow    []string
		switches map[string]bool
		tools    bool
	}{
		{"no-tools", nil, nil, false},
		{"always-on-only", nil, nil, true},
		{"web-and-memory", []string{"web_search", "url_fetch", "memory"}, map[string]bool{"self_teaching": true}, true},
		{"search-without-reader", []string{"web_search"}, map[string]bool{"self_teaching": false}, true},
		{"tool-use-off", []string{"web_search"}, map[string]bool{"tool_use": false, "self_teaching": true}, true},
	}
	for _, s := range sets {
		t.Run(s.name, func(t *testing.T) {
			f := turnFacts("", s.allow, s.switches, s.tools)
			sys, err := prompt.System(f, c.Select(f))
			if err != nil {
				t.Fatal(err)
			}
			if len(sys.Warnings) != 0 {
				t.Errorf("default prompt warns: %q", sys.Warnings)
			}
			golden.Check(t, "default."+s.name+".golden", sys.Text)
		})
	}
}
