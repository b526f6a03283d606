package engine

import (
	"hash/maphash"
	"maps"
	"slices"
	"sync"
	"weak"

	"github.com/quiverhq/quiver/intent"
	"github.com/quiverhq/quiver/prompt"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/tmpl"
	"github.com/quiverhq/quiver/turn"
)

// DefaultSelectionEntries is how many selections a Selections keeps when
// NewSelections is given zero.
const DefaultSelectionEntries = 512

// Selections keeps what a turn's selection gives, per distinct input:
// the toolset selected and gated (Deliberate Tool Mode's Gate) from the
// turn's catalog, and the request's fixed part assembled for it (system
// prompt, definitions and their sizes; prompt.Fixed). Turns of one agent
// under one configuration then select, gate and assemble once.
//
// An entry is found by every input of that work and by nothing else:
// the catalog itself (a weak pointer, so an entry neither keeps a
// catalog alive nor is ever found for another catalog, and the catalog's
// length, as a catalog only grows), the facts' turn.Selection, the
// agent's authored prompt, whether the mode gates the turn, its open
// targets in order and its gate options. An entry keeps its own copy of
// those inputs and is served only for inputs equal to them, field by
// field (a hash of them only picks the bucket); the work is done from
// them alone (turn.Selection.Facts), never from the rest of the turn's
// facts. So no entry can depend on something its key leaves out, no
// version is needed and nothing is invalidated. Detection, the open
// targets and the model's check of the schemas stay per turn.
//
// The engine keeps only the selections of the runtime's own catalog: a
// turn catalog the ToolSource built for one turn (an organisation with
// MCP servers) would never be found again, and is selected anew.
//
// It holds at most its size of entries; when full it is emptied. A nil
// *Selections keeps nothing. It is safe for concurrent use.
type Selections struct {
	max     int
	seed    maphash.Seed
	mu      sync.Mutex
	entries map[selectionKey][]*selected
	n       int // entries held
	// builds counts the selections worked out (the misses), for tests.
	builds int
}

// NewSelections returns a cache of at most max selections; max <= 0
// means DefaultSelectionEntries.
func NewSelections(max int) *Selections {
	if max <= 0 {
		max = DefaultSelectionEntries
	}
	return &Selections{max: max, seed: maphash.MakeSeed(), entries: map[selectionKey][]*selected{}}
}

// selected is one entry: the inputs it was built from, the gated
// toolset and its request's fixed part (no context message), or the
// error assembling it gave.
type selected struct {
	inputs  selectionInputs
	toolset registry.Toolset
	// all is the selection before the gate narrowed it: what a call
	// may still declare mid-turn (agent.Expander).
	all   registry.Toolset
	fixed prompt.Request
	err   error
}

// selectionInputs are the inputs of a selection besides its catalog.
// equal, hash and clone name every field; a field added here must join
// all three (TestSelectionInputsCompareEveryField fails until it does).
type selectionInputs struct {
	sel    turn.Selection
	prompt tmpl.Authored
	// gate is whether Deliberate Tool Mode gates the turn; open and opts
	// are its open targets (in order) and options.
	gate bool
	open []string
	opts intent.GateOptions
}

// selectionKey is the bucket of an entry.
type selectionKey struct {
	catalog weak.Pointer[registry.Catalog]
	tools   int
	hash    uint64
}

// equal reports whether in and o are the same inputs, field by field.
func (in selectionInputs) equal(o selectionInputs) bool {
	a, b := in.sel, o.sel
	return a.Model == b.Model && slices.Equal(a.Allow, b.Allow) && maps.Equal(a.Switches, b.Switches) &&
		a.Attachments == b.Attachments && a.Knowledge == b.Knowledge && slices.Equal(a.Skills, b.Skills) &&
		slices.Equal(a.Backends, b.Backends) &&
		a.Network == b.Network && slices.Equal(a.Permissions, b.Permissions) && a.Deliberate == b.Deliberate &&
		a.Surface == b.Surface &&
		in.prompt == o.prompt && in.gate == o.gate && slices.Equal(in.open, o.open) && in.opts == o.opts
}

