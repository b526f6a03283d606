package discovery

import (
	"context"
	"strings"
	"sync"

	"github.com/quiverhq/quiver/tool"
)

// maxIndexes is how many indexes search_tools keeps: one per distinct
// set of available tools (an agent's selection under one catalog).
const maxIndexes = 32

// indexes keeps the indexes search_tools built, by the tools they hold,
// so the turns of one agent build theirs once. An index in use is never
// closed; the least recently used one not in use makes room. It is safe
// for concurrent use.
type indexes struct {
	max     int
	mu      sync.Mutex
	entries map[string]*indexEntry
	clock   uint64 // counts uses, for recency
	// builds counts the indexes built, for tests.
	builds int
}

type indexEntry struct {
	ix      *Index
	refs    int
	used    uint64
	evicted bool // out of the map: closed by its last release
}

func newIndexes(max int) *indexes {
	return &indexes{max: max, entries: map[string]*indexEntry{}}
}

// key identifies a set of tools by every name and description, in
// order: MCP tools are rebuilt per turn, so their pointers differ while
// what the index holds does not.
func key(tools []*tool.Tool) string {
	var b strings.Builder
	for _, t := range tools {
		b.WriteString(t.Name())
		b.WriteByte(0)
		b.WriteString(t.Spec().Description)
		b.WriteByte(1)
	}
	return b.String()
}

// get returns the index of tools, building it when none is kept, and the
// release the caller calls once done with it.
func (c *indexes) get(ctx context.Context, tools []*tool.Tool) (*Index, func(), error) {
	k := key(tools)
	c.mu.Lock()
	if e, ok := c.entries[k]; ok {
		c.clock++
		e.refs, e.used = e.refs+1, c.clock
		c.mu.Unlock()
		return e.ix, c.releaser(e), nil
	}
	c.mu.Unlock()
	ix, err := NewIndex(ctx, tools)
	if err != nil {
		return nil, nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.builds++
	if e, ok := c.entries[k]; ok {
		// Another call built it meanwhile: use that one.
		ix.Close()
		c.clock++
		e.refs, e.used = e.refs+1, c.clock
		return e.ix, c.releaser(e), nil
	}
	c.clock++
	e := &indexEntry{ix: ix, refs: 1, used: c.clock}
	if len(c.entries) >= c.max && !c.evictOne() {
		// Every kept index is in use: this one is not kept.
		e.evicted = true
		return ix, c.releaser(e), nil
	}
	c.entries[k] = e
	return ix, c.releaser(e), nil
}

// evictOne drops the least recently used entry not in use, closing it,
// and reports whether there was one. c.mu is held.
func (c *indexes) evictOne() bool {
	var oldest string
	var found *indexEntry
	for k, e := range c.entries {
		if e.refs == 0 && (found == nil || e.used < found.used) {
			oldest, found = k, e
		}
	}
	if found == nil {
		return false
	}
	delete(c.entries, oldest)
	found.ix.Close()
	return true
}

// releaser returns the release of one use of e: the last use of an
// entry no longer kept closes its index.
func (c *indexes) releaser(e *indexEntry) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			e.refs--
			if e.refs == 0 && e.evicted {
				e.ix.Close()
			}
		})
	}
}
