package consumer

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/neardup/neardup/stream"
)

// Oversized records.
//
// A fetch response larger than the client's BrokerMaxReadBytes cannot be
// read at all: franz-go drops the connection and reports the error with
// no partition (topic "", partition −1), and since a broker always returns
// the first record batch of a fetch whole, however small the fetch
// limits, the same fetch fails again forever. Every partition fetched
// from that broker stops with it.
//
// The member gets out of it itself: it looks for the partition whose next
// batch is over the read limit (a probe per owned partition with data
// behind its position, one batch each), reads that batch with a client
// whose read limit is kafka.max_record_bytes, feeds its records to the
// pipeline like any other (a record over sketch.max_bytes becomes a
// too_large dead letter with its key, headers and value) and moves the
// group's position past it. A batch over kafka.max_record_bytes is never
// read: its first offset becomes a too_large dead letter without key,
// headers or value (neardup.source.size says how big the batch was), and
// the position moves one record on. Until it has moved on, the partition
// counts as stalled (neardup_consumer_stalled_partitions, /readyz).
//
// The position is moved with SetOffsets when franz-go knows the
// partition's position; when the batch is the first since the assignment
// and the group has no offset for it, it cannot be, so the member waits
// for the batch's records to be decided, commits past them and re-joins
// the group: the new cursor starts at the committed offset, whether the
// group revokes the partition and assigns it again or hands it back
// unrevoked (franz-go does when the topic is added back before the
// session ends).

// responseTooLarge reports whether err is franz-go's "response exceeds
// BrokerMaxReadBytes" (not exported), and the response size it names.
func responseTooLarge(err error) (size int64, ok bool) {
	if err == nil || !strings.Contains(err.Error(), "BrokerMaxReadBytes") {
		return 0, false
	}
	if m := sizeRE.FindStringSubmatch(err.Error()); m != nil {
		size, _ = strconv.ParseInt(m[1], 10, 64)
	}
	return size, true
}

var sizeRE = regexp.MustCompile(`response size (\d+) >`)

// probeResult is what one probe found at a partition's position.
type probeResult struct {
	recs     []*kgo.Record // the batch at the position (nil when too large)
	tooLarge bool
	size     int64 // response size when tooLarge
}

// probe reads the first record batch at off of topic/partition with a
// short-lived direct client whose read limit is limit.
func (k *Kafka) probe(ctx context.Context, topic string, partition int32, off int64, limit int32) (probeResult, error) {
	opts := append([]kgo.Opt{}, k.probeOpts...)
	opts = append(opts,
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {partition: kgo.NewOffset().At(off)}}),
		kgo.FetchMaxBytes(1<<10), kgo.FetchMaxPartitionBytes(1<<10), // one batch, whatever its size
		kgo.BrokerMaxReadBytes(limit), kgo.FetchMaxWait(200*time.Millisecond),
	)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return probeResult{}, err
	}
	defer cl.Close()
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		fs := cl.PollFetches(pctx)
		if pctx.Err() != nil {
			return probeResult{}, fmt.Errorf("probe %s/%d at %d: %w", topic, partition, off, pctx.Err())
		}
		var res probeResult
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) {
			if size, ok := responseTooLarge(err); ok {
				res.tooLarge, res.size = true, size
			} else if ferr == nil {
				ferr = err
			}
		})
		if res.tooLarge {
			return res, nil
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset >= off {
				res.recs = append(res.recs, r)
			}
		})
		if len(res.recs) > 0 {
			return res, nil
		}
		if ferr != nil {
			return probeResult{}, fmt.Errorf("probe %s/%d at %d: %w", topic, partition, off, ferr)
		}
	}
}

