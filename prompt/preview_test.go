package prompt_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/prompt"
	"github.com/quiverhq/quiver/tmpl"
)

// TestPreviewEnv: the listed capabilities and tools are on; a catalog
// family is known, declared only when a listed tool or --families names
// it; a family outside the catalog can be declared; the catalog's tools
// serve their macros; and a render against it follows that.
func TestPreviewEnv(t *testing.T) {
	env := prompt.PreviewEnv(richCatalog(), []string{"self_teaching"}, []string{"save_memory", "calculate"}, []string{"url_fetch", "research"})
	want := tmpl.Env{
		Capabilities: map[string]bool{"self_teaching": true},
		Tools:        map[string]bool{"save_memory": true, "calculate": true},
		Families:     map[string]bool{"calc": true, "memory": true, "web_search": false, "url_fetch": true, "research": true},
		Macros: map[string]string{
			"calculator_tool": "calculate", "web_search_tool": "web_search", "news_search_tool": "web_search",
			"url_fetch_tool": "fetch_url", "url_metadata_tool": "fetch_url", "memory_tool": "save_memory",
		},
	}
	if d := cmp.Diff(want, env); d != "" {
		t.Errorf("env (-want +got):\n%s", d)
	}
	res, err := tmpl.Render(tmpl.Author("{{if capability:self_teaching}}Use {memory_tool}.{{/if}} {{if tool_family:web_search}}web{{else}}no web{{/if}}, {web_search_tool}."), env)
	if err != nil {
		t.Fatal(err)
	}
	if wantText := "Use `save_memory`. no web, the web search tool, which is not available right now."; res.Text != wantText {
		t.Errorf("rendered %q, want %q", res.Text, wantText)
	}
	empty := prompt.PreviewEnv(richCatalog(), nil, nil, nil)
	if len(empty.Capabilities) != 0 || len(empty.Tools) != 0 || empty.Families["calc"] || len(empty.Macros) != 6 {
		t.Errorf("nothing listed: %+v, want every family known and off, the macros kept", empty)
	}
}
