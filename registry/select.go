package registry

import (
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// Exclusion explains why a catalog tool is not in a turn's toolset.
type Exclusion struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// Toolset is a turn's frozen, ordered set of tools. The zero value is an
// empty toolset. Methods return copies, so the set cannot change while the
// turn runs; a Toolset is safe for concurrent use.
type Toolset struct {
	tools     []*tool.Tool
	left      []Exclusion
	fragments []string
	// desc describes the set against its catalog (macros and families),
	// worked out on first use: a selection that a gate narrows at once
	// never needs its own. Nil for the zero value.
	desc *description
	// selected is how many tools selection declared before any Narrow.
	selected int
}

// description is a toolset's macros and families, worked out once from
// the catalog indexes of its tools and shared by the set's copies: macros
// maps the macro keys of every catalog tool to the tool that serves them,
// preferring a tool in the set; families maps every catalog family to
// whether a tool of it is in the set.
type description struct {
	once     sync.Once
	cat      *Catalog
	picked   []int
	macros   map[string]string
	families map[string]bool
}

// describe returns a description of the picked tools of c, to be worked
// out when first read.
func (c *Catalog) describe(picked []int) *description {
	return &description{cat: c, picked: picked}
}

// get returns the macros and families, working them out on the first call.
// They must not be modified.
func (d *description) get() (map[string]string, map[string]bool) {
	if d == nil {
		return nil, nil
	}
	d.once.Do(func() { d.macros, d.families = d.cat.macrosAndFamilies(d.picked) })
	return d.macros, d.families
}

// Select returns the turn's toolset, in registration order, and one reason
// for every catalog tool left out. The rules, in order:
//  1. a model without tool support, or an agent whose tool_use switch is
//     set off, gets no tools (and so no fragments);
//  2. always-on tools (the workspace set and the five helpers) are in;
//  3. an optional tool must be named, or have its family named, in the
//     agent's allowlist — an empty allowlist gives no optional tools;
//  4. an optional tool is out when a switch that gates it is set off
//     ("web_search switch off"): the switch named like its family, the
//     known switch of its family (self_teaching for memory) and the
//     switches its spec names; an unset switch gates nothing;
//  5. a tool whose requirement over the facts fails is out, with its reason.
//
// Tools an overlay hid (see [Catalog.With]) are left out first, with the
// overlay's reason, whatever the rules above say.
//
// Select reads only the facts' Selection (turn.Facts.Selection), so its
// answer is the same for every turn with an equal Selection.
func (c *Catalog) Select(f turn.Facts) Toolset {
	s := f.Selection()
	var ts Toolset
	ts.left = append(ts.left, c.hidden...)
	var picked []int
	none := noTools(s)
	var allowed []bool
	if none == "" {
		allowed = c.allowedBy(s.Allow)
	}
	for i, t := range c.tools {
		reason := none
		if reason == "" {
			reason = ruleReason(t, c.gates[i], s, allowed[i])
		}
		if reason != "" {
			ts.left = append(ts.left, Exclusion{Name: t.Name(), Reason: reason})
			continue
		}
		ts.tools = append(ts.tools, t)
		picked = append(picked, i)
	}
	ts.fragments = c.fragmentsOf(picked)
	ts.desc = c.describe(picked)
	ts.selected = len(ts.tools)
	return ts
}

// macrosAndFamilies describes the set of the picked tools (catalog
// indexes) against the whole catalog, so that a macro or family
// condition about a catalog tool left out of the set is known (and
// false) rather than unknown: every family, with whether a picked tool
// has it, and every macro key, served by its first picked tool in
// registration order, else by its first tool.
func (c *Catalog) macrosAndFamilies(picked []int) (map[string]string, map[string]bool) {
	declared := make([]bool, len(c.tools))
	families := make(map[string]bool, len(c.families))
	for _, fam := range c.families {
		families[fam] = false
	}
	for _, i := range picked {
		declared[i] = true
		families[c.families[c.famOf[i]]] = true
	}
	macros := make(map[string]string, len(c.macroTools))
	for key, tools := range c.macroTools {
		best := tools[0]
		for _, i := range tools {
			if declared[i] {
				best = i
				break
			}
		}
		macros[key] = c.tools[best].Name()
	}
	return macros, families
}

// noTools is why the selection gets no tool at all (rule 1 of Select),
// "" when it may get some.
func noTools(s turn.Selection) string {
	if !s.Model.Caps.Tools {
		return fmt.Sprintf("model %s does not support tool calling", modelName(s.Model))
	}
	if s.Off("tool_use") {
		return "tool use is switched off for this agent"
	}
	return ""
}

// allowSet is an allowlist as a set.
func allowSet(names []string) map[string]bool {
	allow := make(map[string]bool, len(names))
	for _, a := range names {
		allow[a] = true
	}
	return allow
}

// exclusionReason is why the selection s leaves t out ("" when it does
// not); gates are the switches that gate t (gatingSwitches).
func exclusionReason(t *tool.Tool, gates []string, s turn.Selection, allow map[string]bool) string {
	if reason := noTools(s); reason != "" {
		return reason
	}
	spec := t.Spec()
	return ruleReason(t, gates, s, allowed(&spec, t.Name(), allow))
}

// ruleReason is exclusionReason for a selection that may get tools (rule
// 1 of Select passed): rules 2 to 5; listed is whether the allowlist
// admits t (rule 3).
func ruleReason(t *tool.Tool, gates []string, s turn.Selection, listed bool) string {
	spec := t.Spec()
	if !spec.AlwaysOn && !listed {
		return "not in the agent's allowlist"
	}
	if reason := switchedOff(t, gates, s); reason != "" {
		return reason
	}
	if spec.Requires != nil {
		return spec.Requires(s)
	}
	return ""
}

// Admits returns "" when the facts admit t (the rules of Select), else the
// reason they do not. A restored toolset is checked with it, so a tool
// that took a stored name since (another MCP server's) is not declared.
func Admits(f turn.Facts, t *tool.Tool) string {
	s := f.Selection()
	return exclusionReason(t, gatingSwitches(t), s, allowSet(s.Allow))
}

// allowedBy reports, per catalog tool, whether the allowlist admits it
// (the answer of allowed, from the entries kept as tools registered).
func (c *Catalog) allowedBy(allow []string) []bool {
	out := make([]bool, len(c.tools))
	for _, a := range allow {
		for _, i := range c.allowBy[a] {
			out[i] = true
		}
	}
	return out
}

// allowed reports whether the allowlist names the tool, its family or one
// of its AllowAs entries. A tool with AllowAs entries (an MCP server's) is
// not admitted by its bare name: "echo" in an allowlist means a built-in,
// never whatever some registered server calls echo.
func allowed(spec *tool.Spec, name string, allow map[string]bool) bool {
	if (allow[name] && len(spec.AllowAs) == 0) || (spec.Family != "" && allow[spec.Family]) {
		return true
	}
	for _, a := range spec.AllowAs {
		if allow[a] {
			return true
		}
	}
	return false
}

func modelName(m turn.Model) string {
	switch {
	case m.Provider != "" && m.Name != "":
		return m.Provider + ":" + m.Name
	case m.Name != "":
		return m.Name
	}
	return "(unnamed)"
}

// fragmentsOf returns the distinct fragments of the picked tools, in the
// order they were first registered.
func (c *Catalog) fragmentsOf(picked []int) []string {
	seen := make([]bool, len(c.fragments))
	for _, i := range picked {
		for _, id := range c.fragIDs[i] {
			seen[id] = true
		}
	}
	var out []string
	for id, ok := range seen {
		if ok {
			out = append(out, c.fragments[id])
		}
	}
	return out
}

// Tools returns the toolset's tools in declaration order.
func (s Toolset) Tools() []*tool.Tool { return append([]*tool.Tool(nil), s.tools...) }

// Selected returns how many tools selection declared before any Narrow
// (a gate, or a model refusing schemas): a turn whose tools a gate hid
// for now is still a turn that can use tools. Narrow and Arrange keep it;
// Restore counts the restored tools unless WithSelected says otherwise.
func (s Toolset) Selected() int { return s.selected }

// WithSelected returns the set with Selected n, for a restored set whose
// turn recorded how many tools selection gave it; n below Len counts as
// Len (a record from before the count was kept).
func (s Toolset) WithSelected(n int) Toolset {
	s.selected = max(n, len(s.tools))
	return s
}

// Len returns the number of tools in the set.
func (s Toolset) Len() int { return len(s.tools) }

// Names returns the tool names in declaration order.
func (s Toolset) Names() []string {
	names := make([]string, len(s.tools))
	for i, t := range s.tools {
		names[i] = t.Name()
	}
	return names
}

// Lookup returns the tool with that name if it is in the set.
func (s Toolset) Lookup(name string) (*tool.Tool, bool) {
	for _, t := range s.tools {
		if t.Name() == name {
			return t, true
		}
	}
	return nil, false
}

// Excluded returns the reason for every catalog tool not in the set, in
// registration order.
func (s Toolset) Excluded() []Exclusion { return append([]Exclusion(nil), s.left...) }

// ReasonFor returns why the set leaves out the catalog tool called name
// (its exclusion's reason, as Excluded gives it), or "" when the set
// declares a tool of that name or the catalog has none.
func (s Toolset) ReasonFor(name string) string {
	if _, ok := s.Lookup(name); ok {
		return ""
	}
	for _, e := range s.left {
		if e.Name == name {
			return e.Reason
		}
	}
	return ""
}

// Fragments returns the prompt fragments of the set's tools, identical
// paragraphs once, in registration order.
func (s Toolset) Fragments() []string { return append([]string(nil), s.fragments...) }

// Narrow returns a toolset holding only the tools keep accepts; the others
// join the exclusions with the reason keep gives. It never adds a tool, and
// fragments of dropped tools are dropped unless a kept tool shares them.
// When keep accepts every tool the answer is s itself (the fragments,
// macros and families of the same tools are the same).
func (s Toolset) Narrow(c *Catalog, keep func(*tool.Tool) (ok bool, reason string)) Toolset {
	var left []Exclusion // s.left, then the tools keep drops
	kept := make([]bool, len(s.tools))
	for i, t := range s.tools {
		ok, reason := keep(t)
		kept[i] = ok
		if ok {
			continue
		}
		if left == nil {
			// Room for every tool still to come, in one allocation.
			left = append(make([]Exclusion, 0, len(s.left)+len(s.tools)-i), s.left...)
		}
		left = append(left, Exclusion{Name: t.Name(), Reason: reason})
	}
	if left == nil {
		return s
	}
	out := Toolset{left: left, selected: s.selected}
	var picked []int
	for i, t := range s.tools {
		if kept[i] {
			out.tools = append(out.tools, t)
			picked = append(picked, c.index[t.Name()])
		}
	}
	out.fragments = c.fragmentsOf(picked)
	out.desc = c.describe(picked)
	return out
}

// Macros returns, for every macro key a catalog tool declares, the name of
// the tool serving it, preferring one in the set.
func (s Toolset) Macros() map[string]string {
	m, _ := s.desc.get()
	return maps.Clone(m)
}

// Families returns every catalog family with whether a tool of it is in
// the set.
func (s Toolset) Families() map[string]bool {
	_, f := s.desc.get()
	return maps.Clone(f)
}

// Restore rebuilds a stored toolset from its tool names, in that order, so
// a resumed turn keeps the toolset it started with. A name that is no
// longer registered (an MCP server removed meanwhile) is left out with a
// reason, as is every catalog tool the stored set did not hold; a repeated
// name counts once.
func (c *Catalog) Restore(names []string) Toolset {
	var ts Toolset
	var picked []int
	in := make(map[string]bool, len(names))
	for _, name := range names {
		i, ok := c.index[name]
		switch {
		case in[name]:
			continue
		case !ok:
			ts.left = append(ts.left, Exclusion{Name: name, Reason: "no longer registered"})
			continue
		}
		in[name] = true
		ts.tools = append(ts.tools, c.tools[i])
		picked = append(picked, i)
	}
	for _, t := range c.tools {
		if !in[t.Name()] {
			ts.left = append(ts.left, Exclusion{Name: t.Name(), Reason: "not in the toolset this turn started with"})
		}
	}
	ts.fragments = c.fragmentsOf(picked)
	ts.desc = c.describe(picked)
	ts.selected = len(ts.tools)
	return ts
}

// Extend returns s with the tools named in names appended after its own,
// in that order, and those tools: only tools of from (the turn's
// selection, which s was narrowed from) that s does not declare, each
// once; a name from does not hold is skipped. They leave the exclusions;
// fragments, macros and families follow the new set. It never adds a
// tool selection left out, so a gate's narrowing can be undone, not
// widened.
func (c *Catalog) Extend(s, from Toolset, names []string) (Toolset, []*tool.Tool) {
	var added []*tool.Tool
	for _, name := range names {
		t, ok := from.Lookup(name)
		if !ok || slices.Contains(added, t) {
			continue
		}
		if _, have := s.Lookup(name); have {
			continue
		}
		added = append(added, t)
	}
	if len(added) == 0 {
		return s, nil
	}
	out := Toolset{tools: slices.Concat(s.tools, added), selected: s.selected}
	for _, e := range s.left {
		if !slices.ContainsFunc(added, func(t *tool.Tool) bool { return t.Name() == e.Name }) {
			out.left = append(out.left, e)
		}
	}
	picked := make([]int, 0, len(out.tools))
	for _, t := range out.tools {
		if i, ok := c.index[t.Name()]; ok {
			picked = append(picked, i)
		}
	}
	slices.Sort(picked)
	out.fragments = c.fragmentsOf(picked)
	out.desc = c.describe(picked)
	return out, added
}

// Arrange returns the toolset with its tools stably sorted by rank (lower
// first): a caller that opens groups of tools over a conversation can keep
// earlier groups first, so the declared prefix stays byte-identical for a
// provider's prompt cache. Exclusions, fragments and macros are unchanged.
func (s Toolset) Arrange(rank func(*tool.Tool) int) Toolset {
	out := s
	out.tools = s.Tools()
	slices.SortStableFunc(out.tools, func(a, b *tool.Tool) int { return rank(a) - rank(b) })
	return out
}
