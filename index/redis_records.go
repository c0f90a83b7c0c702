package index

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// Features implements [Store]: the features of each record, without the
// keys record it carries (featKeys).
func (r *Redis) Features(ctx context.Context, seqs []uint64) ([][]byte, error) {
	out, err := r.records(ctx, "features", r.scripts.features, seqs)
	if err != nil {
		return nil, err
	}
	for i, v := range out {
		if v != nil {
			f, _, ok := unframeFeatures(v)
			if !ok {
				return nil, fmt.Errorf("index: features of seq %d: cut short", seqs[i])
			}
			out[i] = f
		}
	}
	return out, nil
}

// Verdicts implements [Store].
func (r *Redis) Verdicts(ctx context.Context, seqs []uint64) ([][]byte, error) {
	return r.records(ctx, "verdicts", r.scripts.verdicts, seqs)
}

// records runs a per-document record script (luaSeqRecords) over seqs:
// nil for a document that is not stored, else its record ("" for none).
func (r *Redis) records(ctx context.Context, what string, s *redis.Script, seqs []uint64) ([][]byte, error) {
	if err := r.check(ctx); err != nil {
		return nil, err
	}
	out := make([][]byte, len(seqs))
	calls, idx := r.bySeqShard(seqs, s, func(args []any, i int) []any {
		return append(args, strconv.FormatUint(seqs[i], 10))
	})
	if err := r.run(ctx, calls); err != nil {
		return nil, r.wrap(ctx, what, err)
	}
	for ci, c := range calls {
		reply, err := c.cmd.Slice()
		if err != nil {
			return nil, r.wrap(ctx, what, err)
		}
		if len(reply) != len(idx[ci]) {
			return nil, fmt.Errorf("index: %s: malformed script reply (%d values for %d seqs)", what, len(reply), len(idx[ci]))
		}
		for k, i := range idx[ci] {
			switch v := reply[k].(type) {
			case nil:
			case string:
				out[i] = []byte(v)
			default:
				return nil, fmt.Errorf("index: %s: malformed script reply (%T)", what, v)
			}
		}
	}
	return out, nil
}

// RecordVerdicts implements [Store]: one script call per record shard of
// the documents (one on a single node), all in one round trip.
func (r *Redis) RecordVerdicts(ctx context.Context, seqs []uint64, verdicts [][]byte) ([]bool, error) {
	if err := r.check(ctx); err != nil {
		return nil, err
	}
	if err := r.writable("record verdicts"); err != nil {
		return nil, err
	}
	if len(seqs) != len(verdicts) {
		return nil, fmt.Errorf("%w: %d seqs, %d verdicts", ErrInvalid, len(seqs), len(verdicts))
	}
	return r.recordOnce(ctx, "record verdicts", r.scripts.verdict, seqs, verdicts)
}

// recordOnce runs a record-writing script (luaSeqRecordOnce) over seqs
// and their records: stored[i] is false when seqs[i] is not stored.
func (r *Redis) recordOnce(ctx context.Context, what string, s *redis.Script, seqs []uint64, recs [][]byte) ([]bool, error) {
	calls, idx := r.bySeqShard(seqs, s, func(args []any, i int) []any {
		v := recs[i]
		if v == nil {
			v = []byte{}
		}
		return append(args, strconv.FormatUint(seqs[i], 10), v)
	})
	if err := r.run(ctx, calls); err != nil {
		return nil, r.wrap(ctx, what, err)
	}
	stored := make([]bool, len(seqs))
	for ci, c := range calls {
		reply, err := c.cmd.Text()
		if err != nil || len(reply) != len(idx[ci]) {
			return nil, r.wrap(ctx, what, cmp.Or(err, errors.New("malformed script reply")))
		}
		for k, i := range idx[ci] {
			stored[i] = reply[k] == '1'
		}
	}
	return stored, nil
}

// featKeys marks a features record of the Redis store ('f') that carries
// the document's keys record (delete.go) before its features: since
// layout version 8 a document's keys record is kept in its features
// record rather than a record ('k') of its own, which saves what Redis
// spends on a hash field beside the bytes (on real text 321 → about 245
// bytes per document for the keys record):
//
//	byte     featKeys (0)
//	varint   n, then n bytes: the keys record
//	         the features, exactly as given
//
// No features encoding starts with a zero byte (sketch's start with
// their version, 2 or more), and features that do (opaque bytes of a
// caller) are framed even without a keys record, so a record is framed
// exactly when its first byte is featKeys. An exact copy, which keeps no
// features, keeps its keys record in 'k', as do records written by a
// build of layout 7 (Remove reads 'k' first).
const featKeys = 0

