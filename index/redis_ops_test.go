package index

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	mrand "math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/index/redistest"
	"github.com/neardup/neardup/sketch"
)

func TestRedisParamsMismatch(t *testing.T) {
	addr := redistest.StartServer(t)
	base := RedisConfig{Addrs: []string{addr}, Namespace: "pm", Params: testParams}
	openRedis(t, base)
	openRedis(t, base) // same parameters: fine

	seed := base
	seed.Params.Seed = 2
	// Capacity is the first generation's guess, not a parameter: another
	// value opens the namespace.
	layout := base
	layout.Capacity = 1 << 24
	openRedis(t, layout)
	gen := base
	gen.Retention = time.Hour
	for name, cfg := range map[string]RedisConfig{"seed": seed, "generations": gen} {
		_, err := NewRedis(context.Background(), cfg)
		if !errors.Is(err, ErrParamsMismatch) {
			t.Errorf("%s: NewRedis = %v, want ErrParamsMismatch", name, err)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, "seed=1") || !strings.Contains(msg, `namespace "pm"`) {
			t.Errorf("%s: error does not show the stored parameters: %v", name, msg)
		}
	}
	other := seed
	other.Namespace = "pm2"
	openRedis(t, other)

	// A store opened before another process re-created the namespace with
	// other parameters notices on its next call.
	s := openRedis(t, RedisConfig{Addrs: []string{addr}, Namespace: "pm3", Params: testParams})
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	if err := c.HSet(context.Background(), "pm3:v8:{0}c", "f", "something else").Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LookupInsert(context.Background(), []Entry{entry(testParams, "a", nil)}); !errors.Is(err, ErrParamsMismatch) {
		t.Errorf("LookupInsert after the namespace changed: %v, want ErrParamsMismatch", err)
	}
}

func TestRedisAuth(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{Args: []string{
		"--user", "default", "off", "--user", "alice", "on", ">s3cret", "~*", "&*", "+@all"}})
	ctx := context.Background()
	s := openRedis(t, RedisConfig{Addrs: []string{srv.Addr}, Username: "alice", Password: "s3cret"})
	insert(t, s, entry(testParams, "a", nil))
	for _, cfg := range []RedisConfig{
		{Addrs: []string{srv.Addr}, Username: "alice", Password: "wrong"},
		{Addrs: []string{srv.Addr}},
	} {
		cfg.Params = testParams
		if r, err := NewRedis(ctx, cfg); err == nil {
			r.Close()
			t.Errorf("NewRedis as %q/%q succeeded", cfg.Username, cfg.Password)
		}
	}
	st, err := Open(ctx, "redis://alice:s3cret@"+srv.Addr+"/0?namespace=neardup", Options{Params: testParams})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	insert(t, st, entry(testParams, "a", nil))
}

func TestRedisTLS(t *testing.T) {
	dir := t.TempDir()
	clientTLS := writeCerts(t, dir)
	srv := redistest.Start(t, redistest.Options{TLS: true, ClientTLS: clientTLS, Args: []string{
		"--tls-cert-file", filepath.Join(dir, "server.pem"), "--tls-key-file", filepath.Join(dir, "server.key"),
		"--tls-ca-cert-file", filepath.Join(dir, "ca.pem"), "--tls-auth-clients", "no"}})
	s := openRedis(t, RedisConfig{Addrs: []string{srv.Addr}, TLS: clientTLS})
	r := insert(t, s, entry(testParams, "a", nil), entry(testParams, "b", map[int]uint64{0: key("a", 0)}))
	wantCands(t, "b over TLS", r[1], "a/lsh")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if r, err := NewRedis(ctx, RedisConfig{Addrs: []string{srv.Addr}, Params: testParams, DialTimeout: time.Second}); err == nil {
		r.Close()
		t.Error("plain-text connection to a TLS port succeeded")
	} else if !errors.Is(err, ErrUnavailable) {
		t.Errorf("plain text to TLS: %v, want ErrUnavailable", err)
	}
	st, err := Open(context.Background(), "rediss://"+srv.Addr+"?namespace=viaurl", Options{Params: testParams, TLS: clientTLS})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
}

