package intent

import (
	"slices"

	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/turn"
)

// Report is what a detection opens in a catalog, laid out as a turn would
// declare it: the JSON form `quiver intent --json` prints. Every slice is
// non-nil, so each encodes as a list.
type Report struct {
	// Families are the opened targets, in documentation order.
	Families []string `json:"families"`
	// Tools are the catalog's tools a turn would declare, in declaration
	// order: the always-on helpers (unless gated), then each open
	// family's tools. A family's tools the catalog lacks are not listed.
	Tools []string `json:"tools"`
	// Declared says why each of Tools is declared.
	Declared []Declared `json:"declared"`
	// Unbuilt are the open families none of whose tools the catalog holds
	// (Apps, an organisation's MCP tools, is never listed).
	Unbuilt []string `json:"unbuilt"`
	// Matches are the detection's matches.
	Matches []Match `json:"matches"`
}

// Preview lays res out over the catalog c under o, as a turn of an agent
// allowing every family of c, on a model with tools, would declare it:
// selection and Gate run as in a turn, so the order and the reasons are a
// turn's (the always-on helpers first unless o gates them, then each open
// family's tools in the order the families opened). It reads c only.
func Preview(c *registry.Catalog, res Result, o GateOptions) Report {
	allow := []string{}
	for _, t := range c.Tools() {
		if !slices.Contains(allow, t.Family()) {
			allow = append(allow, t.Family())
		}
	}
	ts := c.Select(turn.Facts{
		Agent: turn.Agent{Allow: allow},
		Model: turn.Model{Caps: turn.Capabilities{Tools: true}},
		// The mode gates the turn, so its recovery tool is declared.
		Deliberate: true,
	})
	gated := Gate(ts, c, res.Targets, o)
	if slices.Contains(res.Targets, Discovery) {
		// No selection holds the discovery tools: a turn appends them
		// after the gated tools when the family is open (engine.Deferral).
		names := targetTools[Discovery]
		gated, _ = c.Extend(gated, c.Restore(names), names)
	}
	out := Report{
		Families: nonNil(res.Targets), Matches: res.Matches,
		Tools: gated.Names(), Declared: Explain(gated, res, res.Targets, o),
		Unbuilt: unbuilt(c, res.Targets),
	}
	if out.Matches == nil {
		out.Matches = []Match{}
	}
	return out
}

// unbuilt returns the targets of open, other than Apps, none of whose
// tools c holds; never nil.
func unbuilt(c *registry.Catalog, open []string) []string {
	out := []string{}
	inCatalog := func(name string) bool { _, ok := c.Lookup(name); return ok }
	for _, target := range open {
		if target != Apps && !slices.ContainsFunc(targetTools[target], inCatalog) {
			out = append(out, target)
		}
	}
	return out
}

// nonNil returns s, or an empty slice for nil, so it encodes as a list.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
