package index

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/index/redistest"
	"github.com/neardup/neardup/sketch"
)

func redisCPU(t testing.TB, c *redis.Client) float64 {
	info, err := c.Info(context.Background(), "cpu").Result()
	if err != nil {
		t.Fatal(err)
	}
	var s float64
	for _, l := range strings.Split(info, "\r\n") {
		for _, k := range []string{"used_cpu_user:", "used_cpu_sys:"} {
			if v, ok := strings.CutPrefix(l, k); ok {
				f, _ := strconv.ParseFloat(v, 64)
				s += f
			}
		}
	}
	return s
}

func selfCPU() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// BenchmarkInsertCPU: redis-server CPU (INFO cpu), this process's CPU
// (rusage) and Redis used_memory to insert 20,000 documents of 30 bands
// with I-Match and content digests, 700 bytes of features and 0 or 50
// anchors, 64 per call, in a store sized for them (Capacity). b.N is
// ignored. It uses only what main had before
// keys records (delete.go), so the same file measures both:
//
//	go test ./index/ -run '^$' -bench InsertCPU -benchtime 1x
func BenchmarkInsertCPU(t *testing.B) {
	addr := redistest.StartServer(t)
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	p := Params{Hash: "fnv1a64+splitmix64/v1", K: 128, Bands: 30, Rows: 4, Shingle: 5, Seed: 1}
	for _, na := range []int{0, 50} {
		s, err := NewRedis(context.Background(), RedisConfig{Addrs: []string{addr}, Namespace: fmt.Sprint("cpu", na), Params: p, Capacity: 20000})
		if err != nil {
			t.Fatal(err)
		}
		const n = 20000
		var docs []Entry
		for i := range n {
			id := fmt.Sprintf("https://example.org/page/%07d", i)
			e := Entry{ID: id, Bands: make([]uint64, 30), HasIMatch: true, HasContent: true, Features: make([]byte, 700)}
			for b := range e.Bands {
				e.Bands[b] = sketch.Mix64(uint64(i)<<8 | uint64(b))
			}
			for a := range na {
				e.Anchors = append(e.Anchors, sketch.Mix64(uint64(i)<<16|uint64(a)|1<<60))
			}
			for k := 0; k < 20; k += 4 {
				binary.LittleEndian.PutUint32(e.IMatch[k:], uint32(sketch.Mix64(uint64(i)<<8|uint64(k)|1<<50)))
			}
			binary.LittleEndian.PutUint64(e.Content[:], sketch.Mix64(uint64(i)|1<<52))
			binary.LittleEndian.PutUint64(e.Content[8:], sketch.Mix64(uint64(i)|1<<53))
			docs = append(docs, e)
		}
		r0, s0 := redisCPU(t, c), selfCPU()
		for lo := 0; lo < n; lo += 64 {
			if _, err := s.LookupInsert(context.Background(), docs[lo:min(lo+64, n)]); err != nil {
				t.Fatal(err)
			}
		}
		r1, s1 := redisCPU(t, c), selfCPU()
		mem, _ := c.Info(context.Background(), "memory").Result()
		used := ""
		for _, l := range strings.Split(mem, "\r\n") {
			if v, ok := strings.CutPrefix(l, "used_memory:"); ok {
				used = v
			}
		}
		u, _ := strconv.ParseFloat(used, 64)
		t.Logf("anchors=%d: redis-server %.1f µs/doc, client %.1f µs/doc, used_memory %.0f bytes/doc, %d keys", na, (r1-r0)/n*1e6, (s1-s0)/n*1e6, u/n, c.DBSize(context.Background()).Val())
		s.Close()
		c.FlushAll(context.Background())
	}
}
