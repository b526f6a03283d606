// Package registry is the tool catalog and per-turn selection: from the
// registered tools and a turn's facts, Select decides which tools the model
// may see and explains every tool it leaves out.
package registry

import (
	"fmt"
	"slices"

	"github.com/quiverhq/quiver/tool"
)

// Catalog holds every registered tool in registration order, with the prompt
// fragments gathered as tools are registered. Register before the first
// Select; after that a Catalog is read-only and safe for concurrent use.
type Catalog struct {
	tools []*tool.Tool
	index map[string]int
	// fragments are the distinct fragment texts in first-registration order;
	// fragIDs[i] lists the fragment indexes of tools[i].
	fragments []string
	fragIndex map[string]int
	fragIDs   [][]int
	// hidden are the tools an overlay took out, with its reasons; every
	// Select reports them first.
	hidden []Exclusion
	// Kept as tools register, so that a selection reads them instead of
	// walking the whole catalog: per tool, the switches that gate it and
	// the index of its family in families (distinct, in registration
	// order); per macro key, the tools declaring it, in registration order.
	gates      [][]string
	famOf      []int
	families   []string
	famIndex   map[string]int
	macroTools map[string][]int
	// allowBy maps each allowlist entry that admits a tool (rule 3 of
	// Select: its name unless it has AllowAs entries, its family when it
	// names one, each of its AllowAs entries) to the tools it admits, in
	// registration order.
	allowBy map[string][]int
}

// Overlay is what one organisation adds to the built-in catalog for a turn:
// its MCP servers' tools, and the built-in tools they replace.
type Overlay struct {
	// Replace are tools that take the place of the catalog's tools of the
	// same names, each in its position (an organisation's web tools under
	// its own engines and keys), so declaration and fragment order stay
	// the catalog's. Replacing a name the catalog does not hold panics.
	Replace []*tool.Tool
	// Tools are appended after the catalog's tools, in this order.
	Tools []*tool.Tool
	// Hide maps a catalog tool's name to the reason it is left out of
	// every toolset ("replaced by MCP server search-1").
	Hide map[string]string
	// Dropped explains tools the overlay could have added but did not (a
	// name two servers offer, a server that is unavailable); every Select
	// reports them with the hidden ones.
	Dropped []Exclusion
}

// With returns a new catalog: c's tools (each replaced by the overlay's
// tool of its name, where there is one) minus the hidden ones, then the
// overlay's tools. c is not changed, so one built-in catalog serves every
// organisation. An empty overlay (nothing to replace, add, hide or report)
// returns c itself, so that an organisation without MCP servers selects
// from the same catalog on every turn and what is kept per catalog
// (engine's selection cache) is reused; register nothing on With's
// result. With panics, as Register does, when an overlay tool has the
// name of a tool it keeps: resolving collisions is the overlay's job.
// Hiding a name that is not registered is ignored.
func (c *Catalog) With(o Overlay) *Catalog {
	if len(o.Replace) == 0 && len(o.Tools) == 0 && len(o.Hide) == 0 && len(o.Dropped) == 0 {
		return c
	}
	replace := make(map[string]*tool.Tool, len(o.Replace))
	for _, t := range o.Replace {
		if _, ok := c.index[t.Name()]; !ok {
			panic(fmt.Sprintf("registry: replacing %q, which the catalog does not hold", t.Name()))
		}
		replace[t.Name()] = t
	}
	out := New()
	out.hidden = append(out.hidden, c.hidden...)
	for _, t := range c.tools {
		if r, ok := replace[t.Name()]; ok {
			t = r
		}
		if reason, ok := o.Hide[t.Name()]; ok {
			out.hidden = append(out.hidden, Exclusion{Name: t.Name(), Reason: reason})
			continue
		}
		out.Register(t)
	}
	out.hidden = append(out.hidden, o.Dropped...)
	out.Register(o.Tools...)
	return out
}

// New returns an empty catalog.
func New() *Catalog {
	return &Catalog{index: map[string]int{}, fragIndex: map[string]int{}, famIndex: map[string]int{}, macroTools: map[string][]int{}, allowBy: map[string][]int{}}
}

// Register adds tools in order. It panics on a nil tool or a duplicate name:
// both are programming errors to catch at start-up.
func (c *Catalog) Register(tools ...*tool.Tool) {
	for _, t := range tools {
		if t == nil {
			panic("registry: nil tool")
		}
		if _, dup := c.index[t.Name()]; dup {
			panic(fmt.Sprintf("registry: duplicate tool name %q", t.Name()))
		}
		i := len(c.tools)
		c.index[t.Name()] = i
		c.tools = append(c.tools, t)
		c.fragIDs = append(c.fragIDs, c.gather(t.Spec().Fragments))
		c.gates = append(c.gates, gatingSwitches(t))
		fam, ok := c.famIndex[t.Family()]
		if !ok {
			fam = len(c.families)
			c.famIndex[t.Family()] = fam
			c.families = append(c.families, t.Family())
		}
		c.famOf = append(c.famOf, fam)
		for _, key := range t.Spec().Macros {
			c.macroTools[key] = append(c.macroTools[key], i)
		}
		for _, entry := range allowEntries(t) {
			c.allowBy[entry] = append(c.allowBy[entry], i)
		}
	}
}

// allowEntries are the allowlist entries that admit t (see allowed),
// each once.
func allowEntries(t *tool.Tool) []string {
	spec := t.Spec()
	var out []string
	if len(spec.AllowAs) == 0 {
		out = append(out, spec.Name)
	}
	if spec.Family != "" {
		out = append(out, spec.Family)
	}
	for _, a := range spec.AllowAs {
		out = append(out, a)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// gather records fragment texts, keeping one copy of identical paragraphs.
func (c *Catalog) gather(frags []string) []int {
	var ids []int
	for _, f := range frags {
		id, ok := c.fragIndex[f]
		if !ok {
			id = len(c.fragments)
			c.fragIndex[f] = id
			c.fragments = append(c.fragments, f)
		}
		ids = append(ids, id)
	}
	return ids
}

// Tools returns every registered tool in registration order.
func (c *Catalog) Tools() []*tool.Tool { return append([]*tool.Tool(nil), c.tools...) }

// Lookup returns the registered tool with that name.
func (c *Catalog) Lookup(name string) (*tool.Tool, bool) {
	i, ok := c.index[name]
	if !ok {
		return nil, false
	}
	return c.tools[i], true
}

// Len returns the number of registered tools.
func (c *Catalog) Len() int { return len(c.tools) }
