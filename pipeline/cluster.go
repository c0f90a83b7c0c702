package pipeline

import (
	"container/list"
	"sync"
)

// clusterCache remembers the cluster of documents by the Seq the index
// gave them, as their recorded verdicts name it: a cache of the index,
// which gives the answer the index gives (a member that starts cold reads
// the same clusters from the verdicts recorded there). It is filled by
// the resolve stage when it records a verdict, and with the verdicts read
// from the index (with the candidates, or for an earlier document decided
// elsewhere). A Seq names one document for good, so an entry never names
// another incarnation of an id. It is bounded (least recently used out);
// a miss is answered from the index. The index and resolve stages use it
// concurrently.
type clusterCache struct {
	mu    sync.Mutex
	max   int
	ll    *list.List
	items map[uint64]*list.Element
}

type clusterEntry struct {
	seq     uint64
	cluster string
}

func newClusterCache(n int) *clusterCache {
	return &clusterCache{max: n, ll: list.New(), items: map[uint64]*list.Element{}}
}

// get returns the cluster of document seq, if known.
func (c *clusterCache) get(seq uint64) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[seq]; ok {
		c.ll.MoveToFront(e)
		return e.Value.(*clusterEntry).cluster, true
	}
	return "", false
}

// put records the cluster of document seq, as its recorded verdict (or a
// revision of it) names it.
func (c *clusterCache) put(seq uint64, cluster string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[seq]; ok {
		e.Value.(*clusterEntry).cluster = cluster
		c.ll.MoveToFront(e)
		return
	}
	c.items[seq] = c.ll.PushFront(&clusterEntry{seq, cluster})
	if c.ll.Len() > c.max {
		old := c.ll.Back()
		c.ll.Remove(old)
		delete(c.items, old.Value.(*clusterEntry).seq)
	}
}
