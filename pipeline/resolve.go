package pipeline

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/verify"
)

// verdictRecord is what the index keeps of a verdict (RecordVerdicts): the
// decision, for replays and for the clusters of later duplicates. It
// leaves out what describes one input rather than the document (source,
// meta, params): a replay reports its own. Kind, duplicate_of, method and
// scores are those of the first match; a unique document has none. It
// keeps the first maxRecordMatches matches without their passages
// (Abridged says when something was left out), so a record costs a few
// hundred bytes whatever the event listed: every match with its passages
// cost 4–7.5 KB per stored document on real text (issue 23). It is
// stored in a binary encoding (record.go, about half its JSON); a unique
// document's record is about 10 bytes.
type verdictRecord struct {
	// Cluster is omitted when the document is its own cluster.
	Cluster string  `json:"c,omitempty"`
	Matches []Match `json:"m,omitempty"`
	// Abridged is set when the event had more matches, or passages, than
	// the record keeps.
	Abridged bool `json:"b,omitempty"`
	// Listed is how many matches the event listed when more than the
	// record keeps (0 otherwise).
	Listed     int `json:"l,omitempty"`
	Truncated  int `json:"t,omitempty"`
	Unverified int `json:"u,omitempty"`
	Settled    int `json:"v,omitempty"`
	CommonKeys int `json:"k,omitempty"`
	// CommonShare in thousandths.
	CommonShare int   `json:"h,omitempty"`
	At          int64 `json:"a"` // unix milliseconds
	// Sentence mode.
	Sentences            []SentenceMatch `json:"s,omitempty"`
	SentencesSkipped     int             `json:"ss,omitempty"`
	SentencesDropped     int             `json:"sd,omitempty"`
	SentencesBoilerplate int             `json:"sb,omitempty"`
}

// maxRecordMatches bounds the matches a verdict record keeps: the best
// (which gives the replay its kind, duplicate_of, method and scores) and
// the next ones, for a consumer that reads a replay's other matches.
const maxRecordMatches = 3

// abridge returns the first maxRecordMatches of ms without passages, and
// whether anything was left out. ms is not changed.
func abridge(ms []Match) ([]Match, bool) {
	cut := len(ms) > maxRecordMatches
	ms = ms[:min(len(ms), maxRecordMatches)]
	for _, m := range ms {
		if len(m.Passages) > 0 {
			cut = true
		}
	}
	if !cut {
		return ms, false
	}
	out := make([]Match, len(ms))
	for i, m := range ms {
		m.Passages = nil
		out[i] = m
	}
	return out, true
}

// record returns the verdict record of ev.
func record(ev *Event) *verdictRecord {
	ms, abridged := abridge(ev.Matches)
	listed := 0
	if len(ev.Matches) > len(ms) {
		listed = len(ev.Matches)
	}
	rec := &verdictRecord{Matches: ms, Abridged: abridged, Listed: listed, Truncated: ev.Truncated, Unverified: ev.Unverified, Settled: ev.Settled, At: ev.At.UnixMilli(),
		CommonKeys: ev.CommonKeys, CommonShare: int(math.Round(ev.CommonShare * 1000)),
		Sentences: ev.Sentences, SentencesSkipped: ev.SentencesSkipped, SentencesDropped: ev.SentenceMatchesDropped,
		SentencesBoilerplate: ev.SentencesBoilerplate}
	if ev.Cluster != ev.ID {
		rec.Cluster = ev.Cluster
	}
	return rec
}

// replayEvent is the event answering a repeated id: the recorded verdict,
// marked as a replay, with the repeated input's source.
func (p *Pipeline) replayEvent(doc Document, src Source, rec *verdictRecord) *Event {
	ev := p.recordedEvent(doc.ID, rec)
	ev.Source, ev.Replay = p.eventSource(doc, src), true
	return ev
}

