package registry

import (
	"fmt"
	"slices"
	"sort"
)

// CheckSwitches returns a warning, in name order, for each switch of an
// agent's switches that changes nothing: a name that is neither a known
// switch nor a family of c's optional tools (with the closest name that
// is, when one is close), a family switch no tool of c answers yet (by the
// switch's name or its family's: self_teaching or memory), and a family
// of always-on tools (only tool_use turns those off). Warnings
// have Field "switches". CheckSwitches never fails and does not change c.
func (c *Catalog) CheckSwitches(switches map[string]bool) []Warning {
	names := make([]string, 0, len(switches))
	for n := range switches {
		names = append(names, n)
	}
	sort.Strings(names)
	known, alwaysOn := c.switchNames()
	// A known switch with no tool yet, and the family it will gate under
	// that family's own name (memory for self_teaching), change nothing.
	noTool := map[string]string{}
	for _, s := range c.Switches() {
		if s.NoTool {
			noTool[s.Name], noTool[s.Family] = s.Family, s.Family
		}
	}
	var out []Warning
	for _, n := range names {
		w := Warning{Field: "switches", Entry: n}
		switch {
		case noTool[n] != "":
			w.Message = fmt.Sprintf("switch %q gates the %s family, which has no tool yet: setting it changes nothing", n, noTool[n])
		case slices.Contains(known, n):
			continue
		case slices.Contains(alwaysOn, n):
			w.Message = fmt.Sprintf("%q is a family of always-on tools: only tool_use turns them off (and every other tool with them), so this switch changes nothing", n)
		default:
			w.Message = fmt.Sprintf("%q is not a switch or tool family name: it changes nothing", n)
			w.Suggestion = closest(n, known)
		}
		out = append(out, w)
	}
	return out
}

// switchNames returns the names a switch may take to do something: every
// known switch and every family of an optional tool, once each; and,
// apart, the families that only always-on tools have.
func (c *Catalog) switchNames() (known, alwaysOn []string) {
	for _, d := range switchDefs {
		known = append(known, d.name)
	}
	for _, t := range c.tools {
		fam := t.Family()
		if fam == "" || slices.Contains(known, fam) {
			continue
		}
		if t.Spec().AlwaysOn {
			if !slices.Contains(alwaysOn, fam) {
				alwaysOn = append(alwaysOn, fam)
			}
			continue
		}
		known = append(known, fam)
	}
	alwaysOn = slices.DeleteFunc(alwaysOn, func(f string) bool { return slices.Contains(known, f) })
	return known, alwaysOn
}
