package pipeline

import (
	"context"
	"sync"
)

// Settling candidates by cluster.
//
// In a duplicate-dense stream most of a document's candidates are members
// of one cluster: earlier copies of the same text, which the pipeline
// already decided are duplicates of each other. Verifying each of them
// (passage alignment included) costs most of the verification and can
// only add matches of that cluster. So the index stage groups a
// document's earlier candidates by their known cluster and puts each
// group's representative first (the cluster's first document when it is
// a candidate, else the best ranked member); the verifier verifies in
// that order and, once a member is a near (or exact) duplicate, leaves
// the group's other members unverified: they are counted in the event's
// Settled, apart from Unverified. A partial match settles nothing
// (another member may hold more of the document), nor does a distinct
// one, so the verdict's kind is the one verifying every candidate gives;
// its duplicate_of is the best verified match, a member of the same
// cluster.
//
// A candidate's cluster is known when its verdict was given by this
// process: the cluster cache. To make the grouping the same on every run
// of one input (whatever the timing of the stages, and so the same events
// on every index backend), it reads the cache only for candidates that
// are not among the run's last settleLag documents, and the index stage
// waits until the resolve stage has decided everything before those
// (normally long done: the stages between hold fewer). Candidates decided
// by another instance, or forgotten, are verified like any other.

// settleLag is the default of Pipeline.settleLag: many more documents
// than the stages between the index stage and the resolve stage hold (a
// few batches), so the index stage seldom waits. It is a constant, not a
// multiple of the batch size, so that the events do not depend on it.
const settleLag = 1024

// settler is the run's state of candidate settling: the ids of the last
// lag documents by input position, and how far the resolve stage has got.
type settler struct {
	lag int64
	// ring holds the ids of positions [next−lag, next), at pos % lag;
	// recent counts each id's occurrences in it.
	ring   []string
	recent map[string]int
	next   int64

	mu       sync.Mutex
	resolved int64         // positions below it are decided
	advanced chan struct{} // closed and replaced when resolved grows
}

func newSettler(lag int) *settler {
	return &settler{lag: int64(lag), ring: make([]string, lag), recent: map[string]int{}, advanced: make(chan struct{})}
}

// resolvedUpTo records that every position below n is decided (resolve
// stage).
func (s *settler) resolvedUpTo(n int64) {
	s.mu.Lock()
	if n > s.resolved {
		s.resolved = n
		close(s.advanced)
		s.advanced = make(chan struct{})
	}
	s.mu.Unlock()
}

// waitResolved blocks until every position below n is decided.
func (s *settler) waitResolved(ctx context.Context, n int64) error {
	for {
		s.mu.Lock()
		done, ch := s.resolved >= n, s.advanced
		s.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// push appends the document at the next position (id "" for one that did
// not reach the index) and forgets the one lag positions before it.
func (s *settler) push(id string) {
	i := s.next % s.lag
	if s.next >= s.lag {
		if old := s.ring[i]; old != "" {
			if s.recent[old]--; s.recent[old] == 0 {
				delete(s.recent, old)
			}
		}
	}
	s.ring[i] = id
	if id != "" {
		s.recent[id]++
	}
	s.next++
}

// group sets j's verification groups (j.groups) over its earlier
// candidates and moves each group's representative to the group's first
// place. It must be called in input order, with the window (push) at j's
// position and the positions before it lag back decided.
func (p *Pipeline) group(s *settler, j *job) {
	j.groups = nil
	if j.earlier < 2 {
		return
	}
	type member struct{ first, n int }
	var byCluster map[string]*member
	clusters := make([]string, j.earlier)
	for i, c := range j.cands[:j.earlier] {
		if s.recent[c.ID] > 0 {
			continue
		}
		cl, ok := p.clusters.peek(c.ID)
		if !ok {
			continue
		}
		clusters[i] = cl
		if byCluster == nil {
			byCluster = map[string]*member{}
		}
		if m := byCluster[cl]; m != nil {
			m.n++
		} else {
			byCluster[cl] = &member{first: i, n: 1}
		}
	}
	groups := make([]int32, len(j.cands))
	next, any := int32(0), false
	ids := map[string]int32{}
	for i := range groups {
		groups[i] = -1
		if i >= j.earlier || clusters[i] == "" {
			continue
		}
		m := byCluster[clusters[i]]
		if m.n < 2 {
			continue
		}
		g, ok := ids[clusters[i]]
		if !ok {
			g, next = next, next+1
			ids[clusters[i]] = g
		}
		groups[i], any = g, true
		if j.cands[i].ID == clusters[i] && i != m.first {
			// The cluster's first document represents it: it takes the
			// place of the group's best ranked member.
			j.cands[i], j.cands[m.first] = j.cands[m.first], j.cands[i]
		}
	}
	if any {
		j.groups = groups
	}
}