// writeCerts writes a CA and a server certificate for 127.0.0.1 into dir
// and returns a client config that trusts the CA.
func writeCerts(t *testing.T, dir string) *tls.Config {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "neardup test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	srvKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		KeyUsage: x509.KeyUsageDigitalSignature}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &srvKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(srvKey)
	for name, block := range map[string]*pem.Block{
		"ca.pem": {Type: "CERTIFICATE", Bytes: caDER}, "server.pem": {Type: "CERTIFICATE", Bytes: leafDER},
		"server.key": {Type: "EC PRIVATE KEY", Bytes: keyDER},
	} {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pool := x509.NewCertPool()
	pool.AddCert(caCert)
	return &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
}

// TestRedisFailure kills the server under a running writer: calls fail
// with ErrUnavailable and return no results (nothing is reported as
// unique), and after a restart the same store resumes.
func TestRedisFailure(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	s := openRedis(t, RedisConfig{Addrs: []string{srv.Addr}, DialTimeout: 200 * time.Millisecond,
		ReadTimeout: 500 * time.Millisecond, WriteTimeout: 500 * time.Millisecond})
	type outcome struct {
		res []Result
		err error
	}
	outcomes := make(chan outcome)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // the writer, owned by this test: ends when stop closes
		defer close(done)
		for i := 0; ; i++ {
			a := entry(testParams, fmt.Sprint("a", i), nil)
			res, err := s.LookupInsert(context.Background(), []Entry{a, entry(testParams, fmt.Sprint("b", i), map[int]uint64{1: a.Bands[1]})})
			select {
			case outcomes <- outcome{res, err}:
			case <-stop:
				return
			}
		}
	}()
	defer func() { close(stop); <-done }()
	expect := func(ok bool, n int) {
		t.Helper()
		for got := 0; got < n; {
			o := <-outcomes
			if o.err == nil && ok {
				if len(o.res) != 2 || len(o.res[1].Candidates) != 1 {
					t.Fatalf("bad results %+v", o.res)
				}
				got++
			}
			if o.err != nil && !ok {
				if !errors.Is(o.err, ErrUnavailable) {
					t.Fatalf("error %v is not ErrUnavailable", o.err)
				}
				if o.res != nil {
					t.Fatalf("results with an error: %+v", o.res)
				}
				got++
			}
		}
	}
	expect(true, 20)
	srv.Kill()
	expect(false, 5)
	if _, err := s.Features(context.Background(), []uint64{1}); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Features while down: %v", err)
	}
	srv.Restart()
	// The server came back without its data (no persistence): the store
	// says so until the loss is accepted, then works on the empty index.
	for o := range outcomes {
		if errors.Is(o.err, ErrIndexLost) {
			break
		}
		if o.err == nil {
			t.Fatalf("results from a server that lost its data: %+v", o.res)
		}
	}
	s.AcceptEmpty()
	expect(true, 20)
}

