package index

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/index/redistest"
)

// TestGroupBits pins the layout rule: the fewest group bits (at least
// minGroupBits, at most maxGroupBits) whose band-table groups hold at most
// 64 buckets at the generation's documents.
func TestGroupBits(t *testing.T) {
	for _, tt := range []struct {
		docs float64
		want uint
	}{
		{0, minGroupBits},
		{512, 4},
		{513, 5},
		{3000, 7},
		{100_000, 12},
		{131_072, 12},
		{131_073, 13},
		{1 << 20, 15},
		{1 << 40, maxGroupBits},
	} {
		if got := groupBits(tt.docs); got != tt.want {
			t.Errorf("groupBits(%v) = %d, want %d", tt.docs, got, tt.want)
		}
	}
}

// layoutDoc is a document with its own bands, anchors, I-Match and
// content digests.
func layoutDoc(id string) Entry {
	e := withAnchors(entry(testParams, id, nil), anchors(id, 8)...)
	binary.BigEndian.PutUint64(e.Content[:], key(id, 99))
	binary.BigEndian.PutUint64(e.Content[8:], key(id, 98))
	binary.BigEndian.PutUint64(e.IMatch[:], key(id, 97))
	binary.BigEndian.PutUint64(e.IMatch[8:], key(id, 96))
	binary.BigEndian.PutUint32(e.IMatch[16:], uint32(key(id, 95)))
	e.HasContent, e.HasIMatch = true, true
	e.Features = []byte(id)
	return e
}

// storeKeys returns the names of every key of r's namespace (SCAN, on
// every master in cluster mode).
func storeKeys(t *testing.T, r *Redis) []string {
	t.Helper()
	ctx := context.Background()
	var mu sync.Mutex
	var keys []string
	scan := func(ctx context.Context, c *redis.Client) error {
		it := c.Scan(ctx, 0, r.ns+":*", 1000).Iterator()
		for it.Next(ctx) {
			mu.Lock()
			keys = append(keys, it.Val())
			mu.Unlock()
		}
		return it.Err()
	}
	var err error
	if cc, ok := r.c.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, scan)
	} else {
		err = scan(ctx, r.c.(*redis.Client))
	}
	if err != nil {
		t.Fatalf("scan: %v", err)
	}
	return keys
}

// layouts returns each shard's generation layouts (clock field y): the
// id and lane groups' bits of each generation.
func layouts(t *testing.T, r *Redis) []map[int64]int {
	t.Helper()
	out := make([]map[int64]int, r.shards)
	for s, m := range genLayouts(t, r) {
		out[s] = map[int64]int{}
		for h, l := range m {
			out[s][h] = l.bits
		}
	}
	return out
}

// genLayout is a generation's layout in one shard: the bits of its id
// and lane groups, and the level and splits of its bucket groups.
type genLayout struct{ bits, level, splits int }

// genLayouts returns each shard's generation layouts (clock field y,
// "h:bits:level:splits,…").
func genLayouts(t *testing.T, r *Redis) []map[int64]genLayout {
	t.Helper()
	out := make([]map[int64]genLayout, r.shards)
	for s := range r.shards {
		y, err := r.c.HGet(context.Background(), r.clock[s], "y").Result()
		if err != nil {
			t.Fatalf("shard %d: layouts: %v", s, err)
		}
		out[s] = map[int64]genLayout{}
		for part := range strings.SplitSeq(y, ",") {
			f := strings.Split(part, ":")
			v := make([]int64, len(f))
			for i, x := range f {
				n, err := strconv.ParseInt(x, 10, 64)
				if err != nil {
					t.Fatalf("shard %d: layouts %q", s, y)
				}
				v[i] = n
			}
			if len(v) != 4 {
				t.Fatalf("shard %d: layouts %q, want h:bits:level:splits", s, y)
			}
			out[s][v[0]] = genLayout{int(v[1]), int(v[2]), int(v[3])}
		}
	}
	return out
}

// laneName is the name of the id or lane group of 32-bit value x in
// shard s of a generation of layout l (gkey in lua/prelude.lua): the
// decimal digits of 2^c plus x's top c bits, c the level or one more.
func (r *Redis) laneName(s int, l genLayout, x uint32) string {
	lo, _ := r.groupRange(s)
	c := l.level
	if uint64(x)>>(32-c) < lo>>(maxGroupBits-c)+uint64(l.splits) {
		c++
	}
	return strconv.FormatUint(1<<c+uint64(x)>>(32-c), 10)
}

