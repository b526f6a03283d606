package tmpl_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/quiverhq/quiver/tmpl"
)

var env = tmpl.Env{
	Capabilities: map[string]bool{"self_teaching": true, "web_search": true, "tool_use": true},
	Tools:        map[string]bool{"save_memory": true, "web_search": true, "calculate": true, "mcp_search_pages": true},
	Families:     map[string]bool{"web_search": true, "url_fetch": false, "workspace": true, "memory": true},
	Macros:       map[string]string{"calculator_tool": "calculate", "list_files_tool": "list_files"},
}

func TestConditions(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"capability on", "a{{if capability:self_teaching}}X{{/if}}b", "aXb"},
		{"capability off", "a{{if capability:voice_message}}X{{/if}}b", "ab"},
		{"else branch", "{{if capability:voice_message}}X{{else}}Y{{/if}}", "Y"},
		{"negation", "{{if !capability:voice_message}}X{{else}}Y{{/if}}", "X"},
		{"tool declared", "{{if tool:save_memory}}X{{/if}}", "X"},
		{"tool not declared", "{{if tool:update_memory}}X{{else}}Y{{/if}}", "Y"},
		{"unknown tool name is just absent", "{{if !tool:no_such_tool}}X{{/if}}", "X"},
		{"family declared", "{{if tool_family:web_search}}X{{/if}}", "X"},
		{"base family absent", "{{if tool_family:url_fetch}}X{{else}}Y{{/if}}", "Y"},
		{"catalog family", "{{if tool_family:memory}}X{{/if}}", "X"},
		{"case-insensitive keywords and names", "{{IF Capability:Self_Teaching}}X{{ELSE}}Y{{/If}}", "X"},
		{"whitespace inside braces", "{{  if   !capability:voice_message  }}X{{ else }}Y{{ /if }}", "X"},
		{"whitespace between / and if", "{{if capability:voice_message}}X{{else}}Y{{/ if}}Z{{if tool:save_memory}}W{{ / IF }}", "YZW"},
		{"nesting", "{{if capability:self_teaching}}A{{if tool:update_memory}}B{{else}}C{{/if}}D{{/if}}", "ACD"},
		{"nesting in else", "{{if capability:voice_message}}A{{else}}{{if tool:save_memory}}B{{/if}}{{/if}}", "B"},
		{"unknown capability is false", "{{if capability:flying}}X{{else}}Y{{/if}}", "Y"},
		{"unknown capability is false even negated", "{{if !capability:flying}}X{{else}}Y{{/if}}", "Y"},
		{"unknown family is false even negated", "{{if !tool_family:teleport}}X{{else}}Y{{/if}}", "Y"},
		{"handlebars form is text", "{{#if x}}A{{/if}}", "{{#if x}}A"},
		{"not a directive", "{{iffy}} {{elsewhere}}", "{{iffy}} {{elsewhere}}"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := render(t, tc.in)
			if diff := cmp.Diff(tc.want, got.Text); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func render(t *testing.T, in string) tmpl.Result {
	t.Helper()
	got, err := tmpl.Render(tmpl.Author(in), env)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return got
}

func TestMalformed(t *testing.T) {
	tests := []struct {
		name, in, want string
		warning        string
	}{
		{"empty condition", "a{{if}}X{{else}}Y{{/if}}b", "ab", "empty condition; block dropped"},
		{"unparsable condition", "a{{if capability:a and capability:b}}X{{else}}Y{{/if}}b", "ab", "cannot parse condition"},
		{"unknown kind", "a{{if feature:x}}X{{/if}}b", "ab", "cannot parse condition"},
		{"second else", "a{{if capability:self_teaching}}X{{else}}Y{{else}}Z{{/if}}b", "ab", "second {{else}}"},
		{"text after else", "a{{if capability:self_teaching}}X{{else if tool:x}}Y{{/if}}b", "ab", "unexpected text after else"},
		{"text after /if", "a{{if capability:self_teaching}}X{{/if capability}}b", "ab", "unexpected text after /if"},
		{"malformed inner only", "{{if capability:self_teaching}}A{{if}}B{{/if}}C{{/if}}", "AC", "empty condition"},
		{"unclosed drops to the end", "keep{{if capability:self_teaching}}X{{if tool:save_memory}}Y{{/if}} tail", "keep", "has no closing {{/if}}"},
		{"stray else removed alone", "a{{else}}b", "ab", "stray {{else}}"},
		{"stray /if removed alone", "a{{ /IF }}b", "ab", "stray {{ /IF }}"},
		{"unknown capability warns", "{{if capability:flying}}X{{/if}}", "", `unknown capability "flying"`},
		{"malformed in the branch not taken still warns", "a{{if capability:voice_message}}{{if}}X{{/if}}{{/if}}b", "ab", "empty condition; block dropped"},
		{"malformed in the else not taken still warns", "{{if capability:self_teaching}}A{{else}}{{if tool:x}}{{else}}{{else}}{{/if}}{{/if}}", "A", "second {{else}}"},
		{"unknown family warns", "{{if tool_family:teleport}}X{{/if}}", "", `unknown tool family "teleport"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := render(t, tc.in)
			if diff := cmp.Diff(tc.want, got.Text); diff != "" {
				t.Errorf("text (-want +got):\n%s", diff)
			}
			if len(got.Warnings) != 1 || !strings.Contains(got.Warnings[0], tc.warning) {
				t.Errorf("warnings = %q, want one containing %q", got.Warnings, tc.warning)
			}
		})
	}
}

func TestWarningsOncePerDistinctMessage(t *testing.T) {
	got := render(t, "{{if capability:flying}}A{{/if}}\n{{if capability:flying}}B{{/if}}\n{{if capability:swimming}}C{{/if}}")
	want := []string{
		`unknown capability "flying" in {{if capability:flying}}; treated as false`,
		`unknown capability "swimming" in {{if capability:swimming}}; treated as false`,
	}
	if diff := cmp.Diff(want, got.Warnings); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestStandaloneLines(t *testing.T) {
	in := "Intro\n{{if capability:self_teaching}}\nSave facts with {memory_tool}.\n{{else}}\nDo not promise to remember.\n{{/if}}\nOutro\n"
	tests := []struct {
		name string
		env  tmpl.Env
		want string
	}{
		{"then branch", env, "Intro\nSave facts with `save_memory`.\nOutro\n"},
		{"else branch", tmpl.Env{}, "Intro\nDo not promise to remember.\nOutro\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tmpl.Render(tmpl.Author(in), tc.env)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.Text); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	more := []struct{ name, in, want string }{
		{"indented directives and CRLF", "A\r\n  {{if capability:voice_message}}  \r\nX\r\n\t{{/if}}\r\nB\r\n", "A\r\nB\r\n"},
		{"inline directive keeps surroundings", "A {{if capability:voice_message}}X{{/if}} B\n", "A  B\n"},
		{"directive at end without newline", "A\n{{if capability:self_teaching}}\nX\n{{/if}}", "A\nX\n"},
		{"two directives on one line are inline", "A\n{{if capability:voice_message}}{{/if}}\nB", "A\n\nB"},
		{"nested standalone", "A\n{{if capability:self_teaching}}\n  {{if tool:save_memory}}\nX\n  {{/if}}\n{{/if}}\nB\n", "A\nX\nB\n"},
		{"empty block leaves no blank line", "A\n\n{{if capability:voice_message}}\nX\n{{/if}}\nB\n", "A\n\nB\n"},
	}
	for _, tc := range more {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, render(t, tc.in).Text); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestMacros(t *testing.T) {
	tests := []struct {
		name string
		env  tmpl.Env
		in   string
		want string
	}{
		{"static declared", env, "Use {memory_tool}.", "Use `save_memory`."},
		{"static not declared becomes prose", env, "Use {memory_update_tool}.", "Use the long-term memory update tool, which is not available right now."},
		{"alias", tmpl.Env{Tools: map[string]bool{"manage_message": true}}, "{pin_tool} {manage_message_tool}", "`manage_message` `manage_message`"},
		{"dynamic built-in", env, "Search with {web_search_tool} or {news_search_tool}.", "Search with `web_search` or `web_search`."},
		{"dynamic replacement", tmpl.Env{Tools: env.Tools, Macros: map[string]string{"web_search_tool": "mcp_search_pages"}}, "{web_search_tool}", "`mcp_search_pages`"},
		{"replacement not declared is prose", tmpl.Env{Tools: env.Tools, Macros: map[string]string{"url_fetch_tool": "mcp_fetch"}}, "{url_fetch_tool}", "the URL reading tool, which is not available right now"},
		{"tool-declared macro", env, "{calculator_tool}", "`calculate`"},
		{"tool-declared macro absent", env, "{list_files_tool}", "the list files tool, which is not available right now"},
		{"unknown names left as written", env, `{"json": {unknown_tool}} {Memory_tool} { memory_tool }`, `{"json": {unknown_tool}} {Memory_tool} { memory_tool }`},
		{"expansion is not re-parsed", tmpl.Env{Tools: map[string]bool{"{memory_tool}": true}, Macros: map[string]string{"x_tool": "{memory_tool}"}}, "{x_tool}", "`{memory_tool}`"},
		{"macro inside chosen branch only", env, "{{if capability:voice_message}}{voice_message_tool}{{else}}{memory_tool}{{/if}}", "`save_memory`"},
		{"double braces around macro", env, "{{memory_tool}}", "{`save_memory`}"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tmpl.Render(tmpl.Author(tc.in), tc.env)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.Text); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestLimits(t *testing.T) {
	if _, err := tmpl.Parse(tmpl.Author(strings.Repeat("x", tmpl.MaxTemplateBytes))); err != nil {
		t.Errorf("template at the size limit refused: %v", err)
	}
	if _, err := tmpl.Parse(tmpl.Author(strings.Repeat("x", tmpl.MaxTemplateBytes+1))); err == nil || !strings.Contains(err.Error(), "over the limit of 65536") {
		t.Errorf("oversized template: err = %v", err)
	}
	deep := func(n int) string {
		return strings.Repeat("{{if tool:a}}", n) + "x" + strings.Repeat("{{/if}}", n)
	}
	if _, err := tmpl.Parse(tmpl.Author(deep(tmpl.MaxDepth))); err != nil {
		t.Errorf("nesting at the depth limit refused: %v", err)
	}
	if _, err := tmpl.Parse(tmpl.Author(deep(tmpl.MaxDepth + 1))); err == nil || !strings.Contains(err.Error(), "deeper than 32") {
		t.Errorf("too deep: err = %v", err)
	}
	// The shortest macro expands to its longest prose: the rendered cap holds.
	many := strings.Repeat("{pin_tool}", tmpl.MaxTemplateBytes/len("{pin_tool}"))
	if _, err := tmpl.Render(tmpl.Author(many), tmpl.Env{}); err == nil || !strings.Contains(err.Error(), "rendered template") {
		t.Errorf("rendered cap: err = %v", err)
	}
}

func TestParseOnceRenderMany(t *testing.T) {
	tp, err := tmpl.Parse(tmpl.Author("{{if capability:self_teaching}}{memory_tool}{{else}}no{{/if}}"))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := tp.Render(env)
	b, _ := tp.Render(tmpl.Env{})
	if a.Text != "`save_memory`" || b.Text != "no" {
		t.Errorf("renders %q, %q", a.Text, b.Text)
	}
}
