// Package registry is the tool catalog and per-turn selection: from the
// registered tools and a turn's facts, Select decides which tools the model
// may see and explains every tool it leaves out.
package registry

import (
	"fmt"

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
}

// New returns an empty catalog.
func New() *Catalog {
	return &Catalog{index: map[string]int{}, fragIndex: map[string]int{}}
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
		c.index[t.Name()] = len(c.tools)
		c.tools = append(c.tools, t)
		c.fragIDs = append(c.fragIDs, c.gather(t.Spec().Fragments))
	}
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
