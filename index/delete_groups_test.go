package index

import (
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/index/redistest"
)

// groupHashes returns every bucket group hash of r's namespace (kind 'b'),
// by key name: field → value, read with HGETALL on every master.
func groupHashes(t *testing.T, r *Redis) map[string]map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]map[string]string{}
	for _, k := range storeKeys(t, r) {
		if kind, _, _, ok := keyKind(r, k); !ok || kind != 'b' {
			continue
		}
		h, err := r.c.HGetAll(ctx, k).Result()
		if err != nil {
			t.Fatalf("HGETALL %s: %v", k, err)
		}
		out[k] = h
	}
	return out
}

// memberEdits counts what removing a document does to the group hashes.
type memberEdits struct {
	kept      int // member lists that lose seq and keep other members
	emptied   int // member lists of seq alone (their field goes)
	exemplars int // common marks whose exemplar is seq (it becomes NOEX)
	simhash   int // SimHash entries (14 bytes) of seq
	shared    int // passage groups in which seq is a member of two fields or more
}

// withoutSeq is what the group hashes of r should hold once the document
// of seq is removed, computed from before with no help from the store:
// in every field of a band or passage table the 6-byte entries equal to
// seq go (a field left empty goes, a hash left empty goes), a common mark
// ('C', exemplar, count: 8 bytes) whose exemplar is seq gets exemplar 0;
// in a SimHash table the 14-byte entries whose seq is seq go. The guard's
// o-fields stay.
func withoutSeq(t *testing.T, r *Redis, before map[string]map[string]string, seq uint64) (map[string]map[string]string, memberEdits) {
	t.Helper()
	var me [8]byte
	binary.BigEndian.PutUint64(me[:], seq)
	m := string(me[2:])
	var ed memberEdits
	out := map[string]map[string]string{}
	for k, h := range before {
		_, _, rest, _ := keyKind(r, k)
		tb, _, _ := strings.Cut(rest, ":")
		table, err := strconv.Atoi(tb)
		if err != nil {
			t.Fatalf("%s: table %q", k, tb)
		}
		w := 6
		if table >= r.p.Bands && table < r.p.passageTable() {
			w = 14
		}
		nh := map[string]string{}
		fields := 0
		for f, v := range h {
			if len(f) != fieldBytes { // an o-field
				nh[f] = v
				continue
			}
			if w == 6 && len(v)%6 == 2 {
				if v[1:7] == m {
					v = v[:1] + strings.Repeat("\x00", 6) + v[7:]
					ed.exemplars++
				}
				nh[f] = v
				continue
			}
			var keep strings.Builder
			dropped := false
			for q := 0; q+w <= len(v); q += w {
				if v[q:q+6] == m {
					dropped = true
					continue
				}
				keep.WriteString(v[q : q+w])
			}
			if dropped {
				fields++
				switch {
				case w == 14:
					ed.simhash++
				case keep.Len() > 0:
					ed.kept++
				default:
					ed.emptied++
				}
			}
			if keep.Len() > 0 {
				nh[f] = keep.String()
			}
		}
		if w == 6 && table == r.p.passageTable() && fields >= 2 {
			ed.shared++
		}
		if len(nh) > 0 {
			out[k] = nh
		}
	}
	return out, ed
}

// diffHashes reports how got differs from want, at most a few lines.
func diffHashes(got, want map[string]map[string]string) []string {
	var d []string
	for k, w := range want {
		if g, ok := got[k]; !ok {
			d = append(d, fmt.Sprintf("%s: gone, want %d fields", k, len(w)))
		} else if !maps.Equal(g, w) {
			d = append(d, fmt.Sprintf("%s: %q, want %q", k, g, w))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			d = append(d, fmt.Sprintf("%s: left, want gone", k))
		}
	}
	return d[:min(len(d), 5)]
}

// removeChecked removes the document id (seq seq) from r, reading groups
// with HSCAN COUNT scanMax in calls of at most workMax work (remove), and
// checks that the group hashes lose exactly its members (withoutSeq); it
// returns what the removal did.
func removeChecked(t *testing.T, r *Redis, id string, seq uint64, scanMax, workMax int) memberEdits {
	t.Helper()
	before := groupHashes(t, r)
	want, ed := withoutSeq(t, r, before, seq)
	removed, err := r.remove(context.Background(), []string{id}, scanMax, workMax)
	if err != nil {
		t.Fatal(err)
	}
	if !removed[0] {
		t.Errorf("remove(%s) = false, want true", id)
	}
	if d := diffHashes(groupHashes(t, r), want); len(d) > 0 {
		t.Errorf("after removing %s (seq %d, scanMax %d, workMax %d), group hashes differ from its members removed:\n%s", id, seq, scanMax, workMax, strings.Join(d, "\n"))
	}
	return ed
}