// TestRedisTimeout pauses the server: the caller's deadline and the
// client's read timeout both surface as ErrUnavailable.
func TestRedisTimeout(t *testing.T) {
	addr := redistest.StartServer(t)
	s := openRedis(t, RedisConfig{Addrs: []string{addr}, ReadTimeout: 150 * time.Millisecond})
	admin := redis.NewClient(&redis.Options{Addr: addr})
	defer admin.Close()
	bg := context.Background()
	if err := admin.Do(bg, "CLIENT", "PAUSE", "1500", "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(bg, 50*time.Millisecond)
	defer cancel()
	_, err := s.LookupInsert(ctx, []Entry{entry(testParams, "a", nil)})
	if !errors.Is(err, ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("with a 50ms deadline: %v, want ErrUnavailable and DeadlineExceeded", err)
	}
	if _, err := s.LookupInsert(bg, []Entry{entry(testParams, "b", nil)}); !errors.Is(err, ErrUnavailable) {
		t.Errorf("with a 150ms read timeout: %v, want ErrUnavailable", err)
	}
	if err := admin.Do(bg, "CLIENT", "UNPAUSE").Err(); err != nil {
		t.Fatal(err)
	}
	// The timed-out calls may or may not have run; retrying is safe.
	r := insert(t, s, entry(testParams, "a", nil), entry(testParams, "b", nil))
	for _, x := range r {
		if x.Verdict != nil {
			t.Errorf("unexpected verdict %+v", x)
		}
	}
}

// passageGroups returns the distinct groups of the passage table that the
// anchors a fall in at the first generation's level before any split
// (minGroupBits; tableOp in lua/prelude.lua: 6 more bits of the key join
// the group).
func (r *Redis) passageGroups(a []uint64) map[uint64]bool {
	m := map[uint64]bool{}
	for _, k := range anchorKeys(nil, a) {
		g, _ := r.bucketOp(r.p.passageTable(), k)
		m[g>>(maxGroupBits-minGroupBits)] = true
	}
	return m
}

// TestRedisLayout checks the key names and that the hashes stay in Redis's
// compact listpack encoding, the passage table's too with 50 anchors per
// document.
func TestRedisLayout(t *testing.T) {
	addr := redistest.StartServer(t)
	s := openRedis(t, RedisConfig{Addrs: []string{addr}, Namespace: "lay", Capacity: 1 << 12})
	docs := make([]Entry, 0, 2000)
	for i := range cap(docs) {
		e := entry(testParams, fmt.Sprint("document-", i), nil)
		e.Anchors = anchors(e.ID, 50)
		e.Features = []byte("f")
		binary.BigEndian.PutUint64(e.Content[:], key(e.ID, 99))
		binary.BigEndian.PutUint64(e.Content[8:], key(e.ID, 98))
		e.HasContent = true
		docs = append(docs, e)
	}
	for lo := 0; lo < len(docs); lo += 500 {
		insert(t, s, docs[lo:lo+500]...)
	}
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	ctx := context.Background()
	keys, err := c.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	lay := genLayouts(t, s)[0][0]
	// Every bucket group the documents' keys name, by the layout the
	// generation grew to (2000 documents: 63 groups of about 32 per
	// table, splitLoad).
	names, lanes := map[string]bool{}, map[string]bool{}
	for _, e := range docs {
		lanes["i"+s.laneName(0, lay, uint32(s.idGroup(e.ID)))] = true
		lanes["e"+s.laneName(0, lay, uint32(s.contentGroup(e.Content[:])))] = true
		for tb, k := range e.Bands {
			g, _ := s.bucketOp(tb, k)
			names[fmt.Sprintf("lay:v8:{0}b0:%d:%s", tb, s.groupDigits(0, lay, g))] = true
		}
		for _, k := range anchorKeys(nil, e.Anchors) {
			g, _ := s.bucketOp(s.p.passageTable(), k)
			names[fmt.Sprintf("lay:v8:{0}b0:%d:%c%s", s.p.passageTable(), splitAlphabet[g>>maxGroupBits], s.groupDigits(0, lay, g&(1<<maxGroupBits-1)))] = true
		}
	}
	if groups := 1<<lay.level + lay.splits; groups != (len(docs)+splitLoad-1)/splitLoad {
		t.Errorf("layout %+v: %d groups per table, want %d", lay, groups, (len(docs)+splitLoad-1)/splitLoad)
	}
	for _, k := range keys {
		if strings.HasPrefix(k, "lay:v8:{0}b") && !names[k] {
			t.Errorf("%s: a bucket group no document's key names", k)
		}
		if kind, _, rest, ok := keyKind(s, k); ok && (kind == 'i' || kind == 'e') && !lanes[string(kind)+rest] {
			t.Errorf("%s: an id or content group no document names", k)
		}
		if !strings.HasPrefix(k, "lay:v8:{0}") {
			t.Fatalf("key %q outside the namespace", k)
		}
		kind := k[len("lay:v8:{0}"):][:1]
		kinds[kind]++
		enc, err := c.ObjectEncoding(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		// Keys records (delete.go), in the features records (featKeys),
		// are longer than listpack's 64-byte values, as real features are.
		if kind != "c" && kind != "f" && enc != "listpack" {
			t.Errorf("%s: encoding %s, want listpack", k, enc)
		}
	}
	// The groups the keys name (4 tables × 63 groups and about 3,800 of
	// the passage table's 64 × 63), ids and contents in 63 groups each,
	// 2000/64 record hashes. No verdict is recorded: every document keeps
	// its lookup record.
	want := map[string]int{"b": len(names), "i": 63, "e": 63, "m": 32, "f": 32, "k": 0, "l": 32, "c": 1}
	for k, n := range want {
		if kinds[k] != n {
			t.Errorf("%d keys of kind %q, want %d (all: %v)", kinds[k], k, n, kinds)
		}
	}
}

// TestRedisGenerationExpiry checks physical expiry: a closed generation's
// keys get EXPIREAT (gen+1)·L + R when the generation closes, the current
// generation's keys have none yet, records expire with their generation,
// and generations past retention are deleted.
func TestRedisGenerationExpiry(t *testing.T) {
	addr := redistest.StartServer(t)
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	ctx := context.Background()
	clk := newFakeClock()
	s := openRedis(t, RedisConfig{Addrs: []string{addr}, Namespace: "exp", Capacity: 64,
		Retention: 10 * time.Second, Generation: 5 * time.Second, Clock: clk.Now, MaxClockAhead: -1})
	g0 := clk.Now().Unix() / 5
	a := withAnchors(entry(testParams, "a", nil), anchors("a", 3)...)
	insert(t, s, a)
	expiry := func(pattern string) map[string]int64 {
		keys, err := c.Keys(ctx, pattern).Result()
		if err != nil || len(keys) == 0 {
			t.Fatalf("no keys %s: %v", pattern, err)
		}
		m := map[string]int64{}
		for _, k := range keys {
			m[k] = c.Do(ctx, "EXPIRETIME", k).Val().(int64)
		}
		return m
	}
	for k, e := range expiry(fmt.Sprintf("exp:v8:{0}b%d:*", g0)) {
		if e != -1 {
			t.Errorf("%s in the current generation has expiry %d", k, e)
		}
	}
	for k, e := range expiry("exp:v8:{0}m*") {
		if e != (g0+1)*5+10 {
			t.Errorf("record hash %s expires at %d, want %d", k, e, (g0+1)*5+10)
		}
	}
	clk.Advance(5 * time.Second)
	if err := s.Maintain(ctx); err != nil {
		t.Fatal(err)
	}
	pt := fmt.Sprintf("b%%d:%d:*", testParams.passageTable())
	if n := len(expiry(fmt.Sprintf("exp:v8:{0}"+pt, g0))); n != len(s.passageGroups(a.Anchors)) {
		t.Errorf("%d passage keys, want %d", n, len(s.passageGroups(a.Anchors)))
	}
	for _, pat := range []string{"b%d:*", pt, "i%d:*"} {
		for k, e := range expiry(fmt.Sprintf("exp:v8:{0}"+pat, g0)) {
			if e != (g0+1)*5+10 {
				t.Errorf("%s of the closed generation expires at %d, want %d", k, e, (g0+1)*5+10)
			}
		}
	}

	// A clock in the past: the generation's keys are deleted by the sweep.
	past := &fakeClock{now: time.Now().Add(-time.Hour).Truncate(time.Minute)}
	old := openRedis(t, RedisConfig{Addrs: []string{addr}, Namespace: "old", Capacity: 64,
		Retention: 10 * time.Second, Generation: 5 * time.Second, Clock: past.Now, MaxClockAhead: -1})
	insert(t, old, a)
	if n, want := len(c.Keys(ctx, "old:v8:{0}b*").Val()), 4+len(old.passageGroups(a.Anchors)); n != want {
		t.Fatalf("%d band and passage keys, want %d", n, want)
	}
	past.Advance(5 * time.Second)
	if err := old.Maintain(ctx); err != nil {
		t.Fatal(err)
	}
	if k := c.Keys(ctx, "old:v8:{0}[bimfxe]*").Val(); len(k) != 0 {
		t.Errorf("keys left after retention: %v", k)
	}
}

func TestShardTags(t *testing.T) {
	if got := crc16("123456789"); got != 0x31c3 {
		t.Fatalf("crc16 = %#x, want 0x31c3", got)
	}
	for _, S := range []int{1, 3, 48, 1000} {
		tags := shardTags(S)
		for s, tag := range tags {
			if slot := int(crc16(tag) % 16384); S > 1 && slot*S/16384 != s {
				t.Errorf("S=%d: tag %q of shard %d has slot %d", S, tag, s, slot)
			}
		}
	}
	// The tags are part of the stored layout: they must never change.
	if got := strings.Join(shardTags(48)[:6], ","); got != goldenTags48 {
		t.Errorf("shardTags(48)[:6] = %s, want %s", got, goldenTags48)
	}
}

const goldenTags48 = "10,18,263,25,3,7"

// TestBucketOp checks the ops at full precision: the group is the key's
// top 22 bits (the passage table's: the key's bits 33…38, then those),
// written as binary digits whose prefix of b digits is the group at b
// bits, and the field the key's bits 4…51, 6 bytes, which hold the
// group's digits from the fifth on (what a split reads).
func TestBucketOp(t *testing.T) {
	r, err := newRedis(RedisConfig{Addrs: []string{"x:1"}, Params: testParams})
	if err != nil {
		t.Fatal(err)
	}
	defer r.c.Close()
	for _, k := range []uint64{0, 1, 1<<63 | 12345, ^uint64(0), 0x0123456789abcdef} {
		for _, tb := range []int{0, r.p.passageTable()} {
			g, f := r.bucketOp(tb, k)
			wantG, wantF := k>>42, k<<4>>16
			digits, split := 22, 0
			if tb == r.p.passageTable() {
				wantG |= (k >> 25 & 63) << 22
				digits, split = 23, 1
			}
			if g != wantG || f != wantF {
				t.Errorf("table %d: key %#x → group %d field %d, want %d %d", tb, k, g, f, wantG, wantF)
			}
			if r.routeOf(tb, g) != k>>42 {
				t.Errorf("table %d: key %#x routed by %#x, want its top 22 bits", tb, k, r.routeOf(tb, g))
			}
			op := r.appendOp(nil, tb, k)
			if len(op) != digits+fieldBytes {
				t.Fatalf("op of %d bytes, want %d", len(op), digits+fieldBytes)
			}
			bg, err := strconv.ParseUint(string(op[split:digits]), 2, 64)
			if split == 1 {
				bg |= uint64(strings.IndexByte(splitAlphabet, op[0])) << 22
			}
			if err != nil || bg != g || binary.BigEndian.Uint64(append(make([]byte, 8-fieldBytes), op[digits:]...)) != f {
				t.Errorf("op %q does not encode group %d field %d", op, g, f)
			}
			for _, b := range []int{minGroupBits, 11, maxGroupBits} {
				if pg, _ := strconv.ParseUint(string(op[split:split+b]), 2, 64); pg != k>>(64-b) {
					t.Errorf("table %d: key %#x at %d bits: group %d from the op's prefix, want %d", tb, k, b, pg, k>>(64-b))
				}
			}
		}
	}
}

func TestParseURL(t *testing.T) {
	tests := []struct {
		url     string
		want    RedisConfig
		memory  bool
		wantErr bool
	}{
		{url: "memory", memory: true},
		{url: "redis://localhost:6380/2?namespace=x&retention=24h&generation=12h&refresh=true&common_docs=9&timeout=2s",
			want: RedisConfig{Addrs: []string{"localhost:6380"}, DB: 2, Namespace: "x", Retention: 24 * time.Hour,
				Generation: 12 * time.Hour, RefreshOnMatch: true, CommonDocs: 9,
				DialTimeout: 2 * time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second}},
		{url: "redis://u:p@h", want: RedisConfig{Addrs: []string{"h:6379"}, Username: "u", Password: "p"}},
		{url: "redis://:p@h:1", want: RedisConfig{Addrs: []string{"h:1"}, Password: "p"}},
		{url: "redis+cluster://h1:1,h2:2,h3:3?shards=12", want: RedisConfig{Addrs: []string{"h1:1", "h2:2", "h3:3"}, Cluster: true, Shards: 12}},
		{url: "redis+cluster://h1:1/3", wantErr: true},
		{url: "redis://h?bogus=1", wantErr: true},
		{url: "redis://h?retention=soon", wantErr: true},
		{url: "http://h", wantErr: true},
		{url: "redis://", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			got, mem, err := parseURL(tt.url, Options{})
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v", err)
			}
			if err != nil {
				if !errors.Is(err, ErrInvalid) {
					t.Errorf("err %v is not ErrInvalid", err)
				}
				return
			}
			if mem != tt.memory || fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("parseURL = %+v (memory %v), want %+v", got, mem, tt.want)
			}
		})
	}
	cfg, _, _ := parseURL("rediss://cache.example:6380", Options{})
	if cfg.TLS == nil || cfg.TLS.ServerName != "cache.example" {
		t.Errorf("rediss: TLS %+v", cfg.TLS)
	}
	if _, _, err := parseURL("redis://u:hunter2@h?x=1", Options{}); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error leaks the password: %v", err)
	}
}

