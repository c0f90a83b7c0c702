package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/errgroup"

	"github.com/neardup/neardup/bench/servebench"
	"github.com/neardup/neardup/index"
)

// The plain-command floor.
//
// What the index's bucket operations would cost redis-server if each were
// one plain command, no script: a redis-server of bytesbench's own holds
// as many keys as the index held at a checkpoint, each a hash of as many
// fields as the index's bucket hashes had on average then (4-byte fields,
// 6-byte values: a bucket of one member), and takes pipelined HGETs of
// existing fields and HSETNXs of new ones, half each, from floorClients
// connections, 64 commands a round trip. Its CPU per command (INFO cpu)
// times the bucket operations a document brought is the floor per
// document; the index's redis-server CPU per document over it is the
// ratio issue 40 asks to bring within 2×. The floor runs after the stream,
// checkpoint by checkpoint, the server filled up to each one's key count
// in turn, so that neither run disturbs the other's figures.

// floorClients and floorPipe are the connections and the commands per
// round trip of the floor's load.
const (
	floorClients = 4
	floorPipe    = 64
)

// keyShape is what the index held at a checkpoint: its keys (DBSIZE) and
// the mean fields of its bucket hashes (a sample).
type keyShape struct {
	keys   int64
	fields float64
}

// sampleShape reads the index's key count and samples HLEN of up to 1,000
// bucket hashes (RANDOMKEY, keys of prefix+"b"): a few ms of the index's
// server, which the caller leaves out of its window.
func sampleShape(ctx context.Context, rc *redis.Client, prefix string) (keyShape, error) {
	n, err := rc.DBSize(ctx).Result()
	if err != nil {
		return keyShape{}, err
	}
	pipe := rc.Pipeline()
	rk := make([]*redis.StringCmd, 3000)
	for i := range rk {
		rk[i] = pipe.RandomKey(ctx)
	}
	if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
		return keyShape{}, err
	}
	var bkeys []string
	for _, c := range rk {
		if k := c.Val(); strings.HasPrefix(k, prefix+"b") && len(bkeys) < 1000 {
			bkeys = append(bkeys, k)
		}
	}
	if len(bkeys) == 0 {
		return keyShape{keys: n, fields: 1}, nil
	}
	pipe = rc.Pipeline()
	hl := make([]*redis.IntCmd, len(bkeys))
	for i, k := range bkeys {
		hl[i] = pipe.HLen(ctx, k)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return keyShape{}, err
	}
	var sum int64
	for _, c := range hl {
		sum += c.Val()
	}
	return keyShape{keys: n, fields: float64(sum) / float64(len(bkeys))}, nil
}

// floorRig is the floor's redis-server and the keys it holds so far.
type floorRig struct {
	rc    *redis.Client
	stop  func()
	keys  int64 // keys 0…keys-1 are filled
	field func(key int64, j int) string
}

func newFloorRig(ctx context.Context) (*floorRig, error) {
	_, rc, stop, err := servebench.StartRedis(ctx)
	if err != nil {
		return nil, err
	}
	return &floorRig{rc: rc, stop: stop, field: floorField}, nil
}

// floorKey names key i as the index names a bucket group (a prefix, a
// table and group digits).
func floorKey(i int64) string { return "floor:v7:{0}b0:7:" + strconv.FormatInt(i, 2) }

// floorField is field j of key i: 4 bytes, as a bucket field.
func floorField(i int64, j int) string {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], uint32(i*2654435761)^uint32(j)*0x9e3779b9)
	return string(b[:])
}

// fill adds keys up to s.keys, each a hash of round(s.fields) fields.
func (f *floorRig) fill(ctx context.Context, s keyShape) error {
	nf := max(int(s.fields+0.5), 1)
	val := "\x00\x00\x00\x00\x00\x01"
	for f.keys < s.keys {
		pipe := f.rc.Pipeline()
		for i := 0; i < 1000 && f.keys < s.keys; i++ {
			args := make([]any, 0, 2*nf)
			for j := range nf {
				args = append(args, f.field(f.keys, j), val)
			}
			pipe.HSet(ctx, floorKey(f.keys), args...)
			f.keys++
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return err
		}
	}
	return nil
}

// floorCost is the floor measured at one key shape.
type floorCost struct {
	shape    keyShape
	perCmd   time.Duration // redis-server CPU per command, HGET and HSETNX mixed
	commands int64
}

