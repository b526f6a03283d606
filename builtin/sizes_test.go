package builtin_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/builtin"
	"github.com/quiverhq/quiver/registry"
)

// TestDefinitionCeilings holds the definitions every turn pays, and the
// widest toolset a turn can get, under their ceilings. If this fails after
// adding or changing a tool: raise the ceiling in builtin/sizes.go in the
// same change, or write the description and schema shorter.
func TestDefinitionCeilings(t *testing.T) {
	sizes := builtin.CatalogSizes()
	alwaysOn := 0
	for _, tl := range sizes.Tools {
		if tl.AlwaysOn && !tl.OnlyDeferred {
			alwaysOn++
		}
	}
	if alwaysOn != 12 {
		t.Errorf("%d always-paid tools, want the six workspace tools, five always-on helpers and the recovery tool (under Deliberate Tool Mode)", alwaysOn)
	}
	for _, c := range []struct {
		name         string
		got, ceiling int
	}{
		{"always-paid definitions", sizes.AlwaysPaid.Chars, builtin.AlwaysPaidCeiling},
		{"widest toolset definitions", sizes.Widest.Chars, builtin.WidestCeiling},
		{"always-paid prompt fragments", sizes.Fragments.AlwaysPaid.Chars, builtin.AlwaysPaidFragmentsCeiling},
		{"widest toolset prompt fragments", sizes.Fragments.Widest.Chars, builtin.WidestFragmentsCeiling},
	} {
		if c.got > c.ceiling {
			t.Errorf("%s are %d characters, over the ceiling of %d: raise the ceiling in the same change, or write shorter", c.name, c.got, c.ceiling)
		} else {
			t.Logf("%s: %d of %d characters", c.name, c.got, c.ceiling)
		}
	}
}

// TestFamilySwitches: the optional families whose switch is not listed,
// in tool order, once; always-on families and listed switches' families
// are not among them.
func TestFamilySwitches(t *testing.T) {
	s := builtin.Sizes{
		Tools: []builtin.ToolSize{
			{Name: "read_file", Family: "workspace", AlwaysOn: true},
			{Name: "fetch_url", Family: "url_fetch"},
			{Name: "web_search", Family: "web_search"},
			{Name: "research", Family: "url_fetch"},
			{Name: "run_code", Family: "code"},
		},
		Switches: []registry.Switch{{Name: "web_search", Family: "web_search"}},
	}
	if d := cmp.Diff([]string{"url_fetch", "code"}, s.FamilySwitches()); d != "" {
		t.Errorf("FamilySwitches (-want +got):\n%s", d)
	}
	s.Switches = append(s.Switches, registry.Switch{Name: "url_fetch", Family: "url_fetch"}, registry.Switch{Name: "code", Family: "code"})
	if got := s.FamilySwitches(); got != nil {
		t.Errorf("every family listed: %v, want nil", got)
	}
}