// TestFNV32Lua checks that the Lua FNV-1a 32 that places ids on the server
// computes what fnv32 (hash/fnv) computes in Go: ids would otherwise be
// looked up in the wrong group.
func TestFNV32Lua(t *testing.T) {
	addr := redistest.StartServer(t)
	s := openRedis(t, RedisConfig{Addrs: []string{addr}, Namespace: "fnv"})
	probe := redis.NewScript(s.scriptConstants() + luaPrelude + `
local out = {}
for a = 7, #ARGV do out[#out + 1] = tostring(fnv32(ARGV[a])) end
return out
`)
	ids := []string{"", "a", "document-1", "x\xff\xfe", strings.Repeat("long id ", 100), strings.Repeat("\xffid", 2500), "日本語のid"}
	rng := mrand.New(mrand.NewPCG(1, 2))
	for range 200 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		ids = append(ids, string(b))
	}
	args := s.header(0, 0)
	for _, id := range ids {
		args = append(args, id)
	}
	c := &call{s: probe, keys: []string{s.clock[0]}, args: args}
	if err := s.run(context.Background(), []*call{c}); err != nil {
		t.Fatal(err)
	}
	got, err := c.cmd.StringSlice()
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		if want := strconv.FormatUint(uint64(fnv32(id)), 10); got[i] != want {
			t.Errorf("fnv32(%q): Lua %s, Go %s", id, got[i], want)
		}
	}
}

