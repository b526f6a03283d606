package registry_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

func mk(spec tool.Spec) *tool.Tool {
	spec.Description = "Test tool " + spec.Name + "."
	return tool.New(spec, func(context.Context, tool.Scope, struct{}) (string, error) { return "ok", nil })
}

// catalog mirrors the real shape: workspace and always-on tools first, then
// optional ones with requirements.
func catalog() *registry.Catalog {
	c := registry.New()
	c.Register(
		mk(tool.Spec{Name: "read_file", Family: "workspace", AlwaysOn: true, Fragments: []string{"Files live in the workspace."}}),
		mk(tool.Spec{Name: "calculate", AlwaysOn: true}),
		mk(tool.Spec{Name: "web_search", Family: "web", Fragments: []string{"Cite sources.", "Queries must be short."}}),
		mk(tool.Spec{Name: "fetch_url", Family: "web", Fragments: []string{"Cite sources."}}),
		mk(tool.Spec{Name: "save_memory", Family: "memory", Requires: func(f turn.Selection) string {
			if !f.Switch("memory") {
				return "memory switch off"
			}
			if !f.HasBackend("embedding") {
				return "no embedding model configured"
			}
			return ""
		}}),
		mk(tool.Spec{Name: "analyze_image", Requires: func(f turn.Selection) string {
			if !f.Model.Caps.Vision {
				return "model cannot see images"
			}
			return ""
		}}),
	)
	return c
}

func facts(allow []string, mod func(*turn.Facts)) turn.Facts {
	f := turn.Facts{
		Agent: turn.Agent{Allow: allow, Switches: map[string]bool{}},
		Model: turn.Model{Provider: "openai", Name: "gpt-4.1-mini", Caps: turn.Capabilities{Tools: true}},
	}
	if mod != nil {
		mod(&f)
	}
	return f
}

func TestSelect(t *testing.T) {
	tests := []struct {
		name      string
		facts     turn.Facts
		want      []string
		wantLeft  []registry.Exclusion
		wantFrags []string
	}{
		{
			name:  "empty allowlist gives only always-on tools",
			facts: facts(nil, nil),
			want:  []string{"read_file", "calculate"},
			wantLeft: []registry.Exclusion{
				{"web_search", "not in the agent's allowlist"}, {"fetch_url", "not in the agent's allowlist"},
				{"save_memory", "not in the agent's allowlist"}, {"analyze_image", "not in the agent's allowlist"},
			},
			wantFrags: []string{"Files live in the workspace."},
		},
		{
			name:  "allowlist by tool name",
			facts: facts([]string{"fetch_url"}, nil),
			want:  []string{"read_file", "calculate", "fetch_url"},
			wantLeft: []registry.Exclusion{
				{"web_search", "not in the agent's allowlist"}, {"save_memory", "not in the agent's allowlist"},
				{"analyze_image", "not in the agent's allowlist"},
			},
			wantFrags: []string{"Files live in the workspace.", "Cite sources."},
		},
		{
			name:  "allowlist by family, fragments deduplicated in registration order",
			facts: facts([]string{"web"}, nil),
			want:  []string{"read_file", "calculate", "web_search", "fetch_url"},
			wantLeft: []registry.Exclusion{
				{"save_memory", "not in the agent's allowlist"}, {"analyze_image", "not in the agent's allowlist"},
			},
			wantFrags: []string{"Files live in the workspace.", "Cite sources.", "Queries must be short."},
		},
		{
			name:  "requirements explain themselves",
			facts: facts([]string{"memory", "analyze_image"}, func(f *turn.Facts) { f.Agent.Switches["memory"] = true }),
			want:  []string{"read_file", "calculate"},
			wantLeft: []registry.Exclusion{
				{"web_search", "not in the agent's allowlist"}, {"fetch_url", "not in the agent's allowlist"},
				{"save_memory", "no embedding model configured"}, {"analyze_image", "model cannot see images"},
			},
			wantFrags: []string{"Files live in the workspace."},
		},
		{
			name: "requirements met",
			facts: facts([]string{"memory", "analyze_image"}, func(f *turn.Facts) {
				f.Agent.Switches["memory"] = true
				f.Backends = []string{"embedding"}
				f.Model.Caps.Vision = true
			}),
			want: []string{"read_file", "calculate", "save_memory", "analyze_image"},
			wantLeft: []registry.Exclusion{
				{"web_search", "not in the agent's allowlist"}, {"fetch_url", "not in the agent's allowlist"},
			},
			wantFrags: []string{"Files live in the workspace."},
		},
		{
			name:  "model without tools gets nothing, not even always-on or fragments",
			facts: facts([]string{"web"}, func(f *turn.Facts) { f.Model.Caps.Tools = false }),
			want:  []string{},
			wantLeft: []registry.Exclusion{
				{"read_file", "model openai:gpt-4.1-mini does not support tool calling"},
				{"calculate", "model openai:gpt-4.1-mini does not support tool calling"},
				{"web_search", "model openai:gpt-4.1-mini does not support tool calling"},
				{"fetch_url", "model openai:gpt-4.1-mini does not support tool calling"},
				{"save_memory", "model openai:gpt-4.1-mini does not support tool calling"},
				{"analyze_image", "model openai:gpt-4.1-mini does not support tool calling"},
			},
			wantFrags: []string{},
		},
	}
	c := catalog()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts := c.Select(tc.facts)
			if diff := cmp.Diff(tc.want, ts.Names()); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantLeft, ts.Excluded()); diff != "" {
				t.Errorf("excluded (-want +got):\n%s", diff)
			}
			if got := ts.Fragments(); len(got) != 0 || len(tc.wantFrags) != 0 {
				if diff := cmp.Diff(tc.wantFrags, got); diff != "" {
					t.Errorf("fragments (-want +got):\n%s", diff)
				}
			}
			if ts.Len()+len(ts.Excluded()) != c.Len() {
				t.Errorf("every catalog tool must be either selected or explained")
			}
		})
	}
}

