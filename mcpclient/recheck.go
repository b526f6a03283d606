package mcpclient

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/quiverhq/quiver/store"
)

// DefaultRecheckTTL is how long a registration read for a call's
// re-check is reused when RegistrationsConfig.RecheckTTL is zero.
const DefaultRecheckTTL = 2 * time.Second

// maxRecheckEntries bounds the re-check cache: past it the cache is
// emptied, so it never holds more than this many registrations.
const maxRecheckEntries = 4096

// recheckCache keeps the registrations that calls' re-checks read, so
// that the calls of a turn do not each read the store. An entry serves
// for the TTL from its read. This process's own changes (Add, SetEnabled,
// Remove) forget the name's entry before they return, so the next call
// here sees them at once; a change made through another process (another
// replica on the same PostgreSQL database) is seen within the TTL. It is
// safe for concurrent use.
type recheckCache struct {
	ttl     time.Duration
	mu      sync.Mutex
	entries map[recheckKey]recheckEntry
	// gen counts forgets: a read that began before one is not kept, so a
	// re-check racing a change cannot put back what the change replaced.
	gen uint64
}

type recheckKey struct{ org, name string }

// recheckEntry is a registration as read at readAt; missing when the
// store had none by that name.
type recheckEntry struct {
	reg     store.MCPServer
	missing bool
	readAt  time.Time
}

// get returns the fresh entry for (org, name), if any, and the
// generation a read made now must give put.
func (c *recheckCache) get(org, name string, now time.Time) (recheckEntry, uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[recheckKey{org, name}]
	if !ok || now.Sub(e.readAt) >= c.ttl || now.Before(e.readAt) {
		return recheckEntry{}, c.gen, false
	}
	return e, c.gen, true
}

// put keeps e for (org, name), unless a forget happened since gen.
func (c *recheckCache) put(org, name string, e recheckEntry, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if c.entries == nil || len(c.entries) >= maxRecheckEntries {
		c.entries = map[recheckKey]recheckEntry{}
	}
	c.entries[recheckKey{org, name}] = e
}

// forget drops the entry for (org, name).
func (c *recheckCache) forget(org, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	delete(c.entries, recheckKey{org, name})
}

// current returns the stored registration named name in org, from the
// cache when fresh, else from the store (a store failure is returned and
// not kept). A missing one is ErrNotFound, wrapped.
func (r *Registrations) current(ctx context.Context, org, name string) (store.MCPServer, error) {
	now := r.cfg.Now()
	e, gen, ok := r.checks.get(org, name, now)
	if ok {
		if e.missing {
			return store.MCPServer{}, store.ErrNotFound
		}
		return e.reg, nil
	}
	cur, err := r.cfg.Store.GetMCPServer(ctx, org, name)
	switch {
	case errors.Is(err, store.ErrNotFound):
		r.checks.put(org, name, recheckEntry{missing: true, readAt: now}, gen)
	case err == nil:
		r.checks.put(org, name, recheckEntry{reg: cur, readAt: now}, gen)
	}
	return cur, err
}
