package prompt

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/tmpl"
	"github.com/quiverhq/quiver/turn"
)

// DefaultCacheEntries is how many rendered system prompts a Cache keeps
// when NewCache is given zero.
const DefaultCacheEntries = 512

// Cache keeps rendered system prompts, so that the turns of one agent
// with one toolset render it once: System's output depends only on the
// authored prompt, the turn's capabilities and the toolset's names,
// families, macros and fragments, and the cache is keyed by exactly
// those (their bytes, not a hash or a version), so it needs no
// invalidation and two organisations never share an entry by accident.
// It holds at most its size of entries; when full it is emptied, which
// keeps it bounded without bookkeeping per hit. Each tool serialises its
// schema once, at construction (tool.Tool.Declaration shares those
// bytes); the engine keeps a toolset's list of definitions with the
// toolset (engine.Selections). The cache also keeps the time zones the
// context message loads (ContextMessage). A nil *Cache renders and loads
// every time. It is safe for concurrent use.
type Cache struct {
	max     int
	mu      sync.Mutex
	entries map[string]tmpl.Result
	// zones are the time zones loaded by name (turn.LoadZone reads the
	// zone's file on every call); a name that does not load is not kept.
	zones map[string]*time.Location
	// renders counts the prompts rendered (the misses), for tests.
	renders int
}

// NewCache returns a cache of at most max system prompts; max <= 0
// means DefaultCacheEntries.
func NewCache(max int) *Cache {
	if max <= 0 {
		max = DefaultCacheEntries
	}
	return &Cache{max: max, entries: map[string]tmpl.Result{}, zones: map[string]*time.Location{}}
}

// Assemble is the package's Assemble with the system prompt taken from
// the cache when the same one was rendered before.
func (c *Cache) Assemble(f turn.Facts, ts registry.Toolset) (Request, error) {
	return assemble(f, ts, c.System)
}

// ContextMessage is the package's ContextMessage with the caller's time
// zone loaded once per name (a zone's rules are then those of the
// process's first load of it, until it restarts). At most the cache's
// size of zones is kept; when full they are dropped.
func (c *Cache) ContextMessage(f turn.Facts) (string, error) {
	if c == nil {
		return ContextMessage(f)
	}
	return contextMessage(f, c.zone)
}

// zone is turn.LoadZone, from the cache when it holds the name.
func (c *Cache) zone(name string) (*time.Location, error) {
	c.mu.Lock()
	loc, ok := c.zones[name]
	c.mu.Unlock()
	if ok {
		return loc, nil
	}
	loc, err := turn.LoadZone(name)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.zones) >= c.max {
		clear(c.zones)
	}
	c.zones[name] = loc
	return loc, nil
}

// Fixed is the package's Fixed with the system prompt taken from the
// cache when the same one was rendered before.
func (c *Cache) Fixed(f turn.Facts, ts registry.Toolset) (Request, error) {
	return fixed(f, ts, c.System)
}

// System is the package's System, from the cache when it holds the
// result.
func (c *Cache) System(f turn.Facts, ts registry.Toolset) (tmpl.Result, error) {
	if c == nil {
		return System(f, ts)
	}
	env := Env(f, ts)
	key := systemKey(source(f), env, ts.Fragments())
	c.mu.Lock()
	r, ok := c.entries[key]
	c.mu.Unlock()
	if ok {
		r.Warnings = slices.Clone(r.Warnings) // the caller's own
		return withSkills(r, f, ts), nil
	}
	r, err := render(source(f), env, ts.Fragments())
	if err != nil {
		return tmpl.Result{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= c.max {
		clear(c.entries)
	}
	c.entries[key] = r
	c.renders++
	r.Warnings = slices.Clone(r.Warnings)
	return withSkills(r, f, ts), nil
}

// systemKey spells out every input of render: the source, the
// capabilities (in KnownCapabilities order), the declared names, the
// families and macros (sorted) and the fragments. Fields are
// NUL-separated and each string is length-prefixed, so no two inputs
// give one key.
func systemKey(src tmpl.Authored, env tmpl.Env, frags []string) string {
	var b strings.Builder
	add := func(s string) {
		b.WriteString(strconv.Itoa(len(s)))
		b.WriteByte(':')
		b.WriteString(s)
	}
	add(src.Text())
	b.WriteByte(0)
	for _, name := range tmpl.KnownCapabilities() {
		b.WriteByte('0' + boolByte(env.Capabilities[name]))
	}
	b.WriteByte(0)
	for _, name := range slices.Sorted(maps.Keys(env.Tools)) {
		add(name)
	}
	b.WriteByte(0)
	for _, fam := range slices.Sorted(maps.Keys(env.Families)) {
		add(fam)
		b.WriteByte('0' + boolByte(env.Families[fam]))
	}
	b.WriteByte(0)
	for _, k := range slices.Sorted(maps.Keys(env.Macros)) {
		add(k)
		add(env.Macros[k])
	}
	b.WriteByte(0)
	for _, fr := range frags {
		add(fr)
	}
	return b.String()
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}