// TestRedisReadsLiveGenerations checks that a lookup reads only the older
// generations that can hold data: none in a store younger than one
// generation, one after a generation has passed, still one after an idle
// generation, and every live one that has a layout (every one in which a
// call ran) for a namespace written before the clock kept the list (its w
// field absent).
func TestRedisReadsLiveGenerations(t *testing.T) {
	addr := redistest.StartServer(t)
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	ctx := context.Background()
	clk := newFakeClock()
	// Retention 10 s in generations of 5 s: three live generations.
	s := openRedis(t, RedisConfig{Addrs: []string{addr}, Namespace: "gens", Capacity: 64,
		Retention: 10 * time.Second, Generation: 5 * time.Second, Clock: clk.Now, MaxClockAhead: -1})
	hgets := func(id string) int64 {
		t.Helper()
		before := commandCalls(t, c, "hget")
		insert(t, s, withAnchors(entry(testParams, id, nil), anchors(id, 3)...))
		return commandCalls(t, c, "hget") - before
	}
	// Per older generation, a new document without SimHash reads its id,
	// every band's bucket and each anchor's bucket once.
	perGen := int64(1 + testParams.Bands + 3)
	fresh := hgets("a")
	hgets("b") // a second document in the same, only, generation
	if got := hgets("c"); got != fresh {
		t.Errorf("fresh store: %d HGETs for a new document, want %d as for the first", got, fresh)
	}
	clk.Advance(5 * time.Second)
	if got := hgets("d"); got != fresh+perGen {
		t.Errorf("one older generation: %d HGETs, want %d", got, fresh+perGen)
	}
	clk.Advance(10 * time.Second) // the generation in between stays unused
	if got := hgets("e"); got != fresh+perGen {
		t.Errorf("after an idle generation: %d HGETs, want %d (one older generation holds data)", got, fresh+perGen)
	}
	if err := c.HDel(ctx, "gens:v8:{0}c", "w").Err(); err != nil {
		t.Fatal(err)
	}
	// Without the list, every live generation with a layout could hold
	// data; the idle one got none (no call ran in it), so it is not read.
	if got := hgets("f"); got != fresh+perGen {
		t.Errorf("namespace without the list: %d HGETs, want %d (the live generations with a layout)", got, fresh+perGen)
	}
	if got := hgets("g"); got != fresh+perGen {
		t.Errorf("after the list was rebuilt: %d HGETs, want %d", got, fresh+perGen)
	}
	// Documents of older live generations are still found.
	for _, id := range []string{"d", "e"} {
		res, err := s.LookupInsert(ctx, []Entry{withAnchors(entry(testParams, id+"'", map[int]uint64{0: key(id, 0)}))})
		if err != nil {
			t.Fatal(err)
		}
		if len(res[0].Candidates) != 1 || res[0].Candidates[0].ID != id {
			t.Errorf("near copy of %s: candidates %v", id, res[0].Candidates)
		}
	}
}

