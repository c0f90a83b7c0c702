package consumer

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The committable offset is one past the unbroken done prefix, whatever
// order records complete in; revoked partitions are never committed.
func TestTrackerPrefix(t *testing.T) {
	tr := newTracker()
	tr.assign("t", []int32{0, 1})
	var es []*entry
	for off := int64(10); off < 20; off++ {
		es = append(es, tr.add(&kgo.Record{Topic: "t", Partition: 0, Offset: off, LeaderEpoch: 3}))
	}
	if e := tr.add(&kgo.Record{Topic: "t", Partition: 7, Offset: 1}); e != nil {
		t.Fatal("record of an unassigned partition tracked")
	}
	next := func() int64 {
		c := tr.commitable(nil)
		if eo, ok := c["t"][0]; ok {
			return eo.Offset
		}
		return -1
	}
	tests := []struct {
		complete []int // indexes into es
		want     int64
	}{
		{[]int{3, 1}, -1},    // 10 not done: nothing
		{[]int{0}, 12},       // 10, 11 done → 12
		{[]int{2}, 14},       // 12, 13 (already) → 14
		{[]int{9, 8, 7}, 14}, // gap at 14
		{[]int{4, 5, 6}, 20},
	}
	for i, tt := range tests {
		for _, j := range tt.complete {
			tr.complete(es[j])
		}
		if got := next(); got != tt.want {
			t.Fatalf("step %d: next %d, want %d", i, got, tt.want)
		}
	}
	if eo := tr.commitable(nil)["t"][0]; eo.Epoch != 3 {
		t.Errorf("epoch %d, want 3", eo.Epoch)
	}
	tr.committed(tr.commitable(nil), nil)
	if c := tr.commitable(nil); len(c) != 0 {
		t.Errorf("committed offsets offered again: %v", c)
	}

	// Revocation detaches: later completions are never committable.
	e := tr.add(&kgo.Record{Topic: "t", Partition: 1, Offset: 5})
	states := tr.detach("t", []int32{1})
	if n, _ := tr.pending(states); n != 1 {
		t.Errorf("pending %d, want 1", n)
	}
	tr.complete(e)
	if c := tr.commitable(nil); len(c) != 0 {
		t.Errorf("revoked partition committable: %v", c)
	}
	if c := tr.commitable(states); c["t"][1].Offset != 6 {
		t.Errorf("revoked state's own commit %v, want 6", c)
	}
	if tr.add(&kgo.Record{Topic: "t", Partition: 1, Offset: 6}) != nil {
		t.Error("record of a revoked partition tracked")
	}
}

// Random completion orders always end with everything committable and
// never offer an offset past an undone record.
func TestTrackerRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		tr := newTracker()
		tr.assign("t", []int32{0})
		n := 1 + r.IntN(50)
		es := make([]*entry, n)
		for i := range es {
			es[i] = tr.add(&kgo.Record{Topic: "t", Offset: int64(i * 2)}) // gaps, as after compaction
		}
		done := make([]bool, n)
		for _, i := range r.Perm(n) {
			tr.complete(es[i])
			done[i] = true
			if eo, ok := tr.commitable(nil)["t"][0]; ok {
				for j := range n {
					if int64(j*2) < eo.Offset && !done[j] {
						t.Fatalf("offset %d offered with record %d undone", eo.Offset, j*2)
					}
				}
			}
		}
		if eo := tr.commitable(nil)["t"][0]; eo.Offset != int64((n-1)*2+1) {
			t.Fatalf("final %d, want %d", eo.Offset, (n-1)*2+1)
		}
	}
}

// The in-flight bound blocks at the limits, admits an oversized record
// alone, and wakes on release.
func TestInflight(t *testing.T) {
	f := newInflight(2, 100)
	ctx := context.Background()
	if err := f.acquire(ctx, 60); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if err := f.acquire(short, 60); err == nil {
		t.Fatal("byte bound not enforced")
	}
	if err := f.acquire(ctx, 40); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() { got <- f.acquire(ctx, 1000) }() // owned: read below
	select {
	case <-got:
		t.Fatal("record bound not enforced")
	case <-time.After(20 * time.Millisecond):
	}
	f.release(60)
	f.release(40)
	if err := <-got; err != nil { // alone, though over the byte bound
		t.Fatal(err)
	}
	if r, b := f.load(); r != 1 || b != 1000 {
		t.Errorf("load %d records %d bytes", r, b)
	}
}

// A partition assigned again while still tracked (franz-go hands a
// partition back unrevoked when its topic is added back before the group
// session ends) forgets its position, since the client's new cursor
// starts at the committed offset, but keeps its records in flight: they
// still complete and commit.
func TestTrackerAssignedAgain(t *testing.T) {
	tr := newTracker()
	tp := topicPartition{"t", 0}
	tr.assign("t", []int32{0})
	e := tr.add(&kgo.Record{Topic: "t", Partition: 0, Offset: 4})
	tr.polled("t", 0, 5)
	if p := tr.position(tp); p != 5 {
		t.Fatalf("position %d after polling offset 4, want 5", p)
	}
	tr.assign("t", []int32{0})
	if p := tr.position(tp); p != -1 {
		t.Errorf("position %d after the partition was assigned again, want -1 (unknown)", p)
	}
	if done, committed, owned, _ := tr.progress(tp); done != -1 || committed != -1 || !owned {
		t.Errorf("progress %d, %d, %v before completion; want -1, -1, true", done, committed, owned)
	}
	tr.complete(e)
	c := tr.commitable(nil)
	if got := c["t"][0].Offset; got != 5 {
		t.Errorf("commitable offset %d after the record in flight completed, want 5", got)
	}
	tr.committed(c, nil)
	if done, committed, owned, _ := tr.progress(tp); done != 5 || committed != 5 || !owned {
		t.Errorf("progress %d, %d, %v after the commit; want 5, 5, true", done, committed, owned)
	}
	tr.detach("t", []int32{0})
	if _, _, owned, _ := tr.progress(tp); owned {
		t.Error("a detached partition is still owned")
	}
}