// sharedDoc is a document of the shared-groups test: its own bands
// except those in shared, its own SimHash and anchors, unless given.
func sharedDoc(id string, shared map[int]uint64, simhash uint64, a []uint64) Entry {
	e := layoutDoc(id)
	for i, k := range shared {
		e.Bands[i] = k
	}
	e.SimHash, e.HasSimHash = simhash, true
	if simhash == 0 {
		e.SimHash = key(id, 50)
	}
	if a != nil {
		e.Anchors = a
	}
	return e
}

// TestRemoveSharedGroups stores, with few group bits (so that every
// group hash holds many documents' members), documents that share
// groups, bucket keys, common keys and SimHash blocks with the ones it
// removes, and checks that a remove takes exactly the removed document's
// members (computed from the hashes before it, withoutSeq): every other
// document's members and common marks stay, a common key whose exemplar
// it was keeps its mark with no exemplar, several anchors of the document
// in one passage group all go, and SimHash members go. Each remove is
// done with group hashes read whole and, for another document, walked in
// HSCAN chunks (scanMax 1) by calls that stop after a few groups
// (workMax 10) and go on in later calls.
func TestRemoveSharedGroups(t *testing.T) {
	onNodeAndCluster(t, func(t *testing.T, addrs []string, cluster bool) {
		var whole int64 // script calls of the removal with groups read whole
		for _, scanMax := range []int{unlinkScanMax, 1} {
			t.Run(fmt.Sprintf("scanMax=%d", scanMax), func(t *testing.T) {
				if scanMax == 1 {
					// Every hash a hashtable, so that HSCAN returns a
					// group in many steps (a listpack comes back whole).
					setListpackEntries(t, addrs, cluster, "0")
					defer setListpackEntries(t, addrs, cluster, "128")
				}
				r := openRedis(t, RedisConfig{Addrs: addrs, Cluster: cluster, Namespace: fmt.Sprintf("rsg%d", scanMax), Capacity: 1 << 10, CommonDocs: 4})
				x := fmt.Sprintf("x%d", scanMax)
				// 200 anchors in 2^10 passage groups: several share a group.
				xa := anchors(x, 200)
				common, listed, owned := key(x, 70), key(x, 71), key(x, 72)
				var docs []Entry
				// A common key whose exemplar is another document: x only
				// finds it.
				for i := range 5 {
					docs = append(docs, sharedDoc(fmt.Sprintf("%s-c%d", x, i), map[int]uint64{2: owned}, 0, nil))
				}
				docs = append(docs, sharedDoc(x, map[int]uint64{0: common, 1: listed, 2: owned}, key(x, 60), xa))
				// A common key whose exemplar is x; a bucket of x and two
				// others; a SimHash twin; documents quoting some of x's
				// anchors; and unrelated documents filling the groups.
				for i := range 5 {
					docs = append(docs, sharedDoc(fmt.Sprintf("%s-e%d", x, i), map[int]uint64{0: common}, 0, nil))
				}
				for i := range 2 {
					docs = append(docs, sharedDoc(fmt.Sprintf("%s-l%d", x, i), map[int]uint64{1: listed}, 0, nil))
				}
				docs = append(docs, sharedDoc(x+"-twin", nil, key(x, 60), nil))
				for i := range 3 {
					docs = append(docs, sharedDoc(fmt.Sprintf("%s-q%d", x, i), nil, 0, append(anchors(fmt.Sprintf("%s-q%d", x, i), 4), xa[10*i:10*i+5]...)))
				}
				for i := range 400 {
					docs = append(docs, sharedDoc(fmt.Sprintf("%s-u%d", x, i), nil, 0, nil))
				}
				res := insert(t, r, docs...)
				seq := res[5].Seq
				if docs[5].ID != x {
					t.Fatalf("document 5 is %s", docs[5].ID)
				}
				calls0 := scriptCalls(t, r)
				workMax := unlinkWork
				if scanMax == 1 {
					workMax = 10
				}
				ed := removeChecked(t, r, x, seq, scanMax, workMax)
				calls := scriptCalls(t, r) - calls0
				t.Logf("removing %s: %+v, %d script calls", x, ed, calls)
				// With scanMax 1 the groups are walked in chunks, and
				// calls stop after a few groups: more calls than the same
				// removal of a document of the same shape otherwise.
				if scanMax == unlinkScanMax {
					whole = calls
				} else if calls <= whole+1 {
					t.Errorf("removing %s with scanMax 1: %d script calls, with groups read whole %d; want the groups walked in chunks", x, calls, whole)
				}
				if ed.kept == 0 || ed.emptied == 0 || ed.exemplars == 0 || ed.simhash == 0 || ed.shared == 0 {
					t.Errorf("removing %s: %+v; want member lists kept and emptied, an exemplar, SimHash members and a passage group with several of its anchors", x, ed)
				}
				// An ordinary document too, and one sharing x's anchors.
				for _, i := range []int{7, 14} {
					removeChecked(t, r, docs[i].ID, res[i].Seq, scanMax, workMax)
				}
			})
		}
	})
}