// recordedEvent is the event of document id that verdict record rec
// gives: its kind, duplicate_of, method and scores from its best match.
func (p *Pipeline) recordedEvent(id string, rec *verdictRecord) *Event {
	ev := &Event{
		ID:          id,
		Kind:        KindUnique,
		Cluster:     rec.Cluster,
		Matches:     rec.Matches,
		Params:      p.cfg.Params,
		At:          time.UnixMilli(rec.At).UTC(),
		Abridged:    rec.Abridged,
		Truncated:   rec.Truncated,
		Unverified:  rec.Unverified,
		Settled:     rec.Settled,
		CommonKeys:  rec.CommonKeys,
		CommonShare: float64(rec.CommonShare) / 1000,

		Sentences:              rec.Sentences,
		SentencesSkipped:       rec.SentencesSkipped,
		SentenceMatchesDropped: rec.SentencesDropped,
		SentencesBoilerplate:   rec.SentencesBoilerplate,
	}
	if ev.Cluster == "" {
		ev.Cluster = id
	}
	if len(rec.Matches) > 0 {
		b := rec.Matches[0]
		sc := b.Scores
		ev.Kind, ev.DuplicateOf, ev.Method, ev.Scores = b.Kind, b.ID, b.Method, &sc
	}
	return ev
}

func (p *Pipeline) eventSource(doc Document, src Source) EventSource {
	es := EventSource{URL: doc.URL, Meta: doc.Meta, Source: src}
	if !doc.TS.IsZero() {
		ts := doc.TS
		es.TS = &ts
	}
	return es
}

// resolveBatch turns consecutive verification results into their outputs,
// in order, and records the verdicts they decided in the index (in one
// call, one round trip on a single Redis node, unless a document has to
// wait for an earlier one's verdict: see pending), before any output
// leaves: an output is never acknowledged before its verdict is recorded.
// Only the index being unavailable (or misconfigured) returns an error.
func (p *Pipeline) resolveBatch(ctx context.Context, rs []verify.Result, fl *inflight, outs []Output) ([]Output, error) {
	pv := &pending{}
	for _, r := range rs {
		j := r.Tag.(*job)
		if j.dead == nil {
			// Registered in flight by the index stage: released once the
			// verdict is recorded (or the run fails).
			defer fl.release(j)
		}
		o, rec, err := p.resolve(ctx, r, fl, pv)
		if err != nil {
			return outs, err
		}
		if j.feats != nil {
			// Nothing reads the document's stored view after its output.
			p.stored.Put(j.feats)
			j.feats = nil
		}
		if j.seq != nil {
			seq := j.seq
			p.seqs.Put(&seq)
			j.seq = nil
		}
		if rec != nil {
			pv.seqs, pv.recs = append(pv.seqs, j.res.Seq), append(pv.recs, rec)
		}
		outs = append(outs, o)
		if len(j.revise) > 0 {
			// Revised before the next document is resolved, as a serial
			// run would: a later document naming the page takes its
			// revised cluster, however the stream is cut into batches.
			// The page's verdict may be among those pending.
			if err := p.recordPending(ctx, pv); err != nil {
				return outs, err
			}
			if err := p.reviseEarlier(ctx, j, &outs[len(outs)-1]); err != nil { // revise.go
				return outs, err
			}
		}
	}
	if err := p.recordPending(ctx, pv); err != nil {
		return outs, err
	}
	return outs, p.recordCorrections(ctx, outs) // correct.go
}

// pending are the verdicts a batch decided and has not recorded yet.
type pending struct {
	seqs []uint64
	recs [][]byte
}

// recordPending records the verdicts pv holds and empties it. A document
// that is no longer stored (deleted or expired since its lookup) records
// nothing; its verdict still stands. Recorded by Seq, a verdict never
// lands on a document sent again under its id.
//
// Before a document waits for an earlier one's verdict (clustersOf), the
// verdicts decided before it in its batch are recorded: the earlier
// document's member may itself be waiting for one of them (two members,
// each with a batch holding a document the other's next one duplicates),
// and would otherwise wait until Config.SettleWait ran out.
func (p *Pipeline) recordPending(ctx context.Context, pv *pending) error {
	if pv == nil || len(pv.seqs) == 0 {
		return nil
	}
	err := p.retry(ctx, "record-verdict", func(ctx context.Context) error {
		_, err := p.ix.RecordVerdicts(ctx, pv.seqs, pv.recs)
		return err
	})
	pv.seqs, pv.recs = nil, nil
	return err
}

