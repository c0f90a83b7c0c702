package stream

import (
	"encoding/json"
	"time"
)

// Kind of an event: a duplicate kind (the verify.Kind of the same name),
// unique, or deleted.
const (
	KindExact   = "exact"
	KindNear    = "near"
	KindPartial = "partial"
	KindUnique  = "unique"
	// KindDeleted is the kind of the event that answers a delete (a Kafka
	// tombstone, Item.Delete): the document was removed from the index,
	// or, with NotFound, was not stored (never seen, expired, or removed
	// already: a tombstone read twice).
	KindDeleted = "deleted"
)

// Event is one verdict, the output contract (docs/event.schema.json). A
// duplicate has DuplicateOf, the earlier document it duplicates best, and
// Cluster, the first-seen representative of its group; a unique document
// is its own cluster.
type Event struct {
	ID          string      `json:"id"`
	Kind        string      `json:"kind"`
	DuplicateOf string      `json:"duplicate_of,omitempty"`
	Cluster     string      `json:"cluster"`
	Method      string      `json:"method,omitempty"`
	Scores      *Scores     `json:"scores,omitempty"`
	Matches     []Match     `json:"matches,omitempty"`
	Source      EventSource `json:"source"`
	Params      Params      `json:"params"`
	At          time.Time   `json:"at"`
	// Replay marks the first verdict of an id seen again (at-least-once
	// delivery); nothing new was stored. With kind deleted it marks the
	// record of a document deleted after it was stored, read again: the
	// document is not stored again.
	Replay bool `json:"replay,omitempty"`
	// Abridged marks an event that leaves evidence out: a replay, whose
	// matches are those the index keeps of the first verdict (the first
	// three, without passages), or an event shortened to fit
	// Config.MaxEventBytes (pipeline.max_event_bytes, and what the output
	// topic takes), which left out, in this order and only as far as
	// needed, the passages of the matches but the best, those matches,
	// sentence matches and the best match's passages (pipeline/fit.go).
	Abridged bool `json:"abridged,omitempty"`
	// Truncated counts candidates withheld by full SimHash buckets.
	Truncated int `json:"truncated,omitempty"`
	// CommonKeys counts the document's index keys (LSH bands, passage
	// anchors, sentence keys) that are common: held by index.common_docs
	// documents already (a site template, a notice, a licence clause, a
	// text copied that many times). They yield no evidence, only their
	// exemplar as a candidate.
	CommonKeys int `json:"common_keys,omitempty"`
	// CommonShare is the share of the document's text inside common
	// passages. Up to 2/3 it is left out when the document is verified
	// (resemblance, containment and passages are about the rest); a
	// document that is mostly common text is verified whole.
	CommonShare float64 `json:"common_share,omitempty"`
	// Unverified counts candidates that were found but not verified:
	// ranked below verify.max_candidates, or whose stored features were
	// gone or unreadable by the time they were fetched.
	Unverified int `json:"unverified,omitempty"`
	// Settled counts earlier candidates left unverified because
	// verify.settle_after better-ranked ones were verified first and found
	// near or exact duplicates (off by default: every candidate is
	// verified). Which ones are settled depends only on the candidates
	// and their verdicts. A verdict recorded by an older version may also
	// count candidates it settled by cluster (pipeline/clusters.go).
	Settled int `json:"settled,omitempty"`
	// Correction marks an event about another, later document that was
	// admitted concurrently and did not see this one (Redis Cluster): it
	// is the verdict a serial run would have given that document. Pair
	// events are idempotent on (id, duplicate_of).
	Correction bool `json:"correction,omitempty"`
	// Revised marks an event that replaces the document's earlier one: a
	// later page of its site showed that text a partial link of it rested
	// on is the site's template, and verified again without it the link
	// no longer holds (pipeline/revise.go). It lists what the document's
	// recorded verdict now holds, and Withdrawn the ids of the links
	// taken back. A consumer keyed by id keeps the latest event.
	Revised bool `json:"revised,omitempty"`
	// Withdrawn are the ids of the matches a revision took back.
	Withdrawn []string `json:"withdrawn,omitempty"`
	// RevisedBy is the id of the document whose template showed it.
	RevisedBy string `json:"revised_by,omitempty"`
	// NotFound marks a KindDeleted event whose id was not stored: never
	// seen, expired, or removed already (a tombstone read twice).
	NotFound bool `json:"not_found,omitempty"`
	// Sentences are the document's sentences that match sentences of
	// earlier documents (pipeline.granularity: sentence), in order of
	// the document's offsets, the most similar first for each sentence.
	// In sentence mode a document with matching sentences has an event
	// even when, as a whole, it is unique.
	Sentences []SentenceMatch `json:"sentences,omitempty"`
	// SentencesSkipped counts the document's sentences not matched:
	// shorter or longer than the bounds, or beyond pipeline.max_sentences.
	SentencesSkipped int `json:"sentences_skipped,omitempty"`
	// SentenceMatchesDropped counts sentence matches beyond
	// pipeline.max_sentence_matches for their sentence.
	SentenceMatchesDropped int `json:"sentence_matches_dropped,omitempty"`
	// SentencesBoilerplate counts the document's sentences left unmatched
	// as boilerplate: an index key of theirs is common (index.common_docs
	// documents already share it: navigation, legal footers).
	SentencesBoilerplate int `json:"sentences_boilerplate,omitempty"`
}