// groupDigits is the digits of the bucket group that full-precision group
// g (its top maxGroupBits bits, bucketOp) is in, in shard s of a
// generation of layout l: the group's top l.level bits, or one more when
// those name one of the shard's first l.splits groups at that level
// (gdig in lua/prelude.lua).
func (r *Redis) groupDigits(s int, l genLayout, g uint64) string {
	lo, _ := r.groupRange(s)
	c := l.level
	if g>>(maxGroupBits-c) < lo>>(maxGroupBits-c)+uint64(l.splits) {
		c++
	}
	return fmt.Sprintf("%0*b", c, g>>(maxGroupBits-c))
}

// keyKind splits a key of r's namespace into its shard's prefix index,
// its kind and generation, and the rest ("<table>:<group>" for a bucket
// group, "<group>" for ids and lanes); ok is false for other kinds.
func keyKind(r *Redis, k string) (kind byte, gen int64, rest string, ok bool) {
	i := strings.IndexByte(k, '}')
	if i < 0 || i+2 > len(k) {
		return 0, 0, "", false
	}
	kind, tail := k[i+1], k[i+2:]
	if !strings.ContainsRune("bixe", rune(kind)) {
		return kind, 0, "", false
	}
	g, rest, ok := strings.Cut(tail, ":")
	gen, err := strconv.ParseInt(g, 10, 64)
	return kind, gen, rest, ok && err == nil
}

// TestGenerationLayouts drives the clock across generations with very
// different document counts, on a single node and on a cluster, and
// checks that each generation of each shard starts at the level the band
// entries of the shard's previous generation ask for (the first one at
// minGroupBits) and grows as its own do, that every bucket group key is
// named by that layout, that
// planted duplicates and passages are found across live generations of
// different layouts, and that removing every document leaves no key but
// the clocks.
func TestGenerationLayouts(t *testing.T) { onNodeAndCluster(t, testGenerationLayouts) }

// onNodeAndCluster runs test on a real redis-server and on a real 3-master
// cluster, each started for it. The two runs share nothing and mostly
// wait on their servers' scripts: they run in parallel.
func onNodeAndCluster(t *testing.T, test func(t *testing.T, addrs []string, cluster bool)) {
	for _, cluster := range []bool{false, true} {
		name := map[bool]string{false: "redis", true: "cluster"}[cluster]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var addrs []string
			if cluster {
				addrs = redistest.StartCluster(t)
			} else {
				addrs = []string{redistest.StartServer(t)}
			}
			test(t, addrs, cluster)
		})
	}
}