// resolve turns verification results into the document's output and
// remembers the cluster; rec is the encoded verdict to record, nil when
// nothing is to be recorded (a replay, a dead letter). A failure that is
// the document's own (a panic, an event that cannot be encoded or is too
// large) becomes its dead letter; only the index being unavailable (or
// misconfigured) returns an error.
func (p *Pipeline) resolve(ctx context.Context, r verify.Result, fl *inflight, pv *pending) (Output, []byte, error) {
	j := r.Tag.(*job)
	o := Output{Tag: j.item.Tag}
	if j.dead != nil {
		o.Dead = j.dead
		return o, nil, nil
	}
	if j.del != nil {
		o.Event = p.deletedEvent(j) // delete.go
		return o, nil, nil
	}
	if j.res.Gone {
		// The record of a document deleted after it was stored, read
		// again (a member crashed before committing it): it is answered
		// as the delete was, and nothing is stored.
		ev := p.DeletedEvent(j.item.Doc, j.item.Source, true)
		ev.Replay = true
		o.Event = ev
		return o, nil, nil
	}
	if r.Err != nil {
		return p.reject(j, o, ReasonInternal, r.Err)
	}
	doc := j.item.Doc
	rec, err := p.recorded(ctx, j)
	if errors.Is(err, errBadVerdict) {
		// Nothing is recorded: the stored verdict stands until it is
		// removed, and every replay of the id fails the same way.
		return p.reject(j, o, ReasonBadVerdict, err)
	}
	if err != nil {
		return o, nil, err
	}
	if rec != nil {
		j.rec = rec
		ev := p.replayEvent(doc, j.item.Source, rec)
		p.clusters.put(j.res.Seq, ev.Cluster)
		if err := p.check(ev); err != nil {
			return p.reject(j, o, reasonOf(err), err)
		}
		if p.emits(ev) {
			o.Event = ev
		}
		return o, nil, nil
	}
	if j.first != nil {
		// The first occurrence of this id in the run was rejected after
		// it reached the index: so is this one.
		d := j.first.dead
		if d == nil {
			d = &DeadLetter{Reason: ReasonInternal, Error: "first occurrence has no verdict"}
		}
		return p.reject(j, o, d.Reason, fmt.Errorf("first occurrence of id %q was rejected: %s", doc.ID, d.Error))
	}

	ev, later := p.decidedEvent(j, r)
	if ev.DuplicateOf != "" {
		c, err := p.clusterOf(ctx, j, ev.DuplicateOf, fl, pv)
		if errors.Is(err, errBadVerdict) {
			// The earlier document's cluster is unknown: naming it would
			// split the cluster (or merge it with the wrong one), so this
			// document is not decided either; a replay decides it again.
			return p.reject(j, o, ReasonBadVerdict, err)
		}
		if err != nil {
			return o, nil, err
		}
		ev.Cluster = c
	}
	if err := p.check(ev); err != nil {
		// Nothing is recorded: a replay decides again (and fails again).
		return p.reject(j, o, reasonOf(err), err)
	}
	j.rec = record(ev)
	b := marshalRecord(j.rec)
	// Remembered now: a later document of the same batch may name it.
	p.clusters.put(j.res.Seq, ev.Cluster)
	if p.emits(ev) {
		o.Event = ev
	}
	for _, m := range later {
		o.Corrections = append(o.Corrections, p.correction(ev, m))
		o.CorrectionSeqs = append(o.CorrectionSeqs, seqOf(j, m.ID))
	}
	return o, b, nil
}