// rescue finds the partitions whose next batch is too large for the
// consumer and moves them past it (see the comment at the top of this
// file). It runs on Run's goroutine, between polls. It returns an error
// only when ctx ends; partitions it could not move on are left stalled.
func (k *Kafka) rescue(ctx context.Context, out chan<- stream.Item) error {
	owned := k.tr.owned()
	if len(owned) == 0 {
		return nil
	}
	positions, hwms, err := k.positions(ctx, owned)
	if err != nil {
		k.log.Warn("oversized batch: cannot read the partitions' positions", "err", err)
		k.stalled(-1, true)
		return ctx.Err()
	}
	found, rejoin := false, false
	for _, tp := range owned {
		pos, ok := positions[tp]
		if !ok || pos >= hwms[tp] {
			continue
		}
		res, err := k.probe(ctx, tp.topic, tp.partition, pos, k.readLimit)
		if err != nil {
			k.log.Warn("oversized batch: probe failed", "topic", tp.topic, "partition", tp.partition, "offset", pos, "err", err)
			continue
		}
		if !res.tooLarge {
			continue // not this one
		}
		found = true
		size := res.size
		res, err = k.probe(ctx, tp.topic, tp.partition, pos, k.maxRecord)
		if err != nil {
			k.log.Warn("oversized batch: read failed", "topic", tp.topic, "partition", tp.partition, "offset", pos, "err", err)
			k.stalled(tp.partition, true)
			continue
		}
		next := pos + 1
		if res.tooLarge {
			size = res.size
			k.log.Warn("record batch over kafka.max_record_bytes: dead-lettered unread", "topic", tp.topic,
				"partition", tp.partition, "offset", pos, "batch_bytes", size, "max_record_bytes", k.maxRecord)
			r := &kgo.Record{Topic: tp.topic, Partition: tp.partition, Offset: pos, LeaderEpoch: -1,
				// The only header of an unread record (sink.HeaderSourceSize).
				Headers: []kgo.RecordHeader{{Key: "neardup.source.size", Value: []byte(strconv.FormatInt(size, 10))}}}
			err := k.feedRejected(ctx, r, size, out)
			if err != nil {
				return err
			}
		} else {
			k.log.Warn("record batch over the fetch limit read alone", "topic", tp.topic, "partition", tp.partition,
				"offset", pos, "records", len(res.recs), "batch_bytes", size)
			for _, r := range res.recs {
				if err := k.feed(ctx, r, out); err != nil {
					return err
				}
				next = r.Offset + 1
			}
		}
		if _, ok := k.cl.CommittedOffsets()[tp.topic][tp.partition]; !ok {
			// franz-go moves only a position it knows (a record polled
			// or an offset committed since the assignment); a partition
			// whose very first batch is oversized is given up and taken
			// again, and its new cursor starts at the group's committed
			// offset. So that offset must be past the batch before the
			// rejoin: the group may hand the partition back without
			// revoking it (franz-go does when the topic is added back
			// before the session ends), and then no revocation commits
			// the records just fed.
			retake, err := k.commitPast(ctx, tp, next)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				k.log.Warn("oversized batch: records read, but not committed past; read again at the next attempt",
					"topic", tp.topic, "partition", tp.partition, "offset", pos, "err", err)
				k.stalled(tp.partition, true)
				continue
			}
			rejoin = rejoin || retake
		} else {
			k.cl.SetOffsets(map[string]map[int32]kgo.EpochOffset{tp.topic: {tp.partition: {Epoch: -1, Offset: next}}})
		}
		k.tr.polled(tp.topic, tp.partition, next)
		k.stalled(tp.partition, false)
	}
	if rejoin {
		k.log.Info("rejoining the group to move past an oversized batch", "topic", k.topic)
		k.cl.PurgeTopicsFromConsuming(k.topic)
		k.cl.AddConsumeTopics(k.topic)
	}
	if !found {
		// The probes failed, or the client is not where the member
		// believes it is: say where it looked.
		var at []string
		for _, tp := range owned {
			if pos, ok := positions[tp]; ok {
				at = append(at, fmt.Sprintf("%s/%d@%d<%d", tp.topic, tp.partition, pos, hwms[tp]))
			}
		}
		slices.Sort(at)
		k.log.Warn("oversized batch: none found at the owned partitions' positions (topic/partition@position<end)", "positions", at)
		k.stalled(-1, true)
	} else {
		k.stalled(-1, false)
		k.lastRescue = time.Now()
	}
	return ctx.Err()
}