// setListpackEntries sets hash-max-listpack-entries on the server or on
// every node of the cluster.
func setListpackEntries(t *testing.T, addrs []string, cluster bool, v string) {
	t.Helper()
	for _, a := range addrs {
		c := redis.NewClient(&redis.Options{Addr: a})
		err := c.ConfigSet(context.Background(), "hash-max-listpack-entries", v).Err()
		c.Close()
		if err != nil {
			t.Fatalf("%s: CONFIG SET hash-max-listpack-entries %s: %v", a, v, err)
		}
		if !cluster {
			return
		}
	}
}

// scriptCalls is the EVALSHA and EVAL calls the servers of r have run.
func scriptCalls(t *testing.T, r *Redis) int64 {
	t.Helper()
	ctx := context.Background()
	var mu sync.Mutex
	var n int64
	count := func(ctx context.Context, c *redis.Client) error {
		s, err := c.Info(ctx, "commandstats").Result()
		if err != nil {
			return err
		}
		for line := range strings.SplitSeq(s, "\n") {
			if !strings.HasPrefix(line, "cmdstat_evalsha:") && !strings.HasPrefix(line, "cmdstat_eval:") {
				continue
			}
			_, rest, _ := strings.Cut(line, "calls=")
			v, _, _ := strings.Cut(rest, ",")
			x, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return fmt.Errorf("commandstats %q: %w", line, err)
			}
			mu.Lock()
			n += x
			mu.Unlock()
		}
		return nil
	}
	var err error
	if cc, ok := r.c.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, count)
	} else {
		err = count(ctx, r.c.(*redis.Client))
	}
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRemoveAcrossGenerations removes a document that lives in two live
// generations of different group bits (stored in the first, carried into
// the second by RefreshOnMatch when a copy found it), on a single node and
// on a cluster: its members go from both, and nothing else does.
func TestRemoveAcrossGenerations(t *testing.T) {
	onNodeAndCluster(t, func(t *testing.T, addrs []string, cluster bool) {
		const L = time.Minute
		clk := newFakeClock()
		r := openRedis(t, RedisConfig{Addrs: addrs, Cluster: cluster, Namespace: "rag", Capacity: 1 << 10,
			Retention: 3 * L, Generation: L, Clock: clk.Now, MaxClockAhead: -1, RefreshOnMatch: true})
		// 3000 documents in the first generation (4 group bits, from
		// Capacity): the second gets 6 bits (TestGenerationLayouts). In
		// the race run (-short) 1500: the second gets 5.
		n := 3000
		if testing.Short() {
			n = 1500
		}
		var docs []Entry
		for i := range n {
			docs = append(docs, sharedDoc(fmt.Sprintf("g0-%d", i), nil, 0, anchors(fmt.Sprintf("g0-%d", i), 20)))
		}
		var res []Result
		for lo := 0; lo < len(docs); lo += 500 {
			res = append(res, insert(t, r, docs[lo:min(lo+500, len(docs))]...)...)
		}
		clk.Advance(L)
		x := docs[17]
		cp := sharedDoc("copy", nil, x.SimHash, x.Anchors)
		cp.Bands = x.Bands
		var later []Entry
		for i := range 300 {
			later = append(later, sharedDoc(fmt.Sprintf("g1-%d", i), nil, 0, nil))
		}
		got := insert(t, r, append([]Entry{cp}, later...)...)
		if !strings.Contains(fmt.Sprint(ids(got[0].Candidates)), x.ID) {
			t.Fatalf("the copy did not find %s: %v", x.ID, ids(got[0].Candidates))
		}
		lay := layouts(t, r)
		g0 := clk.Now().Unix()/int64(L/time.Second) - 1
		if lay[0][g0] == lay[0][g0+1] {
			t.Fatalf("generations of %d and %d group bits, want different", lay[0][g0], lay[0][g0+1])
		}
		// x is a member in both generations.
		var me [8]byte
		binary.BigEndian.PutUint64(me[:], res[17].Seq)
		in := map[int64]int{}
		for k, h := range groupHashes(t, r) {
			_, gen, _, _ := keyKind(r, k)
			for _, v := range h {
				for q := 0; q+6 <= len(v); q += 6 {
					if v[q:q+6] == string(me[2:]) {
						in[gen]++
					}
				}
			}
		}
		if in[g0] == 0 || in[g0+1] == 0 {
			t.Fatalf("%s's members per generation: %v, want some in %d and %d", x.ID, in, g0, g0+1)
		}
		removeChecked(t, r, x.ID, res[17].Seq, unlinkScanMax, unlinkWork)
		removeChecked(t, r, docs[18].ID, res[18].Seq, 1, 10)
	})
}