// hashedEnds is how many names at each end of a long list hash picks
// its bucket from.
const hashedEnds = 8

// hash picks the inputs' bucket: equal inputs hash alike (the switches,
// a map, are counted, not spelled, so their order cannot matter). Each
// string is hashed on its own and the hashes mixed, which is quicker
// than streaming them for a long allowlist of short names. A list longer
// than 2×hashedEnds is hashed by its length and the names at its ends
// only: a bucket is a hint, equal compares every name, and hashing all of
// a 1,000-tool allowlist was most of a cached turn's lookup. Lists that
// differ only in their middle share a bucket, which holds at most the
// cache's size of entries.
func (in selectionInputs) hash(seed maphash.Seed) uint64 {
	const prime = 0x100000001b3
	h := uint64(len(in.sel.Switches))
	num := func(v int) { h = (h ^ uint64(v)) * prime }
	str := func(s string) { h = (h ^ maphash.String(seed, s)) * prime }
	list := func(l []string) {
		num(len(l))
		if len(l) > 2*hashedEnds {
			for _, s := range l[:hashedEnds] {
				str(s)
			}
			l = l[len(l)-hashedEnds:]
		}
		for _, s := range l {
			str(s)
		}
	}
	s := in.sel
	str(s.Model.Provider)
	str(s.Model.Name)
	list(s.Allow)
	num(s.Attachments)
	list(s.Backends)
	str(s.Network)
	str(s.Surface)
	list(s.Permissions)
	str(in.prompt.Text())
	list(in.open)
	return h
}

// clone is a copy of in sharing no slice or map with it, so that an
// entry's inputs cannot change after it is kept.
func (in selectionInputs) clone() selectionInputs {
	in.sel.Allow = slices.Clone(in.sel.Allow)
	in.sel.Switches = maps.Clone(in.sel.Switches)
	in.sel.Backends = slices.Clone(in.sel.Backends)
	in.sel.Skills = slices.Clone(in.sel.Skills)
	in.sel.Permissions = slices.Clone(in.sel.Permissions)
	in.open = slices.Clone(in.open)
	return in
}

// get returns the entry for cat and in, working it out with build (from
// in alone) when the cache does not hold it. A nil c builds every time.
func (c *Selections) get(cat *registry.Catalog, in selectionInputs, build func(*registry.Catalog, selectionInputs) *selected) *selected {
	if c == nil {
		return build(cat, in)
	}
	k := selectionKey{catalog: weak.Make(cat), tools: cat.Len(), hash: in.hash(c.seed)}
	c.mu.Lock()
	for _, s := range c.entries[k] {
		if s.inputs.equal(in) {
			c.mu.Unlock()
			return s
		}
	}
	c.mu.Unlock()
	in = in.clone()
	s := build(cat, in)
	s.inputs = in
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n >= c.max {
		clear(c.entries)
		c.n = 0
	}
	c.entries[k] = append(c.entries[k], s)
	c.n++
	c.builds++
	return s
}

// selectFor works out an entry from cat and in alone: select, gate (when
// the mode is on), defer (when the toolset is large: Config.Deferral) and
// the request's fixed part.
func (e *Engine) selectFor(cat *registry.Catalog, in selectionInputs) *selected {
	f := in.sel.Facts(in.prompt)
	all := cat.Select(f)
	ts := all
	if in.gate {
		ts = intent.Gate(all, cat, in.open, in.opts)
		if slices.Contains(in.open, intent.Discovery) {
			ts = e.cfg.Deferral.Discover(cat, ts)
		}
	}
	ts = e.cfg.Deferral.Defer(cat, ts)
	fixed, err := e.cfg.Prompts.Fixed(f, ts)
	return &selected{toolset: ts, all: all, fixed: fixed, err: err}
}