func TestToolsetIsFrozen(t *testing.T) {
	c := catalog()
	ts := c.Select(facts([]string{"web"}, nil))
	tools := ts.Tools()
	tools[0] = nil
	left := ts.Excluded()
	left[0].Reason = "changed"
	frags := ts.Fragments()
	frags[0] = "changed"
	if ts.Tools()[0] == nil || ts.Excluded()[0].Reason == "changed" || ts.Fragments()[0] == "changed" {
		t.Error("mutating returned slices changed the toolset")
	}
	// Registering more tools after selection does not change a selected set.
	c.Register(mk(tool.Spec{Name: "late", AlwaysOn: true}))
	if _, ok := ts.Lookup("late"); ok {
		t.Error("tool registered after Select appeared in an existing toolset")
	}
}

func TestNarrow(t *testing.T) {
	c := catalog()
	ts := c.Select(facts([]string{"web"}, nil))
	n := ts.Narrow(c, func(tl *tool.Tool) (bool, string) {
		return tl.Name() != "web_search", "not asked for"
	})
	if diff := cmp.Diff([]string{"read_file", "calculate", "fetch_url"}, n.Names()); diff != "" {
		t.Errorf("narrowed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Files live in the workspace.", "Cite sources."}, n.Fragments()); diff != "" {
		t.Errorf("fragments (-want +got):\n%s", diff)
	}
	if got := n.Excluded(); got[len(got)-1] != (registry.Exclusion{Name: "web_search", Reason: "not asked for"}) {
		t.Errorf("last exclusion = %v", got[len(got)-1])
	}
}

func TestRegisterDuplicatePanics(t *testing.T) {
	c := catalog()
	defer func() {
		if recover() == nil {
			t.Error("duplicate registration did not panic")
		}
	}()
	c.Register(mk(tool.Spec{Name: "calculate"}))
}

func TestRestore(t *testing.T) {
	c := catalog()
	ts := c.Restore([]string{"fetch_url", "calculate", "gone_tool", "calculate"})
	if diff := cmp.Diff([]string{"fetch_url", "calculate"}, ts.Names()); diff != "" {
		t.Errorf("restored (-want +got):\n%s", diff)
	}
	frozen := "not in the toolset this turn started with"
	want := []registry.Exclusion{{Name: "gone_tool", Reason: "no longer registered"},
		{"read_file", frozen}, {"web_search", frozen}, {"save_memory", frozen}, {"analyze_image", frozen}}
	if diff := cmp.Diff(want, ts.Excluded()); diff != "" {
		t.Errorf("excluded (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Cite sources."}, ts.Fragments()); diff != "" {
		t.Errorf("fragments (-want +got):\n%s", diff)
	}
}

// TestSelectedSurvivesNarrowing: Selected counts what selection gave the
// turn, whatever a gate later hid; Arrange keeps it, Restore counts the
// restored tools, and WithSelected restores a recorded count (never below
// the set's size).
func TestSelectedSurvivesNarrowing(t *testing.T) {
	c := catalog()
	ts := c.Select(facts([]string{"web"}, nil))
	n := ts.Selected()
	if n != ts.Len() || n == 0 {
		t.Fatalf("Selected %d, Len %d: want equal and positive", n, ts.Len())
	}
	none := ts.Narrow(c, func(*tool.Tool) (bool, string) { return false, "hidden" })
	if none.Len() != 0 || none.Selected() != n {
		t.Errorf("after hiding every tool: Len %d, Selected %d; want 0, %d", none.Len(), none.Selected(), n)
	}
	if got := none.Arrange(func(*tool.Tool) int { return 0 }).Selected(); got != n {
		t.Errorf("Arrange changed Selected to %d, want %d", got, n)
	}
	restored := c.Restore(ts.Names()[:1])
	if restored.Selected() != 1 {
		t.Errorf("Restore of one tool: Selected %d, want 1", restored.Selected())
	}
	if got := restored.WithSelected(n).Selected(); got != n {
		t.Errorf("WithSelected(%d) = %d", n, got)
	}
	if got := restored.WithSelected(0).Selected(); got != 1 {
		t.Errorf("WithSelected(0) on a set of one = %d, want 1", got)
	}
}

// TestReasonFor: a left-out tool's reason is its exclusion's; a declared
// tool, and a name the catalog does not have, have none.
func TestReasonFor(t *testing.T) {
	c := catalog()
	ts := c.Select(facts([]string{"web", "save_memory"}, nil))
	tests := []struct{ name, want string }{
		{"save_memory", "memory switch off"},
		{"web_search", ""},
		{"read_file", ""},
		{"no_such_tool", ""},
	}
	for _, tc := range tests {
		if got := ts.ReasonFor(tc.name); got != tc.want {
			t.Errorf("ReasonFor(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
	n := ts.Narrow(c, func(tl *tool.Tool) (bool, string) { return tl.Name() != "fetch_url", "not asked for" })
	if got := n.ReasonFor("fetch_url"); got != "not asked for" {
		t.Errorf("narrowed out: ReasonFor = %q, want the narrowing's reason", got)
	}
}