// decidedEvent is the event verification decided for a new document (j,
// with its verification results r): its matches, best first and at most
// Config.MaxMatches, the document's kind and method from the best, and
// its sentence matches; later are the matches with documents stored after
// it, reported as corrections. The cluster is the document's own until
// resolve names the earlier one's.
func (p *Pipeline) decidedEvent(j *job, r verify.Result) (ev *Event, later []Match) {
	doc := j.item.Doc
	ev = &Event{
		ID:          doc.ID,
		Kind:        KindUnique,
		Cluster:     doc.ID,
		Source:      p.eventSource(doc, j.item.Source),
		Params:      p.cfg.Params,
		At:          p.cfg.Now().UTC(),
		Truncated:   j.res.Truncated,
		Unverified:  j.unverified,
		CommonKeys:  j.res.Common,
		CommonShare: math.Round(j.commonShare*1000) / 1000,
	}
	if j.res.Copy != "" {
		// Equal content digests: the same normalized text, nothing to
		// verify. An earlier copy decides; a later one (Redis Cluster,
		// admitted concurrently) is reported as a correction.
		one := 1.0
		m := Match{ID: j.res.Copy, Kind: KindExact, Method: string(verify.MethodExact), Scores: verify.Scores{Jaccard: &one}}
		if j.res.CopySeq < j.res.Seq {
			ev.Matches = append(ev.Matches, m)
		} else {
			later = append(later, m)
		}
	}
	hot := p.hotSentences(j)
	for _, h := range hot {
		if h {
			ev.SentencesBoilerplate++
		}
	}
	for i, v := range r.Verdicts {
		if i < len(j.candFeats) && j.candFeats[i] == nil {
			// Its stored features did not decode (written by something
			// else): not verified.
			ev.Unverified++
			continue
		}
		if i < j.earlier && i < len(j.candFeats) {
			ev.Sentences = p.sentenceMatches(ev.Sentences, j.feats, j.candFeats[i], j.cands[i].ID, v.Sentences, hot)
		}
		if v.Settled {
			ev.Settled++
			continue
		}
		if v.Settled {
			ev.Settled++ // verify.settle_after
			continue
		}
		if v.Kind == verify.Distinct {
			continue
		}
		m := Match{ID: j.cands[i].ID, Kind: string(v.Kind), Method: v.Check, Scores: v.Scores}
		if i < len(j.candFeats) {
			m.Passages = p.passages(j.feats, j.candFeats[i], v.Passages)
			a, b := passageWords(j.feats, j.candFeats[i], v.Passages, p.cfg.Sketch.Shingle, j.siteTemplate, j.candTemplates[j.cands[i].Seq])
			m.Share, m.MatchShare = a.share(), b.share()
			if v.Kind == verify.Partial && p.knownFrame(j, i) && p.mainNear(j.feats, j.candFeats[i], a, b) {
				m.Kind = string(verify.Near) // template.go
			}
		}
		if i < j.earlier {
			ev.Matches = append(ev.Matches, m)
		} else {
			later = append(later, m)
		}
	}
	sortMatches(ev.Matches, j.cands)
	if len(ev.Matches) > 0 {
		b := ev.Matches[0]
		ev.Kind, ev.DuplicateOf, ev.Method = b.Kind, b.ID, b.Method
		sc := b.Scores
		ev.Scores = &sc
	}
	if len(ev.Matches) > p.cfg.MaxMatches {
		ev.Matches = ev.Matches[:p.cfg.MaxMatches]
	}
	if j.feats != nil {
		ev.SentencesSkipped = j.feats.Sentences.Skipped
	}
	ev.Sentences, ev.SentenceMatchesDropped = capSentences(ev.Sentences, p.sentenceMax)
	return ev, later
}

// passages maps aligned shingle positions of doc against cand to code
// point ranges of their texts.
func (p *Pipeline) passages(doc, cand *sketch.Features, al []verify.AlignPassage) []Passage {
	if len(al) == 0 || doc == nil || cand == nil {
		return nil
	}
	k := p.cfg.Sketch.Shingle
	out := make([]Passage, 0, len(al))
	for _, a := range al {
		off, n, ok := doc.Passage.Range(a.A0, a.A1, k)
		moff, mn, mok := cand.Passage.Range(a.B0, a.B1, k)
		if ok && mok {
			out = append(out, Passage{Offset: off, Length: n, MatchOffset: moff, MatchLength: mn})
		}
	}
	return out
}

