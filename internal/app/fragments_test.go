package app_test

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/builtin"
	"github.com/quiverhq/quiver/builtin/webrules"
	"github.com/quiverhq/quiver/internal/app"
	"github.com/quiverhq/quiver/registry"
)

// turnSystem runs quiver turn for an agent file and returns the turn.
func turnSystem(t *testing.T, def string) app.TurnOutput {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "a.yaml")
	writeFile(t, file, def)
	code, out, stderr := run(t, dir, "turn", "--agent", file, "--json", "hello")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got app.TurnOutput
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestToolGuidanceTravelsWithTools: each tool's guidance reaches the
// system prompt in the turns that declare the tool, whatever prompt the
// agent wrote; a paragraph several tools share appears once, in
// registration order; the default prompt repeats none of it.
func TestToolGuidanceTravelsWithTools(t *testing.T) {
	var (
		calc      = "For arithmetic whose exact result matters" // also how the old default prompt said it
		workspace = "The workspace is this user's private folder"
		queries   = webrules.Queries()
		untrusted = webrules.Untrusted()
		fetch     = "Read a link the user gives with `fetch_url` before describing it"
		route     = "use `research_web` when the answer has to be read out of several pages"
	)
	tests := []struct {
		name    string
		def     string
		inOrder []string
		absent  []string
	}{
		{
			name:    "own prompt, tools: [web_search]",
			def:     "name: a\nprompt: Be brief.\ntools: [web_search]\n",
			inOrder: []string{"Be brief.", workspace, calc, queries, untrusted},
			absent:  []string{fetch, route},
		},
		{
			name:    "own prompt, no optional tools",
			def:     "name: a\nprompt: Be brief.\ntools: []\n",
			inOrder: []string{"Be brief.", workspace, calc},
			absent:  []string{queries, untrusted, fetch, route},
		},
		{
			name:    "own prompt, web_search switched off",
			def:     "name: a\nprompt: Be brief.\ntools: [web_search, research]\nswitches: {web_search: false}\n",
			inOrder: []string{"Be brief.", workspace, calc},
			absent:  []string{queries, untrusted, route},
		},
		{
			name:    "every web tool: shared paragraphs once, in registration order",
			def:     "name: a\nprompt: Be brief.\ntools: [research, url_fetch, web_search]\n",
			inOrder: []string{"Be brief.", workspace, calc, queries, untrusted, fetch, route},
		},
		{
			name:    "default prompt, every web tool",
			def:     "name: a\ntools: [web_search, url_fetch, research]\n",
			inOrder: []string{"You can use tools.", workspace, calc, queries, untrusted, fetch, route},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := turnSystem(t, tc.def)
			if len(out.Warnings) != 0 {
				t.Errorf("template warnings: %q", out.Warnings)
			}
			sys := out.System
			at := 0
			for _, want := range tc.inOrder {
				if n := strings.Count(sys, want); n != 1 {
					t.Errorf("%q appears %d times, want once, in:\n%s", want, n, sys)
					continue
				}
				i := strings.Index(sys, want)
				if i < at {
					t.Errorf("%q is out of order in:\n%s", want, sys)
				}
				at = i
			}
			for _, no := range tc.absent {
				if strings.Contains(sys, no) {
					t.Errorf("%q is in a turn without its tool:\n%s", no, sys)
				}
			}
		})
	}
}

// TestTurnSwitchExcludesFamily: a family switch set off takes the family
// out of the turn with the switch as the reason.
func TestTurnSwitchExcludesFamily(t *testing.T) {
	got := turnSystem(t, "name: a\ntools: [web_search, research, url_fetch]\nswitches: {web_search: false}\n")
	reasons := map[string]string{}
	for _, x := range got.Excluded {
		reasons[x.Name] = x.Reason
	}
	if reasons["web_search"] != "web_search switch off" || reasons["research_web"] != "web_search switch off" {
		t.Errorf("exclusions %v, want web_search and research_web out with %q", got.Excluded, "web_search switch off")
	}
	if _, out := reasons["fetch_url"]; out {
		t.Errorf("fetch_url left out (%q): the web_search switch does not gate it", reasons["fetch_url"])
	}
}

// TestToolsListsSwitches: quiver tools says what every switch gates, and
// which have no tool yet; fragments have totals and ceilings of their own.
func TestToolsListsSwitches(t *testing.T) {
	code, out, _ := run(t, t.TempDir(), "tools", "--json")
	var got app.ToolsOutput
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != 0 {
		t.Fatalf("exit %d: %v", code, err)
	}
	byName := map[string]registry.Switch{}
	for _, s := range got.Switches {
		byName[s.Name] = s
	}
	if s := byName["web_search"]; s.NoTool || !slices.Equal(s.Tools, []string{"web_search", "research_web"}) {
		t.Errorf("web_search switch %+v, want it to gate web_search and research_web", s)
	}
	if s := byName["self_teaching"]; s.NoTool || !slices.Equal(s.Tools, []string{"save_memory", "update_memory", "forget_memory", "search_memory"}) {
		t.Errorf("self_teaching switch %+v, want it to gate the memory tools", s)
	}
	if s := byName["short_term_memory"]; s.NoTool || !slices.Equal(s.Tools, []string{"update_short_term_memory"}) {
		t.Errorf("short_term_memory switch %+v, want it to gate update_short_term_memory", s)
	}
	if s := byName["thread_creation"]; s.NoTool || !slices.Equal(s.Tools, []string{"create_thread"}) {
		t.Errorf("thread_creation switch %+v, want it to gate create_thread", s)
	}
	if s := byName["sticker_usage"]; s.NoTool || !slices.Equal(s.Tools, []string{"select_sticker"}) {
		t.Errorf("sticker_usage switch %+v, want it to gate select_sticker", s)
	}
	for _, name := range []string{"image_generation", "voice_message"} {
		if s := byName[name]; !s.NoTool || len(s.Tools) != 0 {
			t.Errorf("%s switch %+v, want no tool yet", name, s)
		}
	}
	if f := got.Fragments; f.AlwaysPaid.Ceiling != builtin.AlwaysPaidFragmentsCeiling || f.Widest.Ceiling != builtin.WidestFragmentsCeiling ||
		f.AlwaysPaid.Chars == 0 || f.Widest.Chars <= f.AlwaysPaid.Chars {
		t.Errorf("fragment totals %+v", f)
	}
	_, text, _ := run(t, t.TempDir(), "tools")
	for _, want := range []string{"image_generation    no tool yet", "web_search          off leaves out web_search, research_web", "conversation_search on declares search_conversations", "fragments    always-paid:", "switch too: url_fetch or research or documents or knowledge or checklist or code or artifacts or skills or tasks or message_metadata or interact_with_message or cross_channel_message or view_profile_picture set off", "fetch_url                  max_length_default=4000 max_length_max=7000"} {
		if !strings.Contains(text, want) {
			t.Errorf("quiver tools lacks %q:\n%s", want, text)
		}
	}
}