// TestRemoveVersion3Records rewrites every keys record as builds before
// version 4 wrote it (version 3: ops with fields) and checks that Remove
// still takes every key of every document: the store's footprint is back
// to what it was before they were inserted. A document whose record is of
// version 3 and one of version 4 are also removed in one call.
func TestRemoveVersion3Records(t *testing.T) {
	onNodeAndCluster(t, func(t *testing.T, addrs []string, cluster bool) {
		ctx := context.Background()
		r := openRedis(t, RedisConfig{Addrs: addrs, Cluster: cluster, Namespace: "rv3", Capacity: 1 << 10, CommonDocs: 4})
		// The documents that make a key common stay: a remove leaves a
		// common key's mark.
		var base []Entry
		for i := range 5 {
			base = append(base, sharedDoc(fmt.Sprintf("base%d", i), map[int]uint64{0: key("common", 0)}, 0, nil))
		}
		insert(t, r, base...)
		k0, f0 := footprint(t, r)
		byID := map[string]Entry{}
		var docs []Entry
		var all []string
		for i := range 300 {
			shared := map[int]uint64{}
			if i%3 == 0 {
				shared[0] = key("common", 0) // a common key
			}
			e := sharedDoc(fmt.Sprintf("d%d", i), shared, key(fmt.Sprintf("sim%d", i%50), 0), nil)
			docs = append(docs, e)
			byID[e.ID] = e
			all = append(all, e.ID)
		}
		insert(t, r, docs...)
		// Give all but the last document a keys record of version 3 of
		// its own ('k', as layout 7 kept them), which Remove reads before
		// the one its features record carries.
		rewritten := 0
		for _, k := range storeKeys(t, r) {
			i := strings.IndexByte(k, '}')
			if i < 0 || i+1 >= len(k) || k[i+1] != 'f' {
				continue
			}
			recs, err := r.c.HGetAll(ctx, k).Result()
			if err != nil {
				t.Fatal(err)
			}
			for f, v := range recs {
				id, err := r.c.HGet(ctx, k[:i+1]+"m"+k[i+2:], f).Result()
				if err != nil {
					t.Fatalf("meta record of %s %s: %v", k, f, err)
				}
				_, kr, ok := unframeFeatures([]byte(v))
				if !ok || len(kr) == 0 || kr[0] != keysGroupsVersion {
					t.Fatalf("%s's features record %q carries no keys record of version %d", id, v, keysGroupsVersion)
				}
				e, ok := byID[id]
				if !ok || id == all[len(all)-1] {
					continue
				}
				if err := r.c.HSet(ctx, k[:i+1]+"k"+k[i+2:], f, r.encodeKeysV3(&e)).Err(); err != nil {
					t.Fatal(err)
				}
				rewritten++
			}
		}
		if rewritten != len(all)-1 {
			t.Fatalf("%d records rewritten, want %d", rewritten, len(all)-1)
		}
		removed, err := r.Remove(ctx, all[len(all)-2:])
		if err != nil {
			t.Fatal(err)
		}
		if !removed[0] || !removed[1] {
			t.Errorf("Remove of a version 3 and a version 4 record: %v", removed)
		}
		removed, err = r.Remove(ctx, all[:len(all)-2])
		if err != nil {
			t.Fatal(err)
		}
		for i, ok := range removed {
			if !ok {
				t.Errorf("%s not removed", all[i])
			}
		}
		if k, f := footprint(t, r); k != k0 || f != f0 {
			t.Errorf("after removing every version 3 document: %d keys %d fields, want %d and %d", k, f, k0, f0)
		}
	})
}

// TestUnlinkScriptBadInput checks that the unlink script refuses an
// unknown mode and a SimHash table given by group.
func TestUnlinkScriptBadInput(t *testing.T) {
	r := openRedis(t, RedisConfig{Addrs: []string{redistest.StartServer(t)}, Namespace: "ubi"})
	ctx := context.Background()
	insert(t, r, sharedDoc("a", nil, 0, nil))
	for _, tt := range []struct {
		name string
		args []any
	}{
		{"mode", []any{"x"}},
		{"SimHash group", []any{"u", 1, 100, 1, "", 0, "", r.appendGroupField(binary.BigEndian.AppendUint16(nil, uint16(r.p.Bands)), r.p.Bands, 5, 0)[:2+maxGroupBits], "", ""}},
	} {
		c := &call{s: r.scripts.unlink, keys: []string{r.clock[0]}, args: append(r.header(0, 0), tt.args...)}
		if err := r.run(ctx, []*call{c}); err == nil || !redis.HasErrorPrefix(err, "unlink:") {
			t.Errorf("%s: %v, want an error", tt.name, err)
		}
	}
}