// recorded returns the verdict that answers j when it repeats an id: the
// one the index returned, the one the first occurrence in this run
// recorded, or, for a replay the index had no verdict for, one recorded
// since (by this run or another instance). nil means j is decided here.
func (p *Pipeline) recorded(ctx context.Context, j *job) (*verdictRecord, error) {
	switch {
	case !j.res.Replay:
		return nil, nil
	case j.res.Verdict != nil:
		return decodeRecord(j.item.Doc.ID, j.res.Verdict)
	case j.first != nil:
		return j.first.rec, nil
	}
	var recs [][]byte
	err := p.retry(ctx, "verdicts", func(ctx context.Context) error {
		var err error
		recs, err = p.ix.Verdicts(ctx, []uint64{j.res.Seq})
		return err
	})
	if err != nil || len(recs) != 1 || len(recs[0]) == 0 {
		return nil, err
	}
	return decodeRecord(j.item.Doc.ID, recs[0])
}

// errBadVerdict is wrapped by decodeRecord for stored verdict bytes that
// are not a verdict record (written by something else, or damaged).
var errBadVerdict = errors.New("stored verdict does not decode")

// decodeRecord reads the verdict recorded for id: the binary encoding
// (record.go) or, for records written before it and by corrections, a
// JSON object. Bytes that are neither, or a record without the decision
// time ("a", which every record has), are an error wrapping
// errBadVerdict: read as an empty record they would call the document
// unique, whatever was decided. Unknown fields are ignored, so records of
// a newer version still read.
func decodeRecord(id string, b []byte) (*verdictRecord, error) {
	if len(b) > 0 && b[0] == recordBinary {
		rec, err := unmarshalRecord(b[1:])
		if err != nil {
			return nil, fmt.Errorf("%w: id %q: %v", errBadVerdict, id, err)
		}
		return rec, nil
	}
	// The outer At, shallower than the embedded record's, receives "a";
	// nil means the field is missing (or null).
	var s struct {
		*verdictRecord
		At *int64 `json:"a"`
	}
	s.verdictRecord = &verdictRecord{}
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%w: id %q: %v", errBadVerdict, id, err)
	}
	if s.At == nil {
		return nil, fmt.Errorf("%w: id %q: no decision time (\"a\") in %.64q", errBadVerdict, id, b)
	}
	s.verdictRecord.At = *s.At
	return s.verdictRecord, nil
}

// errEventTooLarge is wrapped by check for an event over MaxEventBytes.
var errEventTooLarge = errors.New("event too large")

// check encodes ev as the sinks will and reports an event that cannot be
// encoded or exceeds MaxEventBytes even shortened (fit.go: evidence left
// out in a documented order until it fits). An event whose encoding is bounded well
// below the limit is not encoded twice: its strings are valid to encode
// (encoding/json replaces bad UTF-8), its times lie in years 0–9999, its
// scores are finite and its meta was decoded from JSON, so only the size
// could fail.
func (p *Pipeline) check(ev *Event) error {
	if maxEncoded(ev) <= p.cfg.MaxEventBytes {
		return nil
	}
	b, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("encode event: %w", err)
	}
	if n := shorten(ev, len(b), p.cfg.MaxEventBytes); n > p.cfg.MaxEventBytes {
		return fmt.Errorf("%w: %d bytes, %d with its evidence left out, > limit %d (pipeline.max_event_bytes, or what the output topic takes)",
			errEventTooLarge, len(b), n, p.cfg.MaxEventBytes)
	}
	return nil
}

