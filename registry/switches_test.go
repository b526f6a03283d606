package registry_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/tmpl"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// switchCatalog has a tool of a family-named switch (web_search), one
// gated by that switch through its spec (research_web), one of the memory
// family (gated by self_teaching) and an always-on tool named like a
// family switch could be.
func switchCatalog() *registry.Catalog {
	c := registry.New()
	c.Register(
		mk(tool.Spec{Name: "calculate", Family: "calc", AlwaysOn: true}),
		mk(tool.Spec{Name: "web_search", Family: "web_search"}),
		mk(tool.Spec{Name: "research_web", Family: "research", Switches: []string{"web_search"}}),
		mk(tool.Spec{Name: "save_memory", Family: "memory"}),
	)
	return c
}

func TestSwitchesGateTheirFamilies(t *testing.T) {
	all := []string{"web_search", "research", "memory"}
	tests := []struct {
		name     string
		switches map[string]bool
		allow    []string
		want     []string
		wantLeft []registry.Exclusion
	}{
		{
			name: "unset gates nothing",
			want: []string{"calculate", "web_search", "research_web", "save_memory"},
		},
		{
			name:     "on gates nothing",
			switches: map[string]bool{"web_search": true, "self_teaching": true},
			want:     []string{"calculate", "web_search", "research_web", "save_memory"},
		},
		{
			name:     "web_search off takes out its family and the tools that name it",
			switches: map[string]bool{"web_search": false},
			want:     []string{"calculate", "save_memory"},
			wantLeft: []registry.Exclusion{{"web_search", "web_search switch off"}, {"research_web", "web_search switch off"}},
		},
		{
			name:     "self_teaching off takes out the memory family",
			switches: map[string]bool{"self_teaching": false},
			want:     []string{"calculate", "web_search", "research_web"},
			wantLeft: []registry.Exclusion{{"save_memory", "self_teaching switch off"}},
		},
		{
			name:     "a switch named like the family gates it too",
			switches: map[string]bool{"memory": false, "research": false},
			want:     []string{"calculate", "web_search"},
			wantLeft: []registry.Exclusion{{"research_web", "research switch off"}, {"save_memory", "memory switch off"}},
		},
		{
			name:     "always-on tools answer to no family switch",
			switches: map[string]bool{"calc": false},
			want:     []string{"calculate", "web_search", "research_web", "save_memory"},
		},
		{
			name:     "on never adds a tool the allowlist leaves out",
			switches: map[string]bool{"web_search": true},
			allow:    []string{},
			want:     []string{"calculate"},
			wantLeft: []registry.Exclusion{
				{"web_search", "not in the agent's allowlist"}, {"research_web", "not in the agent's allowlist"},
				{"save_memory", "not in the agent's allowlist"},
			},
		},
	}
	c := switchCatalog()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			allow := all
			if tc.allow != nil {
				allow = tc.allow
			}
			f := facts(allow, func(f *turn.Facts) { f.Agent.Switches = tc.switches })
			ts := c.Select(f)
			if d := cmp.Diff(tc.want, ts.Names()); d != "" {
				t.Errorf("tools (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.wantLeft, ts.Excluded()); d != "" {
				t.Errorf("excluded (-want +got):\n%s", d)
			}
			// A restored toolset is checked with the same rules.
			for _, x := range ts.Excluded() {
				tl, _ := c.Lookup(x.Name)
				if got := registry.Admits(f, tl); got != x.Reason {
					t.Errorf("Admits(%s) = %q, Select said %q", x.Name, got, x.Reason)
				}
			}
		})
	}
}

func TestSwitchesDescribeEveryKnownSwitch(t *testing.T) {
	sw := switchCatalog().Switches()
	var names []string
	byName := map[string]registry.Switch{}
	for _, s := range sw {
		names = append(names, s.Name)
		byName[s.Name] = s
	}
	if d := cmp.Diff(tmpl.KnownCapabilities(), names); d != "" {
		t.Errorf("switches are not the template language's capabilities, in order (-want +got):\n%s", d)
	}
	want := map[string]registry.Switch{
		"web_search": {Name: "web_search", Family: "web_search", Tools: []string{"web_search", "research_web"},
			Effect: "off leaves out web_search, research_web"},
		"self_teaching": {Name: "self_teaching", Family: "memory", Tools: []string{"save_memory"},
			Effect: "off leaves out save_memory"},
		"image_generation": {Name: "image_generation", Family: "image_generation", Tools: []string{}, NoTool: true,
			Effect: "no tool yet: would gate the image_generation family; setting it changes nothing"},
		"time_awareness": {Name: "time_awareness", Tools: []string{},
			Effect: "the current time in the context message: off leaves it out"},
	}
	for name, w := range want {
		if d := cmp.Diff(w, byName[name]); d != "" {
			t.Errorf("%s (-want +got):\n%s", name, d)
		}
	}
	for _, s := range sw {
		if s.Effect == "" {
			t.Errorf("%s says nothing about what it does", s.Name)
		}
		if got := registry.SwitchFamily(s.Name); got != s.Family {
			t.Errorf("SwitchFamily(%s) = %q, Switches says %q", s.Name, got, s.Family)
		}
	}
}

// TestOptInSwitch: conversation_search gates the history family, and
// says its tools need it on.
func TestOptInSwitch(t *testing.T) {
	c := registry.New()
	c.Register(mk(tool.Spec{Name: "search_conversations", Family: "history"}))
	var got registry.Switch
	for _, s := range c.Switches() {
		if s.Name == "conversation_search" {
			got = s
		}
	}
	want := registry.Switch{Name: "conversation_search", Family: "history", Tools: []string{"search_conversations"},
		Effect: "on declares search_conversations; unset or off leaves them out"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("conversation_search (-want +got):\n%s", d)
	}
	f := facts([]string{"history"}, func(f *turn.Facts) { f.Agent.Switches = map[string]bool{"conversation_search": false} })
	if d := cmp.Diff([]registry.Exclusion{{"search_conversations", "conversation_search switch off"}}, c.Select(f).Excluded()); d != "" {
		t.Errorf("set off (-want +got):\n%s", d)
	}
}