func testGenerationLayouts(t *testing.T, addrs []string, cluster bool) {
	ctx := context.Background()
	const L = time.Minute
	clk := newFakeClock() // on a whole minute: a generation's start
	r := openRedis(t, RedisConfig{Addrs: addrs, Cluster: cluster, Namespace: "lays", Capacity: 1 << 10,
		Retention: 3 * L, Generation: L, Clock: clk.Now, MaxClockAhead: -1})
	g0 := clk.Now().Unix() / int64(L/time.Second)
	// Documents per generation, each far from a boundary of the rule in
	// every shard: 3000 → 7 bits, 200 → 4, 6000 → 8, 1500 → 6. The
	// generations' starting levels on a single node: the first
	// minGroupBits, each later one from the previous generation's count.
	sizes, wantBits := []int{3000, 200, 6000, 1500}, []int{4, 7, 4, 8}
	if testing.Short() {
		// The race run (-short, make race): fewer than half the documents
		// (the removal of every document is most of the time), the same
		// layout changes up, down and up again. make unit runs the sizes
		// above.
		sizes, wantBits = []int{1500, 200, 3000, 200}, []int{4, 6, 4, 7}
	}
	var gens [][]Entry // the documents stored in each generation
	var all []string
	entries := make([][]float64, len(sizes)) // band entries per shard
	for gi, n := range sizes {
		if gi > 0 {
			clk.Advance(L)
		}
		docs := make([]Entry, 0, n+8)
		for i := range n {
			docs = append(docs, layoutDoc(fmt.Sprintf("g%d-%d", gi, i)))
		}
		// Planted duplicates of documents of every earlier generation:
		// the same bands, another text.
		var planted []string
		for gj := range gi {
			for k := range 4 {
				orig := gens[gj][gi*10+k]
				d := layoutDoc(fmt.Sprintf("dup%d-%s", gi, orig.ID))
				d.Bands = slices.Clone(orig.Bands)
				docs = append(docs, d)
				planted = append(planted, orig.ID)
			}
		}
		var res []Result
		for lo := 0; lo < len(docs); lo += 500 {
			res = append(res, insert(t, r, docs[lo:min(lo+500, len(docs))]...)...)
		}
		for i, orig := range planted {
			x := res[n+i]
			if !slices.ContainsFunc(x.Candidates, func(c Candidate) bool { return c.ID == orig }) {
				t.Errorf("generation %d: %s did not find %s: %v", gi, docs[n+i].ID, orig, ids(x.Candidates))
			}
		}
		entries[gi] = make([]float64, r.shards)
		for _, e := range docs {
			for _, k := range e.Bands {
				entries[gi][r.shardOfRoute(k>>(64-routeBits))]++
			}
		}
		gens = append(gens, docs)
		for _, e := range docs {
			all = append(all, e.ID)
		}
	}

	// Starting levels: the first generation's minGroupBits, each later
	// one's from the shard's band entries in the previous generation.
	lay := layouts(t, r)
	for s := range r.shards {
		for gi := range sizes {
			want := minGroupBits
			if gi > 0 {
				want = int(groupBits(entries[gi-1][s] * float64(r.shards) / float64(testParams.Bands)))
			}
			if got, ok := lay[s][g0+int64(gi)]; !ok || got != want {
				t.Errorf("shard %d generation %d: %d group bits (%v), want %d", s, gi, got, ok, want)
			}
		}
	}
	if !cluster {
		if got := []int{lay[0][g0], lay[0][g0+1], lay[0][g0+2], lay[0][g0+3]}; !slices.Equal(got, wantBits) {
			t.Errorf("group bits of the generations %v, want %v", got, wantBits)
		}
	}
	// Every bucket group key is named by its generation's layout, whose
	// groups have split as far as its band entries ask (splitLoad), but
	// for less than one group: the shard's last call splits once more
	// only when it is a whole group behind.
	glay := genLayouts(t, r)
	for s := range r.shards {
		for gi := range sizes {
			l := glay[s][g0+int64(gi)]
			lo, hi := r.groupRange(s)
			m := (hi-1)>>(maxGroupBits-l.level) + 1 - lo>>(maxGroupBits-l.level)
			if l.level < maxGroupBits && entries[gi][s]/float64(testParams.Bands) > float64(splitLoad)*float64(int(m)+l.splits+1) {
				t.Errorf("shard %d generation %d: %v band entries in %d+%d groups of level %d, more than %d each", s, gi, entries[gi][s], m, l.splits, l.level, splitLoad)
			}
		}
	}
	shardOf := map[string]int{}
	for s, p := range r.prefix {
		shardOf[p] = s
	}
	for _, k := range storeKeys(t, r) {
		kind, gen, rest, ok := keyKind(r, k)
		if !ok || kind != 'b' {
			continue
		}
		s := shardOf[k[:strings.IndexByte(k, '}')+1]]
		tb, g, _ := strings.Cut(rest, ":")
		if tb == strconv.Itoa(testParams.passageTable()) {
			if !strings.Contains(splitAlphabet, g[:1]) {
				t.Errorf("%s: passage group %q does not start with one of 64 characters", k, g)
			}
			g = g[1:]
		}
		v, err := strconv.ParseUint(g, 2, 64)
		if want := r.groupDigits(s, glay[s][gen], v<<(maxGroupBits-len(g))); err != nil || g != want {
			t.Errorf("%s: group %q, want %q (layout %+v)", k, g, want, glay[s][gen])
		}
	}
	// Lookups across the four live generations: a copy of a document of
	// each (its bands) and a page quoting it (its anchors only).
	var probes []Entry
	var want []string
	for gi := range gens {
		orig := gens[gi][7]
		c := layoutDoc("copy-" + orig.ID)
		c.Bands = slices.Clone(orig.Bands)
		q := layoutDoc("quote-" + orig.ID)
		q.Anchors = slices.Clone(orig.Anchors)
		probes = append(probes, c, q)
		want = append(want, orig.ID+"/"+ViaLSH, orig.ID+"/"+ViaPassage)
	}
	res, err := r.Lookup(ctx, probes)
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range res {
		if !slices.Contains(ids(x.Candidates), want[i]) {
			t.Errorf("lookup %s: candidates %v, want %s", probes[i].ID, ids(x.Candidates), want[i])
		}
	}

	// Removing every document leaves only the clocks.
	for lo := 0; lo < len(all); lo += 1000 {
		removed, err := r.Remove(ctx, all[lo:min(lo+1000, len(all))])
		if err != nil {
			t.Fatal(err)
		}
		for i, ok := range removed {
			if !ok {
				t.Errorf("%s not removed", all[lo+i])
			}
		}
	}
	var left []string
	for _, k := range storeKeys(t, r) {
		if !strings.HasSuffix(k, "}c") {
			left = append(left, k)
		}
	}
	if len(left) > 0 {
		t.Errorf("%d keys left after removing every document, e.g. %v", len(left), left[:min(5, len(left))])
	}
}