// frameFeatures returns the 'f' value of a document with features feat
// and keys record keys.
func frameFeatures(feat, keys []byte) []byte {
	if len(keys) == 0 && (len(feat) == 0 || feat[0] != featKeys) {
		return feat
	}
	b := make([]byte, 0, 1+binary.MaxVarintLen64+len(keys)+len(feat))
	b = append(b, featKeys)
	b = binary.AppendUvarint(b, uint64(len(keys)))
	b = append(b, keys...)
	return append(b, feat...)
}

// unframeFeatures splits an 'f' value into the features and the keys
// record it carries (nil when none); ok is false when a framed value is
// cut short.
func unframeFeatures(v []byte) (feat, keys []byte, ok bool) {
	if len(v) == 0 || v[0] != featKeys {
		return v, nil, true
	}
	n, w := binary.Uvarint(v[1:])
	if w <= 0 || n > uint64(len(v)-1-w) {
		return nil, nil, false
	}
	keys = v[1+w : 1+w+int(n)]
	if len(keys) == 0 {
		keys = nil
	}
	return v[1+w+int(n):], keys, true
}

// CarriedKeys returns the keys record a features record of the Redis
// store carries (featKeys), or nil. It reads what bench/bytesbench
// reports.
func CarriedKeys(v []byte) []byte {
	_, keys, _ := unframeFeatures(v)
	return keys
}

// digestRefs flags a keys record (version 4) carried in a features record
// whose SimHash, I-Match or content digest (of those its flags 1, 2 and 4
// name) is not written out but found in the features beside it: flag
// digestRefs<<i for digest i (16 SimHash, 32 I-Match, 64 content), in
// its place a varint, the offset in the features of the same bytes. The
// web profile's features hold the content digest (sketch's header), which
// saves 15 of the record's 245 bytes.
const digestRefs = 16

// digestLens are the lengths of the SimHash, I-Match and content digests.
var digestLens = [3]int{8, 20, 16}

// featuresRecord returns the 'f' value of e: its keys record, with its
// digests referenced in the features when they are there (digestRefs),
// framed before its features (featKeys).
func (r *Redis) featuresRecord(e *Entry) []byte {
	return frameFeatures(e.Features, r.refDigests(r.encodeKeys(e), e.Features))
}

// digestsAt returns where the digests of a version 4 keys record k
// start, after its header and band groups.
func (r *Redis) digestsAt(k []byte) int {
	if k[1]&laneOnly != 0 {
		return 3
	}
	return 3 + (maxGroupBits*r.p.Bands+7)/8
}

// refDigests returns keys record k (version 4) with those of its digests
// that feat holds as offsets in feat.
func (r *Redis) refDigests(k, feat []byte) []byte {
	if len(k) < 3 || k[0] != keysGroupsVersion || len(k) < r.digestsAt(k) {
		return k
	}
	at := r.digestsAt(k)
	out := append(make([]byte, 0, len(k)), k[:at]...)
	p := at
	for i, n := range digestLens {
		if k[1]&(1<<i) == 0 {
			continue
		}
		if len(k) < p+n {
			return k
		}
		if o := bytes.Index(feat, k[p:p+n]); o >= 0 {
			out[1] |= digestRefs << i
			out = binary.AppendUvarint(out, uint64(o))
		} else {
			out = append(out, k[p:p+n]...)
		}
		p += n
	}
	return append(out, k[p:]...)
}

// inlineDigests is refDigests' inverse: k with its digests written out,
// read from feat. ok is false when a reference points outside feat or the
// record is cut short.
func (r *Redis) inlineDigests(k, feat []byte) ([]byte, bool) {
	if len(k) < 3 || k[1]&(7*digestRefs) == 0 {
		return k, true
	}
	if k[0] != keysGroupsVersion || len(k) < r.digestsAt(k) {
		return nil, false
	}
	at := r.digestsAt(k)
	out := append(make([]byte, 0, len(k)+44), k[:at]...)
	out[1] &^= 7 * digestRefs
	b := k[at:]
	for i, n := range digestLens {
		switch {
		case k[1]&(digestRefs<<i) != 0:
			o, w := binary.Uvarint(b)
			if w <= 0 || o > uint64(len(feat)) || uint64(len(feat))-o < uint64(n) {
				return nil, false
			}
			out = append(out, feat[o:o+uint64(n)]...)
			b = b[w:]
		case k[1]&(1<<i) != 0:
			if len(b) < n {
				return nil, false
			}
			out = append(out, b[:n]...)
			b = b[n:]
		}
	}
	return append(out, b...), true
}