// TestRedisFeaturesOncePerReply checks that a lookup-insert reads a
// document's features once however many documents of the call find it,
// as a candidate or as their I-Match hit, whether it was stored in an
// earlier call or earlier in the same one (readFeatures): the bytes Redis
// sends stay about one copy of them, not one per mention.
func TestRedisFeaturesOncePerReply(t *testing.T) {
	addr := redistest.StartServer(t)
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	s := openRedis(t, RedisConfig{Addrs: []string{addr}, Namespace: "once", Capacity: 64})
	const size, followers = 64 << 10, 16
	for _, tt := range []struct {
		name    string
		earlier bool // the original is stored by an earlier call
	}{{"stored", true}, {"same-call", false}} {
		t.Run(tt.name, func(t *testing.T) {
			mk := func(id string, feat []byte) Entry {
				e := entry(testParams, tt.name+"/"+id, map[int]uint64{0: key(tt.name, 0)})
				e.IMatch, e.HasIMatch, e.Features = sketch.Digest{byte(len(tt.name))}, true, feat
				return e
			}
			orig := mk("orig", bytes.Repeat([]byte{0xa5, 0, '\n', 0xff}, size/4))
			var docs []Entry
			if tt.earlier {
				insert(t, s, orig)
			} else {
				docs = append(docs, orig)
			}
			for i := range followers {
				docs = append(docs, mk(fmt.Sprint(i), nil))
			}
			before := infoInt(t, c, "stats", "total_net_output_bytes")
			// Not insert: its check reads the features again.
			res, err := s.LookupInsert(context.Background(), docs)
			if err != nil {
				t.Fatal(err)
			}
			sent := infoInt(t, c, "stats", "total_net_output_bytes") - before
			for _, r := range res[len(docs)-followers:] {
				if len(r.Candidates) == 0 || !bytes.Equal(r.Candidates[len(r.Candidates)-1].Features, orig.Features) ||
					r.IMatch != orig.ID || !bytes.Equal(r.IMatchFeatures, orig.Features) {
					t.Fatalf("follower %d: candidates %v, I-Match %q with %d bytes of features", r.Seq, ids(r.Candidates), r.IMatch, len(r.IMatchFeatures))
				}
			}
			if sent > 2*size {
				t.Errorf("Redis sent %d bytes for %d documents finding one original of %d bytes of features, want < %d",
					sent, followers, size, 2*size)
			}
			t.Logf("%d bytes sent", sent)
		})
	}
}