// TestGenerationLayoutSweep checks that the expiry sweep of a closed
// generation covers every key it holds, whatever its group bits: two
// generations of different layouts close, and every one of their bucket,
// id and lane keys gets EXPIREAT (gen+1)·L + R, while the current
// generation's keys get none.
func TestGenerationLayoutSweep(t *testing.T) {
	onNodeAndCluster(t, func(t *testing.T, addrs []string, cluster bool) {
		const L, R = time.Minute, 2 * time.Minute
		clk := newFakeClock()
		r := openRedis(t, RedisConfig{Addrs: addrs, Cluster: cluster, Namespace: "sweep", Capacity: 1 << 10,
			Retention: R, Generation: L, Clock: clk.Now, MaxClockAhead: -1})
		g0 := clk.Now().Unix() / int64(L/time.Second)
		for gi, n := range []int{1500, 6000, 300} {
			if gi > 0 {
				clk.Advance(L)
			}
			docs := make([]Entry, n)
			for i := range docs {
				docs[i] = layoutDoc(fmt.Sprintf("s%d-%d", gi, i))
			}
			for lo := 0; lo < n; lo += 500 {
				insert(t, r, docs[lo:min(lo+500, n)]...)
			}
		}
		if err := r.Maintain(context.Background()); err != nil {
			t.Fatal(err)
		}
		lay := layouts(t, r)
		if lay[0][g0] == lay[0][g0+1] {
			t.Fatalf("the two closed generations have the same layout %d", lay[0][g0])
		}
		ctx := context.Background()
		counts := map[int64]int{}
		for _, k := range storeKeys(t, r) {
			kind, gen, _, ok := keyKind(r, k)
			if !ok {
				continue
			}
			counts[gen]++
			exp, err := r.c.ExpireTime(ctx, k).Result()
			if err != nil {
				t.Fatal(err)
			}
			want := time.Duration(-1)
			if gen < g0+2 {
				want = time.Duration((gen+1)*int64(L/time.Second)+int64(R/time.Second)) * time.Second
			}
			if exp != want {
				t.Errorf("%s (kind %c, generation %d): expires at %v, want %v", k, kind, gen-g0, exp, want)
			}
		}
		for gi := range int64(3) {
			if counts[g0+gi] == 0 {
				t.Errorf("generation %d: no keys", gi)
			}
		}
	})
}

// TestSupersedePrevious checks that opening a namespace marks the clock
// of its previous layout version (SchemaVersion − 1), where one exists, so that members
// of older builds (which compare field f with their fingerprint on every
// call) stop with a parameters mismatch, and keeps the old fingerprint in
// field f<SchemaVersion − 1>; a namespace without one gets none.
func TestSupersedePrevious(t *testing.T) {
	addr := redistest.StartServer(t)
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	ctx := context.Background()
	prev := strconv.Itoa(SchemaVersion - 1)
	oldFP := "fnv1a64 k=12 layout=v" + prev + " gen=0 shards=1"
	if err := c.HSet(ctx, "up:v"+prev+":{0}c", "f", oldFP, "g", 7).Err(); err != nil {
		t.Fatal(err)
	}
	for range 2 { // a second member leaves it as the first did
		openRedis(t, RedisConfig{Addrs: []string{addr}, Namespace: "up"})
		got, err := c.HMGet(ctx, "up:v"+prev+":{0}c", "f", "f"+prev, "g").Result()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, []any{supersededPrev, oldFP, "7"}) {
			t.Errorf("v%s clock after open: %q, want the mark, the old fingerprint and the rest kept", prev, got)
		}
	}
	openRedis(t, RedisConfig{Addrs: []string{addr}, Namespace: "new"})
	if n := c.Exists(ctx, "new:v"+prev+":{0}c").Val(); n != 0 {
		t.Errorf("a v%s clock was created for a namespace that had none", prev)
	}
}

// TestAppendGroupFieldDigits checks the table-driven digit writer against
// writing each of the 22 digits in turn, in a band and the passage table.
func TestAppendGroupFieldDigits(t *testing.T) {
	r := &Redis{p: webParams}
	for _, tc := range []struct {
		t int
		g uint64
	}{
		{0, 0}, {0, 1<<maxGroupBits - 1}, {0, 0x2aaaaa}, {1, 0x155555}, {0, 0x3c0f01},
		{r.p.passageTable(), 0}, {r.p.passageTable(), 63<<maxGroupBits | 0x12345}, {r.p.passageTable(), 5<<maxGroupBits | 1<<maxGroupBits - 1},
	} {
		var want []byte
		if tc.t == r.p.passageTable() {
			want = append(want, splitAlphabet[tc.g>>maxGroupBits])
		}
		for i := maxGroupBits - 1; i >= 0; i-- {
			want = append(want, '0'+byte(tc.g>>i&1))
		}
		want = append(want, 0xbe, 0xef, 0xde, 0xad, 0xbe, 0xef)
		if got := r.appendGroupField(nil, tc.t, tc.g, 0xbeefdeadbeef); string(got) != string(want) {
			t.Errorf("table %d group %#x: %q, want %q", tc.t, tc.g, got, want)
		}
	}
}
