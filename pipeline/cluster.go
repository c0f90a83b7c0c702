package pipeline

import (
	"container/list"
	"sync"
)

// clusterCache remembers the cluster of recently decided documents, so a
// duplicate of a duplicate joins its original's cluster without asking the
// index. It is bounded (least recently used out); a miss is answered from
// the verdict recorded in the index. The resolve stage fills it; the
// index stage peeks at it to group candidates by cluster (settle.go), so
// it is safe for concurrent use.
type clusterCache struct {
	mu    sync.Mutex
	max   int
	ll    *list.List
	items map[string]*list.Element
}

type clusterEntry struct{ id, cluster string }

func newClusterCache(n int) *clusterCache {
	return &clusterCache{max: n, ll: list.New(), items: map[string]*list.Element{}}
}

func (c *clusterCache) lookup(id string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[id]; ok {
		c.ll.MoveToFront(e)
		return e.Value.(*clusterEntry).cluster, true
	}
	return "", false
}

// peek is lookup without marking the entry used, so that what the cache
// evicts depends on the resolve stage's order alone.
func (c *clusterCache) peek(id string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[id]; ok {
		return e.Value.(*clusterEntry).cluster, true
	}
	return "", false
}

func (c *clusterCache) put(id, cluster string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[id]; ok {
		c.ll.MoveToFront(e)
		return // first verdict wins
	}
	c.items[id] = c.ll.PushFront(&clusterEntry{id, cluster})
	if c.ll.Len() > c.max {
		old := c.ll.Back()
		c.ll.Remove(old)
		delete(c.items, old.Value.(*clusterEntry).id)
	}
}

// forget drops id's entry (its document was deleted: a document re-sent
// under the id later is new and gets a cluster of its own).
func (c *clusterCache) forget(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[id]; ok {
		c.ll.Remove(e)
		delete(c.items, id)
	}
}
