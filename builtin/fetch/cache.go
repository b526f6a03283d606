package fetch

import (
	"container/list"
	"net/url"
	"sync"
	"unicode/utf8"

	"github.com/quiverhq/quiver/tool"
)

// maxCachedChars keeps one huge page from filling the cache.
const maxCachedChars = 1 << 20

// pageCache keeps the most recently converted pages so that paging through
// a long page with start_index fetches it once. Entries are keyed by
// organisation, conversation and URL: one conversation never sees a page
// another fetched. It is safe for concurrent use; a nil *pageCache holds
// nothing. It is per process, and harmless when it misses or is stale:
// with several replicas, paging that lands on another replica fetches
// the page again.
type pageCache struct {
	mu    sync.Mutex
	max   int
	order *list.List // of cacheKey, most recent first
	items map[string]*list.Element
	docs  map[string]document
}

// newPageCache returns a cache of up to n pages, or nil when n < 1.
func newPageCache(n int) *pageCache {
	if n < 1 {
		return nil
	}
	return &pageCache{max: n, order: list.New(), items: map[string]*list.Element{}, docs: map[string]document{}}
}

func cacheKey(s tool.Scope, u *url.URL) string {
	return s.OrgID + "\x00" + s.ConversationID + "\x00" + u.String()
}

func (c *pageCache) get(key string) (document, bool) {
	if c == nil {
		return document{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return document{}, false
	}
	c.order.MoveToFront(el)
	return c.docs[key], true
}

func (c *pageCache) put(key string, d document) {
	if c == nil || utf8.RuneCountInString(d.Text) > maxCachedChars {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		c.order.MoveToFront(el)
		c.docs[key] = d
		return
	}
	c.items[key] = c.order.PushFront(key)
	c.docs[key] = d
	for c.order.Len() > c.max {
		old := c.order.Remove(c.order.Back()).(string)
		delete(c.items, old)
		delete(c.docs, old)
	}
}
