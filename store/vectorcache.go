package store

import (
	"container/list"
	"crypto/rand"
	"encoding/binary"
	"sync"

	"github.com/quiverhq/quiver/retrieve"
)

// DefaultVectorCacheBytes is how many bytes of stored vectors a
// VectorCache keeps by default: 64 MiB, the vectors of about 120,000
// memories of the local embedder (512 dimensions), or 13 people at the
// per-owner cap.
const DefaultVectorCacheBytes = 64 << 20

// VectorKey names one cached segment of vectors: the memories of one
// owner ("" for the organisation's shared ones) made by one model.
type VectorKey struct{ OrgID, OwnerID, Model string }

// VectorCache keeps segments of stored vectors in memory so that a vector
// search reads them from the database only when they changed. A backend
// stamps every change of an owner's memories with a fresh generation
// (NewGeneration, written in the change's transaction) and asks for a
// segment with the generation it read first: a segment cached under
// another generation is stale and read again. A segment whose owner has
// no generation (never written since the generations began; deleted
// whole) is never cached. Safe for concurrent use; the segments it
// returns are shared: read-only.
type VectorCache struct {
	mu      sync.Mutex
	limit   int64
	size    int64
	entries map[VectorKey]*list.Element
	lru     *list.List // of *vectorSegment, most recent first
}

type vectorSegment struct {
	key   VectorKey
	gen   int64
	cands []retrieve.Candidate
	size  int64
}

// NewVectorCache returns a cache of at most limit bytes of vectors and
// ids (0 means DefaultVectorCacheBytes); a segment larger than the whole
// limit is never kept.
func NewVectorCache(limit int64) *VectorCache {
	if limit <= 0 {
		limit = DefaultVectorCacheBytes
	}
	return &VectorCache{limit: limit, entries: map[VectorKey]*list.Element{}, lru: list.New()}
}

// Get returns the segment cached for k under gen; false when there is
// none, or only one under another generation. gen 0 (no generation) is
// never cached.
func (c *VectorCache) Get(k VectorKey, gen int64) ([]retrieve.Candidate, bool) {
	if c == nil || gen == 0 {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if !ok {
		return nil, false
	}
	seg := e.Value.(*vectorSegment)
	if seg.gen != gen {
		c.remove(e)
		return nil, false
	}
	c.lru.MoveToFront(e)
	return seg.cands, true
}

// Put keeps cands for k under gen (read after gen was), evicting the
// least recently used segments over the limit. gen 0 keeps nothing.
func (c *VectorCache) Put(k VectorKey, gen int64, cands []retrieve.Candidate) {
	if c == nil || gen == 0 {
		return
	}
	size := int64(64)
	for _, cd := range cands {
		size += int64(len(cd.ID)+len(cd.Vector)) + 48
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[k]; ok {
		c.remove(e)
	}
	if size > c.limit {
		return
	}
	c.entries[k] = c.lru.PushFront(&vectorSegment{key: k, gen: gen, cands: cands, size: size})
	c.size += size
	for c.size > c.limit {
		c.remove(c.lru.Back())
	}
}

// Bytes returns how many bytes the cached segments take, as Put counts
// them.
func (c *VectorCache) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.size
}

func (c *VectorCache) remove(e *list.Element) {
	seg := e.Value.(*vectorSegment)
	c.lru.Remove(e)
	delete(c.entries, seg.key)
	c.size -= seg.size
}

// NewGeneration returns a fresh generation for a change of an owner's
// memories: random, positive, never 0, so that a change made by any
// process is told apart from every earlier state without a counter to
// agree on.
func NewGeneration() int64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return int64(binary.LittleEndian.Uint64(b[:])>>2) + 1
}