// SentenceMatch is one of the document's sentences and a near-duplicate
// sentence of an earlier document: [Offset, Offset+Length) of this
// document's text and [MatchOffset, MatchOffset+MatchLength) of the match's,
// in Unicode code points of the texts as received (for html input, of the
// extracted main text); their edit similarity (1 − normalized edit
// distance) and the kind of edit that separates them.
type SentenceMatch struct {
	Offset      int     `json:"offset"`
	Length      int     `json:"length"`
	MatchID     string  `json:"match_id"`
	MatchOffset int     `json:"match_offset"`
	MatchLength int     `json:"match_length"`
	Similarity  float64 `json:"similarity"`
	// Edit is identical, copy_edit (case, punctuation, white space,
	// spelling), number_or_date_changed (only numbers, dates or units
	// differ) or reworded.
	Edit string `json:"edit"`
}

// Scores are the scores a verification computed. A field is set only when
// its check ran and computed the score exactly, so the JSON form lists
// exactly those: a check that was skipped, or that stopped early because
// its threshold was out of reach, leaves its score out.
type Scores struct {
	// Jaccard is the shingle resemblance |A ∩ B| / |A ∪ B|.
	Jaccard *float64 `json:"jaccard,omitempty"`
	// ContainmentAB is the fraction of the document's shingles found in
	// the candidate; ContainmentBA the reverse.
	ContainmentAB *float64 `json:"containment_ab,omitempty"`
	ContainmentBA *float64 `json:"containment_ba,omitempty"`
	// Hamming is the SimHash distance in bits.
	Hamming *int `json:"hamming,omitempty"`
	// IMatchEqual reports whether the I-Match digests are equal.
	IMatchEqual *bool `json:"imatch_equal,omitempty"`
	// LCS is the length of the longest common subsequence of unique words;
	// CS and ITS are its DUPNIQ normalisations.
	LCS *int     `json:"lcs,omitempty"`
	CS  *float64 `json:"lcs_cs,omitempty"`
	ITS *float64 `json:"lcs_its,omitempty"`
	// Edit is the normalized edit similarity of the texts.
	Edit *float64 `json:"edit,omitempty"`
	// Aligned is the number of the document's shingle positions inside
	// passages aligned with the candidate; AlignedAB is their share of the
	// document's positions, AlignedBA the candidate's share inside the
	// same passages (two-way containment of the copied text).
	Aligned   *int     `json:"aligned,omitempty"`
	AlignedAB *float64 `json:"aligned_ab,omitempty"`
	AlignedBA *float64 `json:"aligned_ba,omitempty"`
}

// Match is one verified earlier document, with the check that decided.
type Match struct {
	ID     string `json:"id"`
	Kind   string `json:"kind"`
	Method string `json:"method"`
	Scores Scores `json:"scores"`
	// Passages are the copied ranges of a near or partial match (passage
	// lane on): maximal aligned passages, in order of the document's
	// offsets, at most verify.MaxPassages (the longest).
	Passages []Passage `json:"passages,omitempty"`
	// Share is the share of the document's words inside the match's
	// aligned passages (those listed in Passages), and
	// MatchShare that of the match's words: how much of each text the
	// shared passages are, so that a copy of most of a page (high on
	// both sides) can be told from a paragraph quoted by a page of its
	// own (low on the document's side) without reading the texts. Both
	// are shares of the main text: the words of each side's site template
	// (pipeline/template.go; the match's as its template record says) count on
	// neither side of the ratio. Both are absent when no passage was
	// aligned (passage lane off, or an exact match).
	Share      float64 `json:"share,omitempty"`
	MatchShare float64 `json:"match_share,omitempty"`
}

// Passage is one copied range: [Offset, Offset+Length) of the document's
// text against [MatchOffset, MatchOffset+MatchLength) of the match's, in
// Unicode code points of the text as received (for html input, of the
// extracted main text).
type Passage struct {
	Offset      int `json:"offset"`
	Length      int `json:"length"`
	MatchOffset int `json:"match_offset"`
	MatchLength int `json:"match_length"`
}

// EventSource is where the document came from.
type EventSource struct {
	URL  string          `json:"url,omitempty"`
	TS   *time.Time      `json:"ts,omitempty"`
	Meta json.RawMessage `json:"meta,omitempty"`
	Source
}

// Params are the settings that produced the verdict, so an event can be
// interpreted (and reproduced) on its own.
type Params struct {
	Profile  string `json:"profile"`
	Shingle  int    `json:"shingle"`
	CharGram int    `json:"char_gram,omitempty"`
	K        int    `json:"k"`
	Method   string `json:"minhash"`
	Bands    int    `json:"bands"`
	Rows     int    `json:"rows"`
	Seed     uint64 `json:"seed"`
	SimHashK int    `json:"simhash_k"`
	Index    string `json:"index"`
	Version  string `json:"version"`
	// Granularity is "sentence" in sentence mode (absent otherwise).
	Granularity string `json:"granularity,omitempty"`
}

// Output is what pipeline.Pipeline.Run emits for each input, in input order: an event, a
// dead letter, or neither (a unique document when unique events are off).
// Tag is the input's.
type Output struct {
	Tag   any
	Event *Event
	Dead  *DeadLetter
	// Corrections are events about later documents that did not see this
	// one (Redis Cluster only; see [Event.Correction]).
	Corrections []*Event
	// CorrectionSeqs are the index sequence numbers of the documents of
	// Corrections (0 when unknown), for the pipeline to record them; they
	// are not part of any output.
	CorrectionSeqs []uint64
	// Revisions are events that replace earlier documents' events (see
	// [Event.Revised]), found while this input was decided.
	Revisions []*Event
}