// infoInt returns one integer field of a section of INFO.
func infoInt(tb testing.TB, c *redis.Client, section, field string) int64 {
	tb.Helper()
	info, err := c.Info(context.Background(), section).Result()
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.ParseInt(rest, 10, 64)
			if err != nil {
				tb.Fatal(err)
			}
			return n
		}
	}
	tb.Fatalf("INFO %s: no %s", section, field)
	return 0
}

// commandCalls returns how many times Redis ran cmd (INFO commandstats).
func commandCalls(tb testing.TB, c *redis.Client, cmd string) int64 {
	tb.Helper()
	return commandStats(tb, c)[cmd].calls
}

// A store that has used its namespace notices when the namespace is gone
// (the server restarted without persistence, or the keys were deleted):
// every call fails with ErrIndexLost and writes nothing, instead of
// starting afresh and reporting every later copy as unique, until
// AcceptEmpty. A store told the namespace exists (RequireExisting) fails
// at once when it does not. The same on a single node and in a cluster.
func TestRedisIndexLost(t *testing.T) {
	ctx := context.Background()
	for _, tc := range nodeAndCluster(t) {
		t.Run(tc.name, func(t *testing.T) {
			cfg := RedisConfig{Addrs: tc.addrs, Cluster: tc.cluster, Namespace: "lost", Params: testParams}
			s := openRedis(t, cfg)
			insert(t, s, entry(testParams, "a", map[int]uint64{0: 7}))
			masters := tc.masters(t)
			flush := func() {
				t.Helper()
				for _, m := range masters {
					if err := m.FlushAll(ctx).Err(); err != nil {
						t.Fatal(err)
					}
				}
			}
			keys := func() int {
				t.Helper()
				n := 0
				for _, m := range masters {
					k, err := m.DBSize(ctx).Result()
					if err != nil {
						t.Fatal(err)
					}
					n += int(k)
				}
				return n
			}
			flush()
			_, err := s.LookupInsert(ctx, []Entry{entry(testParams, "b", map[int]uint64{0: 7})})
			if !errors.Is(err, ErrIndexLost) {
				t.Fatalf("LookupInsert after the data was lost: %v, want ErrIndexLost", err)
			}
			if errors.Is(err, ErrUnavailable) {
				t.Errorf("ErrIndexLost is also ErrUnavailable (retried forever): %v", err)
			}
			if _, err := s.Verdicts(ctx, []uint64{1}); !errors.Is(err, ErrIndexLost) {
				t.Errorf("Verdicts after the data was lost: %v, want ErrIndexLost", err)
			}
			// Nothing but, in cluster mode, the sequence counter that the
			// first phase reserves from before any script runs.
			if n, want := keys(), map[bool]int{false: 0, true: 1}[tc.cluster]; n > want {
				t.Errorf("%d keys written into the lost namespace, want at most %d", n, want)
			}
			s.AcceptEmpty()
			r := insert(t, s, entry(testParams, "b", map[int]uint64{0: 7}))[0]
			if r.Replay || len(r.Candidates) != 0 {
				t.Errorf("b after AcceptEmpty: %+v, want a new document with no candidates", r)
			}
			// A new store told the namespace exists.
			flush()
			req := cfg
			req.RequireExisting = true
			if _, err := NewRedis(ctx, req); !errors.Is(err, ErrIndexLost) {
				t.Errorf("NewRedis(RequireExisting) on an empty server: %v, want ErrIndexLost", err)
			}
			openRedis(t, cfg) // creates it
			openRedis(t, req) // now it exists
		})
	}
}

// A member whose clock runs ahead of the server's by more than
// MaxClockAhead is refused (ErrUnavailable, naming the skew) instead of
// moving every shard's generation forward and hiding the index from the
// others; a small skew is fine.
func TestRedisClockAhead(t *testing.T) {
	addr := redistest.StartServer(t)
	ctx := context.Background()
	cfg := RedisConfig{Addrs: []string{addr}, Namespace: "skew", Params: testParams, Retention: time.Hour, Generation: 10 * time.Minute}
	good := openRedis(t, cfg)
	insert(t, good, entry(testParams, "a", map[int]uint64{0: 3}))
	fast := cfg
	fast.Clock = func() time.Time { return time.Now().Add(2 * time.Hour) }
	if _, err := NewRedis(ctx, fast); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "ahead") {
		t.Fatalf("NewRedis with a clock 2 h ahead: %v, want ErrUnavailable naming the skew", err)
	}
	slight := cfg
	slight.Clock = func() time.Time { return time.Now().Add(time.Minute) }
	s := openRedis(t, slight)
	wantCands(t, "b", insert(t, s, entry(testParams, "b", map[int]uint64{0: 3}))[0], "a/lsh")
	// The others still see the same generation: a is found.
	wantCands(t, "c", insert(t, good, entry(testParams, "c", map[int]uint64{0: 3}))[0], "b/lsh", "a/lsh")
}

