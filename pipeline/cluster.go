package pipeline

import "container/list"

// clusterCache remembers the cluster of recently decided documents, so a
// duplicate of a duplicate joins its original's cluster without asking the
// index. It is bounded (least recently used out); a miss is answered from
// the verdict recorded in the index. It is used by the resolve stage only.
type clusterCache struct {
	max   int
	ll    *list.List
	items map[string]*list.Element
}

type clusterEntry struct{ id, cluster string }

func newClusterCache(n int) *clusterCache {
	return &clusterCache{max: n, ll: list.New(), items: map[string]*list.Element{}}
}

func (c *clusterCache) lookup(id string) (string, bool) {
	if e, ok := c.items[id]; ok {
		c.ll.MoveToFront(e)
		return e.Value.(*clusterEntry).cluster, true
	}
	return "", false
}

func (c *clusterCache) put(id, cluster string) {
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
