package llm

import (
	"bytes"
	"encoding/json"
	"hash/maphash"
	"sync"
)

// DefaultToolCacheEntries is how many definition lists a ToolCache keeps
// when NewToolCache is given zero.
const DefaultToolCacheEntries = 256

// ToolCache keeps what an adapter builds from a list of tool definitions
// (its SDK's declarations, ready to send), so that the model calls of
// every turn with the same definitions build them once. An entry is
// found by the definitions themselves — every name, description and
// parameters schema, byte for byte, in order: a hash only picks the
// bucket, and an entry keeps its own copy of the definitions and is
// served only for equal ones. So it needs no invalidation and is never
// served for other definitions. It holds at most its size of entries;
// when full it is emptied. A build that fails is not kept.
//
// A nil *ToolCache builds on every call. It is safe for concurrent use;
// what it returns is shared by every caller and must not be changed.
type ToolCache[T any] struct {
	max     int
	seed    maphash.Seed
	mu      sync.Mutex
	entries map[uint64][]toolEntry[T]
	n       int
	// builds counts the lists built (the misses), for tests.
	builds int
}

// toolEntry is one kept list: the definitions it was built from and
// what was built.
type toolEntry[T any] struct {
	defs  []ToolDef
	built T
}

// NewToolCache returns a cache of at most max definition lists; max <= 0
// means DefaultToolCacheEntries.
func NewToolCache[T any](max int) *ToolCache[T] {
	if max <= 0 {
		max = DefaultToolCacheEntries
	}
	return &ToolCache[T]{max: max, seed: maphash.MakeSeed(), entries: map[uint64][]toolEntry[T]{}}
}

// Get returns what build makes of defs, from the cache when equal
// definitions were built before.
func (c *ToolCache[T]) Get(defs []ToolDef, build func([]ToolDef) (T, error)) (T, error) {
	if c == nil {
		return build(defs)
	}
	h := hashDefs(c.seed, defs)
	c.mu.Lock()
	for _, e := range c.entries[h] {
		if equalDefs(e.defs, defs) {
			c.mu.Unlock()
			return e.built, nil
		}
	}
	c.mu.Unlock()
	built, err := build(defs)
	if err != nil {
		return built, err
	}
	kept := cloneDefs(defs)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n >= c.max {
		clear(c.entries)
		c.n = 0
	}
	c.entries[h] = append(c.entries[h], toolEntry[T]{defs: kept, built: built})
	c.n++
	c.builds++
	return built, nil
}

// Len returns how many lists the cache holds.
func (c *ToolCache[T]) Len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// hashDefs picks the bucket of a definitions list.
func hashDefs(seed maphash.Seed, defs []ToolDef) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	for _, d := range defs {
		// Each field once, with a separator no JSON text holds raw, so
		// the bucket follows the boundaries too (the comparison decides).
		h.WriteString(d.Name)
		h.WriteByte(0)
		h.WriteString(d.Description)
		h.WriteByte(0)
		h.Write(d.Parameters)
		h.WriteByte(0)
	}
	return h.Sum64()
}

// equalDefs reports whether two lists hold the same definitions, in the
// same order, byte for byte.
func equalDefs(a, b []ToolDef) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Description != b[i].Description || !bytes.Equal(a[i].Parameters, b[i].Parameters) ||
			(a[i].Parameters == nil) != (b[i].Parameters == nil) {
			return false
		}
	}
	return true
}

// cloneDefs copies a list, its schemas too, so that a kept entry cannot
// change with the caller's definitions.
func cloneDefs(defs []ToolDef) []ToolDef {
	out := make([]ToolDef, len(defs))
	for i, d := range defs {
		out[i] = d
		if d.Parameters != nil {
			out[i].Parameters = bytes.Clone(d.Parameters)
		}
	}
	return out
}

// Checks keeps an adapter's answers to CheckTool per definition, found
// as ToolCache finds a list (by the definition itself, byte for byte),
// refusals included: the turns of one toolset then check each schema
// once. A nil *Checks checks every time. It is safe for concurrent use.
type Checks struct{ c *ToolCache[error] }

// NewChecks returns a cache of at most max definitions' answers; max <=
// 0 means 16 × DefaultToolCacheEntries.
func NewChecks(max int) *Checks {
	if max <= 0 {
		max = 16 * DefaultToolCacheEntries
	}
	return &Checks{c: NewToolCache[error](max)}
}

// Check returns check's answer for d, from the cache when an equal
// definition was checked before.
func (c *Checks) Check(d ToolDef, check func(ToolDef) error) error {
	if c == nil {
		return check(d)
	}
	answer, _ := c.c.Get([]ToolDef{d}, func(defs []ToolDef) (error, error) { return check(defs[0]), nil })
	return answer
}

// EncodeOnce replaces each of an SDK's declarations, in place, with
// override of its own encoding (a json.RawMessage; override is the SDK's
// param.Override), so that a request sends those bytes without the SDK
// encoding the declaration again. A declaration whose bytes would not
// come back unchanged through the override stays the SDK's own value, so
// what is sent is the same either way. A declaration that cannot be
// encoded stops it with fail(i, err), i its index; decls is then partly
// replaced.
func EncodeOnce[T json.Marshaler](decls []T, override func(raw any) T, fail func(i int, err error) error) error {
	for i, d := range decls {
		b, err := d.MarshalJSON()
		if err != nil {
			return fail(i, err)
		}
		o := override(json.RawMessage(b))
		if again, err := o.MarshalJSON(); err == nil && bytes.Equal(again, b) {
			decls[i] = o
		}
	}
	return nil
}

// DeclCache is what an adapter keeps of tool definitions: the
// declaration lists its requests carry (a ToolCache) and its answers to
// CheckTool (Checks), both found by the definitions themselves. A nil
// *DeclCache builds and checks every time. It is safe for concurrent
// use; what it returns is shared and must not be changed.
type DeclCache[T any] struct {
	lists  *ToolCache[T]
	checks *Checks
}

// NewDeclCache returns a cache of at most max declaration lists and 16 ×
// max checked definitions; max <= 0 means DefaultToolCacheEntries.
func NewDeclCache[T any](max int) *DeclCache[T] {
	return &DeclCache[T]{lists: NewToolCache[T](max), checks: NewChecks(16 * max)}
}

// Len returns how many declaration lists the cache holds.
func (c *DeclCache[T]) Len() int {
	if c == nil {
		return 0
	}
	return c.lists.Len()
}

// List returns what build makes of defs, from the cache when equal
// definitions were built before.
func (c *DeclCache[T]) List(defs []ToolDef, build func([]ToolDef) (T, error)) (T, error) {
	if c == nil {
		return build(defs)
	}
	return c.lists.Get(defs, build)
}

// Check returns check's answer for d, from the cache when an equal
// definition was checked before.
func (c *DeclCache[T]) Check(d ToolDef, check func(ToolDef) error) error {
	if c == nil {
		return check(d)
	}
	return c.checks.Check(d, check)
}