// Lookup writes nothing: the servers' DBSIZE and their count of writes
// are the same after as before, however many documents are looked up,
// common keys included, on a single node and in a cluster.
func TestRedisLookupWritesNothing(t *testing.T) {
	ctx := context.Background()
	for _, tc := range nodeAndCluster(t) {
		t.Run(tc.name, func(t *testing.T) {
			s := openRedis(t, RedisConfig{Addrs: tc.addrs, Cluster: tc.cluster, Namespace: "ro", Params: testParams, CommonDocs: 3})
			var docs []Entry
			for i := range 50 {
				e := withAnchors(entry(testParams, fmt.Sprint("d", i), map[int]uint64{0: uint64(i % 5)}), anchors(fmt.Sprint("a", i%7), 4)...)
				e.Features = []byte(fmt.Sprint("features of ", i))
				docs = append(docs, e)
			}
			insert(t, s, docs...)
			masters := tc.masters(t)
			state := func() (keys, writes int64) {
				t.Helper()
				for _, c := range masters {
					n, err := c.DBSize(ctx).Result()
					if err != nil {
						t.Fatal(err)
					}
					// The server's count of writes since its last save:
					// any write, even one that leaves the size alone,
					// moves it.
					keys, writes = keys+n, writes+infoInt(t, c, "persistence", "rdb_changes_since_last_save")
				}
				return keys, writes
			}
			keys0, writes0 := state()
			var probes []Entry
			for i := range 40 {
				e := withAnchors(entry(testParams, fmt.Sprint("p", i), map[int]uint64{0: uint64(i % 5), 1: uint64(i)}), anchors(fmt.Sprint("a", i%7), 4)...)
				e.Features = []byte("probe")
				probes = append(probes, e)
			}
			rs, err := s.Lookup(ctx, probes)
			if err != nil {
				t.Fatal(err)
			}
			found := 0
			for _, r := range rs {
				found += len(r.Candidates)
			}
			if found == 0 {
				t.Fatal("the probes found nothing")
			}
			if keys1, writes1 := state(); keys1 != keys0 || writes1 != writes0 {
				t.Errorf("after Lookup: %d keys, %d writes since the last save; before: %d keys, %d writes", keys1, writes1, keys0, writes0)
			}
		})
	}
}

// topology is a Redis deployment the index runs on: one node, or a
// three-master cluster.
type topology struct {
	name    string
	addrs   []string
	cluster bool
}

// nodeAndCluster starts a single node and a three-master cluster.
func nodeAndCluster(t *testing.T) []topology {
	return []topology{{"node", []string{redistest.StartServer(t)}, false}, {"cluster", redistest.StartCluster(t), true}}
}

// masters returns a client of each master (closed with the test).
func (tp topology) masters(t *testing.T) []*redis.Client {
	t.Helper()
	addrs := tp.addrs
	if tp.cluster {
		cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: tp.addrs})
		defer cc.Close()
		addrs = nil
		var mu sync.Mutex
		if err := cc.ForEachMaster(context.Background(), func(_ context.Context, m *redis.Client) error {
			mu.Lock()
			defer mu.Unlock()
			addrs = append(addrs, m.Options().Addr)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	var out []*redis.Client
	for _, a := range addrs {
		c := redis.NewClient(&redis.Options{Addr: a})
		t.Cleanup(func() { c.Close() })
		out = append(out, c)
	}
	return out
}

// Script calls are cut at Batch documents and at maxOps bucket ops, and a
// document whose ops alone exceed the budget travels in a call of its own.
func TestCallChunks(t *testing.T) {
	ops := func(e *Entry) int { return len(e.Bands) }
	docs := func(sizes ...int) []Entry {
		out := make([]Entry, len(sizes))
		for i, n := range sizes {
			out[i].Bands = make([]uint64, n)
		}
		return out
	}
	for _, tt := range []struct {
		name   string
		docs   []Entry
		batch  int
		maxOps int
		want   []int
	}{
		{"none", nil, 4, 10, nil},
		{"one call", docs(3, 3, 3), 4, 10, []int{0}},
		{"by batch", docs(1, 1, 1, 1, 1), 2, 10, []int{0, 2, 4}},
		{"by ops", docs(4, 4, 4, 4), 8, 10, []int{0, 2}},
		{"exactly the budget", docs(5, 5, 5), 8, 10, []int{0, 2}},
		{"oversized document alone", docs(2, 30, 2), 8, 10, []int{0, 1, 2}},
		{"oversized first", docs(30, 1), 8, 10, []int{0, 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := callChunks(tt.docs, tt.batch, tt.maxOps, ops)
			if !slices.Equal(got, tt.want) {
				t.Errorf("callChunks = %v, want %v", got, tt.want)
			}
		})
	}
}