// maxEncoded bounds the length of ev's JSON encoding: fixed fields and
// scores in 2 KiB, and at most six bytes per byte of text (\u escapes).
func maxEncoded(ev *Event) int {
	const fixed, perMatch = 2048, 512
	n := fixed + 6*(len(ev.ID)+len(ev.DuplicateOf)+len(ev.Cluster)+len(ev.Method)+len(ev.Source.URL)+
		len(ev.Source.File)+len(ev.Source.Topic)+len(ev.Source.Meta)+len(ev.Params.Profile)+len(ev.Params.Index)+
		len(ev.Params.Version)+len(ev.Params.Method))
	for _, m := range ev.Matches {
		n += perMatch + 6*(len(m.ID)+len(m.Kind)+len(m.Method))
	}
	const perSentence = 256
	for _, s := range ev.Sentences {
		n += perSentence + 6*(len(s.MatchID)+len(s.Edit))
	}
	return n
}

func reasonOf(err error) Reason {
	if errors.Is(err, errEventTooLarge) {
		return ReasonEventTooLarge
	}
	return ReasonUnencodable
}

// reject makes j's output a dead letter after it reached the index.
// Nothing is recorded for it: a later duplicate of it finds no cluster
// to wait for (an empty cluster in the cache: unknown, the document
// stands for its own).
func (p *Pipeline) reject(j *job, o Output, r Reason, err error) (Output, []byte, error) {
	j.dead = p.deadLetter(j.item, &InvalidError{Reason: r, ID: j.item.Doc.ID, Detail: err.Error()})
	o.Dead = j.dead
	if j.res.Seq != 0 && r != ReasonBadVerdict { // a bad verdict is recorded: read, it fails again
		if _, ok := p.clusters.get(j.res.Seq); !ok {
			p.clusters.put(j.res.Seq, "")
		}
	}
	return o, nil, nil
}

// clusterOf returns the cluster of id, an earlier document j matched:
// the one its recorded verdict names (the cluster cache, the verdict read
// with the candidate, or the index; clusters.go), the same for
// every member and after a restart. A document whose cluster stays
// unknown (still in flight past Config.SettleWait, or removed since)
// stands for its own cluster. A recorded verdict that does not decode is
// an error wrapping errBadVerdict: retrying cannot help, and guessing
// would misplace the duplicate, so the caller rejects the duplicate
// instead.
func (p *Pipeline) clusterOf(ctx context.Context, j *job, id string, fl *inflight, pv *pending) (string, error) {
	seq := seqOf(j, id)
	if seq == 0 {
		return id, nil
	}
	if c, ok := p.clusters.get(seq); ok {
		return cmp.Or(c, id), nil // "": rejected, no verdict recorded
	}
	for _, c := range j.cands {
		if c.Seq == seq && len(c.Verdict) > 0 {
			if _, err := decodeRecord(id, c.Verdict); err != nil {
				return "", err
			}
			if cl, ok := p.clusterOfRecord(seq, id, c.Verdict); ok {
				return cl, nil
			}
		}
	}
	known, bad, err := p.clustersOf(ctx, j, []uint64{seq}, fl, pv)
	if err != nil {
		return "", err
	}
	if c, ok := known[seq]; ok {
		return c, nil
	}
	if bad[seq] {
		return "", fmt.Errorf("%w: id %q", errBadVerdict, id)
	}
	return id, nil
}

// seqOf returns the Seq of the candidate (or exact copy) of j named id, 0
// when none is.
func seqOf(j *job, id string) uint64 {
	for _, c := range j.cands {
		if c.ID == id {
			return c.Seq
		}
	}
	if j.res.Copy == id {
		return j.res.CopySeq
	}
	return 0
}

// correction is the event a later document would have produced had it seen
// ev's document: it names the later document as a duplicate of this one.
// Scores are turned around to read from the later document's side.
func (p *Pipeline) correction(ev *Event, m Match) *Event {
	sc := m.Scores
	sc.ContainmentAB, sc.ContainmentBA = sc.ContainmentBA, sc.ContainmentAB
	return &Event{
		ID:          m.ID,
		Kind:        m.Kind,
		DuplicateOf: ev.ID,
		Cluster:     ev.Cluster,
		Method:      m.Method,
		Scores:      &sc,
		Matches:     []Match{{ID: ev.ID, Kind: m.Kind, Method: m.Method, Scores: sc}},
		Params:      ev.Params,
		At:          ev.At,
		Correction:  true,
	}
}