// commitPast waits until tp's records fed before next are done (at most
// the drain timeout, at least a second) and commits tp past them. It
// reports whether tp must still be given up and taken again: not when it
// was revoked meanwhile (its revocation committed what was done, and its
// next owner starts there).
func (k *Kafka) commitPast(ctx context.Context, tp topicPartition, next int64) (retake bool, err error) {
	wait := max(k.drain, time.Second)
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for {
		done, committed, owned, changed := k.tr.progress(tp)
		switch {
		case !owned:
			return false, nil
		case committed >= next:
			return true, nil
		case done >= next:
			if err := k.commit(ctx, nil); err != nil {
				return false, err
			}
			if _, committed, owned, _ := k.tr.progress(tp); owned && committed < next {
				return false, fmt.Errorf("offset %d of %s/%d not committed", next, tp.topic, tp.partition)
			}
			continue
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return false, fmt.Errorf("records before offset %d of %s/%d not done within %v: %w", next, tp.topic, tp.partition, wait, ctx.Err())
		}
	}
}

// feedRejected feeds a record that was never read as a too_large
// rejection: its dead letter carries where it is and how big its batch
// was, nothing of its content.
func (k *Kafka) feedRejected(ctx context.Context, r *kgo.Record, size int64, out chan<- stream.Item) error {
	if err := k.inflight.acquire(ctx, 0); err != nil {
		return err
	}
	e := k.tr.add(r)
	if e == nil {
		k.inflight.release(0)
		return nil
	}
	rec := &Record{Record: r, k: k, e: e, Unread: size}
	k.m.InFlight(k.inflight.load())
	part, off := r.Partition, r.Offset
	it := stream.Item{Source: stream.Source{Topic: r.Topic, Partition: &part, Offset: &off}, Tag: rec,
		Err: &stream.InvalidError{Reason: stream.ReasonTooLarge,
			Detail: fmt.Sprintf("record batch of %d bytes > kafka.max_record_bytes %d: not read (key, headers and value are not kept)", size, k.maxRecord)}}
	select {
	case out <- it:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// positions returns the next offset to read of each owned partition (one
// past the last record polled; else the committed offset; else where a
// group without offsets starts) and the partitions' end offsets.
func (k *Kafka) positions(ctx context.Context, owned []topicPartition) (pos, hwm map[topicPartition]int64, err error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	adm := kadm.NewClient(k.cl)
	ends, err := adm.ListEndOffsets(ctx, k.topic)
	if err != nil {
		return nil, nil, err
	}
	if err := ends.Error(); err != nil {
		return nil, nil, err
	}
	pos, hwm = map[topicPartition]int64{}, map[topicPartition]int64{}
	var unknown []topicPartition
	for _, tp := range owned {
		if o, ok := ends.Lookup(tp.topic, tp.partition); ok {
			hwm[tp] = o.Offset
		}
		if p := k.tr.position(tp); p >= 0 {
			pos[tp] = p
		} else {
			unknown = append(unknown, tp)
		}
	}
	if len(unknown) == 0 {
		return pos, hwm, nil
	}
	committed, err := adm.FetchOffsets(ctx, k.group)
	if err != nil {
		return nil, nil, err
	}
	starts, err := adm.ListStartOffsets(ctx, k.topic)
	if err != nil {
		return nil, nil, err
	}
	for _, tp := range unknown {
		if c, ok := committed.Lookup(tp.topic, tp.partition); ok && c.Err == nil && c.At >= 0 {
			pos[tp] = c.At
			continue
		}
		if k.fromEnd {
			pos[tp] = hwm[tp]
		} else if s, ok := starts.Lookup(tp.topic, tp.partition); ok && s.Err == nil {
			pos[tp] = s.Offset
		}
	}
	return pos, hwm, nil
}

// stallExpiry is how long a partition stays stalled after the last failed
// attempt to move it on: attempts repeat with every failed fetch (about
// once a second), so a mark this old means the fetches succeed again.
const stallExpiry = 30 * time.Second

// stalled marks a partition (−1: one not yet identified) as unable to
// advance, or clears it, and updates the gauge.
func (k *Kafka) stalled(partition int32, stalled bool) {
	k.stallMu.Lock()
	if stalled {
		k.stall[partition] = time.Now()
	} else {
		delete(k.stall, partition)
	}
	k.stallMu.Unlock()
	k.m.Stalled(k.Stalled())
}

// Stalled returns the number of owned partitions that cannot advance: a
// record batch too large to read that could not be moved past (marked −1
// while the partition is not yet identified).
func (k *Kafka) Stalled() int {
	k.stallMu.Lock()
	defer k.stallMu.Unlock()
	n := 0
	for p, at := range k.stall {
		if time.Since(at) > stallExpiry {
			delete(k.stall, p)
			continue
		}
		n++
	}
	return n
}