// measure runs n pipelined plain commands over the keys filled (HGET of
// an existing field, HSETNX of a new one, alternately) and returns
// redis-server's CPU per command.
func (f *floorRig) measure(ctx context.Context, s keyShape, n int64) (floorCost, error) {
	if err := f.fill(ctx, s); err != nil {
		return floorCost{}, err
	}
	nf := max(int(s.fields+0.5), 1)
	cpu0, cmds0 := servebench.RedisCPU(f.rc)
	var left atomic.Int64
	left.Store(n)
	g, gctx := errgroup.WithContext(ctx)
	var seq atomic.Uint64
	for c := range floorClients {
		g.Go(func() error {
			r := rand.New(rand.NewPCG(uint64(c)+1, seq.Add(1)))
			for left.Add(-floorPipe) > -floorPipe {
				pipe := f.rc.Pipeline()
				for i := range floorPipe {
					k := r.Int64N(f.keys)
					if i%2 == 0 {
						pipe.HGet(gctx, floorKey(k), f.field(k, r.IntN(nf)))
					} else {
						pipe.HSetNX(gctx, floorKey(k), f.field(k, nf+r.IntN(1<<20)), "\x00\x00\x00\x00\x00\x02")
					}
				}
				if _, err := pipe.Exec(gctx); err != nil && err != redis.Nil {
					return err
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return floorCost{}, err
	}
	cpu1, cmds1 := servebench.RedisCPU(f.rc)
	cmds := cmds1 - cmds0 - 2 // the two INFO commands
	if cmds <= 0 {
		return floorCost{}, fmt.Errorf("floor: no command counted")
	}
	return floorCost{shape: s, perCmd: (cpu1 - cpu0) / time.Duration(cmds), commands: cmds}, nil
}

// opCounter counts the bucket operations of the documents the index
// stored: for each entry that was not a replay, an exact copy (which
// skips the buckets) or gone, its bands, its SimHash block tables and its
// distinct anchors, one bucket op each (index.Redis's ops, the floor's
// commands).
type opCounter struct {
	simTables int // SimHash block tables, k+1
	mu        sync.Mutex
	ops, docs uint64
	scratch   []uint64
}

func (c *opCounter) add(docs []index.Entry, res []index.Result) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range docs {
		c.docs++
		if i >= len(res) || res[i].Replay || res[i].Gone || res[i].Copy != "" {
			continue
		}
		e := &docs[i]
		c.scratch = append(c.scratch[:0], e.Anchors...)
		slices.Sort(c.scratch)
		n := len(e.Bands) + len(slices.Compact(c.scratch))
		if e.HasSimHash {
			n += c.simTables
		}
		c.ops += uint64(n)
	}
}

func (c *opCounter) read() (ops, docs uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ops, c.docs
}

// countedRedis and countedMemory count the bucket ops of what they store
// and are otherwise the store they wrap (Sourcer, Reviser, Remover and
// Stats included).
type countedRedis struct {
	*index.Redis
	c *opCounter
}

func (s countedRedis) LookupInsert(ctx context.Context, docs []index.Entry) ([]index.Result, error) {
	res, err := s.Redis.LookupInsert(ctx, docs)
	if err == nil {
		s.c.add(docs, res)
	}
	return res, err
}

type countedMemory struct {
	*index.Memory
	c *opCounter
}

func (s countedMemory) LookupInsert(ctx context.Context, docs []index.Entry) ([]index.Result, error) {
	res, err := s.Memory.LookupInsert(ctx, docs)
	if err == nil {
		s.c.add(docs, res)
	}
	return res, err
}

// counted wraps ix so that c counts its bucket ops (ix unchanged when it
// is neither kind).
func counted(ix index.Store, c *opCounter) index.Store {
	switch s := ix.(type) {
	case *index.Redis:
		return countedRedis{s, c}
	case *index.Memory:
		return countedMemory{s, c}
	}
	return ix
}

// cmdStats reads INFO commandstats: calls and usec per command.
func cmdStats(ctx context.Context, rc *redis.Client) (map[string][2]float64, error) {
	info, err := rc.Info(ctx, "commandstats").Result()
	if err != nil {
		return nil, err
	}
	out := map[string][2]float64{}
	for _, line := range strings.Split(info, "\n") {
		name, rest, _ := strings.Cut(strings.TrimSpace(line), ":")
		name, ok := strings.CutPrefix(name, "cmdstat_")
		if !ok {
			continue
		}
		var cs [2]float64
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			f, _ := strconv.ParseFloat(v, 64)
			switch k {
			case "calls":
				cs[0] = f
			case "usec":
				cs[1] = f
			}
		}
		out[name] = cs
	}
	return out, nil
}

// inside is what the index's server did in a window, from two
// commandstats readings: commands per document by command, and the time
// the script calls took against the time of the commands they ran (the
// rest is the Lua around them: the prelude, argument handling, packing).
type inside struct {
	perDoc       []cmdPerDoc // most calls first
	commands     float64     // all commands per document, script calls included
	scriptCalls  float64     // per document
	scriptUS     float64     // µs per document in EVALSHA/EVAL (commandstats, wall time on the server)
	nestedUS     float64     // µs per document in the commands scripts ran
	outsideCalls float64     // HMGETs per document (the client's record reads, mostly)
}

type cmdPerDoc struct {
	name       string
	calls, usc float64 // per document; usec per call
}

// insideOf splits the commands of a window: script calls, the commands
// the scripts ran (nested) and the client's own record reads (HMGET;
// scripts also run HMGET, once per call for the clock and once per
// document for the content lane, which are counted with the client's,
// so the nested time is a little short and the Lua's a little long).
func insideOf(before, after map[string][2]float64, docs float64) inside {
	var in inside
	for name, a := range after {
		b := before[name]
		calls, usec := a[0]-b[0], a[1]-b[1]
		if calls <= 0 {
			continue
		}
		switch name {
		case "info", "slowlog|get", "slowlog|reset", "config|resetstat", "dbsize", "randomkey", "hlen", "memory|usage", "scan", "ping", "hello", "client|setinfo", "script|load":
			continue // the benchmark's own
		}
		in.commands += calls / docs
		in.perDoc = append(in.perDoc, cmdPerDoc{name, calls / docs, usec / calls})
		switch name {
		case "evalsha", "eval", "evalsha_ro", "eval_ro", "fcall", "fcall_ro":
			in.scriptCalls += calls / docs
			in.scriptUS += usec / docs
		case "hmget":
			in.outsideCalls += calls / docs
		default:
			in.nestedUS += usec / docs
		}
	}
	slices.SortFunc(in.perDoc, func(x, y cmdPerDoc) int {
		if x.calls != y.calls {
			if x.calls > y.calls {
				return -1
			}
			return 1
		}
		return strings.Compare(x.name, y.name)
	})
	return in
}
