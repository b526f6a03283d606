package registry_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/tool"
)

// TestCheckSwitches: a switch that changes nothing is a warning naming
// it, and a misspelt one gets the closest name that does something.
func TestCheckSwitches(t *testing.T) {
	c := registry.New()
	c.Register(
		mk(tool.Spec{Name: "calculate", Family: "calc", Description: "d", AlwaysOn: true}),
		mk(tool.Spec{Name: "web_search", Family: "web_search", Description: "d"}),
		mk(tool.Spec{Name: "fetch_url", Family: "url_fetch", Description: "d"}),
	)
	tests := []struct {
		name     string
		switches map[string]bool
		want     []registry.Warning
	}{
		{"none", nil, nil},
		{"known and family switches", map[string]bool{"web_search": false, "url_fetch": false, "emoji_usage": true, "time_awareness": false}, nil},
		{"misspelt", map[string]bool{"web_serch": false}, []registry.Warning{{Field: "switches", Entry: "web_serch",
			Message: `"web_serch" is not a switch or tool family name: it changes nothing`, Suggestion: "web_search"}}},
		{"nothing close", map[string]bool{"zebra_mode": true}, []registry.Warning{{Field: "switches", Entry: "zebra_mode",
			Message: `"zebra_mode" is not a switch or tool family name: it changes nothing`}}},
		{"always-on family", map[string]bool{"calc": false}, []registry.Warning{{Field: "switches", Entry: "calc",
			Message: `"calc" is a family of always-on tools: only tool_use turns them off (and every other tool with them), so this switch changes nothing`}}},
		{"a no-tool switch's family", map[string]bool{"memory": false}, []registry.Warning{{Field: "switches", Entry: "memory",
			Message: `switch "memory" gates the memory family, which has no tool yet: setting it changes nothing`}}},
		{"no tool yet", map[string]bool{"voice_message": true}, []registry.Warning{{Field: "switches", Entry: "voice_message",
			Message: `switch "voice_message" gates the voice_message family, which has no tool yet: setting it changes nothing`}}},
		{"in name order", map[string]bool{"zz": true, "aa": true}, []registry.Warning{
			{Field: "switches", Entry: "aa", Message: `"aa" is not a switch or tool family name: it changes nothing`},
			{Field: "switches", Entry: "zz", Message: `"zz" is not a switch or tool family name: it changes nothing`}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, c.CheckSwitches(tc.switches)); diff != "" {
				t.Errorf("CheckSwitches (-want +got):\n%s", diff)
			}
		})
	}
}
