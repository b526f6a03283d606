package builtin_test

import (
	"testing"

	"github.com/quiverhq/quiver/builtin"
)

// TestDefinitionCeilings holds the definitions every turn pays, and the
// widest toolset a turn can get, under their ceilings. If this fails after
// adding or changing a tool: raise the ceiling in builtin/sizes.go in the
// same change, or write the description and schema shorter.
func TestDefinitionCeilings(t *testing.T) {
	sizes := builtin.CatalogSizes()
	alwaysOn := 0
	for _, tl := range sizes.Tools {
		if tl.AlwaysOn {
			alwaysOn++
		}
	}
	if alwaysOn != 11 {
		t.Errorf("%d always-paid tools, want the six workspace tools and five always-on helpers", alwaysOn)
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
