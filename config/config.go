package config

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/sketch"
)

// ErrInvalid marks a configuration that failed validation.
var ErrInvalid = errors.New("config: invalid")

// Config is the whole configuration. Field tags: yaml is the key, doc the
// comment printed by Example.
type Config struct {
	Profile  string   `yaml:"profile" doc:"defaults for a kind of corpus: web (crawled pages), books (long OCR'd text, DUPNIQ), sentence (short texts, edit similarity)"`
	Sketch   Sketch   `yaml:"sketch" doc:"how documents are normalized and sketched; changing any of these invalidates a stored index"`
	Index    Index    `yaml:"index" doc:"the LSH band store"`
	Verify   Verify   `yaml:"verify" doc:"candidate verification; thresholds are the profile's unless set"`
	Pipeline Pipeline `yaml:"pipeline" doc:"what is emitted"`
	Kafka    Kafka    `yaml:"kafka" doc:"the Kafka service (neardup serve): where documents come from and events go"`
	HTTP     HTTP     `yaml:"http" doc:"the metrics, health and admin endpoints of neardup serve"`
	Log      Log      `yaml:"log" doc:"logging of neardup serve"`
}

// Sketch configures normalization and sketching.
type Sketch struct {
	Shingle      int     `yaml:"shingle" doc:"words per shingle (w)"`
	CharGram     int     `yaml:"char_gram" doc:"if > 0, shingle by character n-grams of this length instead of words"`
	K            int     `yaml:"k" doc:"MinHash signature length"`
	Method       string  `yaml:"method" doc:"MinHash variant: oph (one permutation, densified) or classic"`
	Seed         uint64  `yaml:"seed" doc:"seed of every hash family"`
	Threshold    float64 `yaml:"threshold" doc:"Jaccard resemblance the LSH bands are tuned for (bands and rows are chosen from k and this)"`
	RecallWeight float64 `yaml:"recall_weight" doc:"weight of missed pairs against spurious candidates when choosing bands and rows (0.5 balances them; verification removes spurious candidates, so profiles favour recall)"`
	Bands        int     `yaml:"bands" doc:"LSH bands; 0 chooses from k, threshold and recall_weight"`
	Rows         int     `yaml:"rows" doc:"rows per band; 0 chooses from k and threshold"`
	SimHashK     int     `yaml:"simhash_k" doc:"Hamming distance of the SimHash candidate lane (k+1 block tables; 3 in the CiteSeerX study); -1 turns the lane off (the default: see docs/design.md)"`
	SimHashIDF   bool    `yaml:"simhash_idf" doc:"weight SimHash tokens by lexicon idf instead of equally"`
	FoldQuotes   bool    `yaml:"fold_quotes" doc:"fold typographic quotes and dashes to ASCII"`
	StripAccents bool    `yaml:"strip_accents" doc:"remove accents (café → cafe)"`
	DropDigits   bool    `yaml:"drop_digits" doc:"treat digits as separators"`
	JoinHyphens  bool    `yaml:"join_hyphens" doc:"join a word hyphenated at a line end (U+2010 or a soft hyphen, a line break, and a lower-case letter or a capital after a capital) and drop soft hyphens inside words; changes the namespace's parameters"`
	MaxBytes     int     `yaml:"max_bytes" doc:"largest document accepted, in bytes; larger ones are dead-lettered"`
	KeepText     int     `yaml:"keep_text" doc:"store the normalized text of documents up to this many bytes (for edit similarity); 0 never"`
	Lexicon      string  `yaml:"lexicon" doc:"I-Match idf lexicon file (neardup lexicon build); empty uses the built-in one"`
	IMatch       string  `yaml:"imatch" doc:"I-Match term filter: idf (IDF-L), doc (Doc-L) or off"`
	IMatchCutoff float64 `yaml:"imatch_cutoff" doc:"normalized idf floor of the idf filter"`
	IMatchKeep   float64 `yaml:"imatch_keep" doc:"fraction of a document's terms kept by the doc filter"`
	IMatchMin    int     `yaml:"imatch_min_terms" doc:"fewest retained terms that make a digest"`
	MaxShingles  int     `yaml:"max_shingles" doc:"stored shingles per document (profiles that compare shingles); larger sets are sampled consistently, keeping between half this and this many"`
	MaxUnique    int     `yaml:"max_unique" doc:"stored unique words per document; longer sequences are sampled consistently"`
	PassageWords int     `yaml:"passage_words" doc:"passage lane: two documents sharing a passage of at least this many words find each other (winnowing anchors in the index) and the copied ranges are reported; 0 turns the lane off (word shingles only)"`
	// Sentence mode (pipeline.granularity: sentence).
	SentenceCharGram int `yaml:"sentence_char_gram" doc:"sentence mode: character shingle length of a sentence (Ayhan et al.: 10 when edit similarity is the final filter)"`
	SentenceBands    int `yaml:"sentence_bands" doc:"sentence mode: LSH bands per sentence (paper: 10)"`
	SentenceRows     int `yaml:"sentence_rows" doc:"sentence mode: rows per band (paper: 8; P(candidate) 0.84 at shingle Jaccard 0.8, 0.45 at 0.7)"`
}

// Index configures the band store.
type Index struct {
	URL            string        `yaml:"url" doc:"memory, redis://[user:pass@]host:port[/db], rediss://... (TLS), or redis+cluster://host:port,host:port"`
	Namespace      string        `yaml:"namespace" doc:"key prefix; the schema version is added to it"`
	Retention      time.Duration `yaml:"retention" doc:"how long a document stays findable; 0 keeps everything"`
	Generation     time.Duration `yaml:"generation" doc:"width of a time generation: entries expire a generation at a time, and a lookup reads every live generation (retention/generation + 1 reads per band), so keep it at a half or the whole of retention; 0 means half of retention"`
	Capacity       int           `yaml:"capacity" doc:"caps the memory index (the Redis index needs no size: its groups grow with the documents stored, and each generation starts at the size its predecessor's count asks for), which starts a new generation at this many and evicts the oldest beyond max(retention/generation+1, 2)"`
	RefreshOnMatch bool          `yaml:"refresh_on_match" doc:"extend a document's lifetime when a new document matches it"`
	CommonDocs     int           `yaml:"common_docs" doc:"documents that make an index key (LSH band, passage anchor, sentence key) common: boilerplate, not evidence. A common key yields only its exemplar (the first document that held it) as a candidate and takes no more documents; the text in common passages is left out of verification (see docs/design.md, Boilerplate)"`
	Batch          int           `yaml:"batch" doc:"documents per index round trip"`
	Timeout        time.Duration `yaml:"timeout" doc:"per-call timeout of index operations"`
	Retry          time.Duration `yaml:"retry" doc:"how long a failing index call is retried before the run gives up (nothing is reported while retrying, never 'unique' because the index was down); 0 is the command's default: 30s for scan, forever for serve (which reports not ready meanwhile)"`
	AllowEviction  bool          `yaml:"allow_eviction" doc:"serve: stay ready when a Redis server holding the index (every master of a cluster, checked at start and every 30s) has a maxmemory-policy other than noeviction, which lets a full Redis evict index keys and silently forget documents; false (the default): such a member reports not ready (neardup_index_evicting_servers, alert NeardupIndexEvicting) until the policy is noeviction"`
	AcceptEmpty    bool          `yaml:"accept_empty" doc:"serve: accept an index whose stored documents are gone (Redis restarted without its data) and go on deciding against the empty index; false (the default) stops deciding and reports not ready until the data is restored or the loss is accepted (POST /admin/accept-empty-index, docs/operations.md)"`
	TLSCA          string        `yaml:"tls_ca" doc:"PEM file of the CA that signs the Redis server certificate (rediss://)"`
	TLSCert        string        `yaml:"tls_cert" doc:"PEM client certificate for mutual TLS"`
	TLSKey         string        `yaml:"tls_key" doc:"PEM client key for mutual TLS"`
}

// Verify configures verification. Zero thresholds take the profile's value.
type Verify struct {
	Workers       int     `yaml:"workers" doc:"verifier goroutines; 0 uses GOMAXPROCS"`
	MaxCandidates int     `yaml:"max_candidates" doc:"candidates verified per document, best ranked first (most shared buckets, then the most recent); the rest are counted in the event's unverified"`
	SettleAfter   int     `yaml:"settle_after" doc:"stop verifying a document's ranked candidates once this many are near or exact duplicates, counting the rest in the event's settled: bounds the cost of a copy of a widely copied text, and lists fewer of its matches (docs/performance.md); 0 (the default) verifies every candidate"`
	Jaccard       float64 `yaml:"jaccard" doc:"exact shingle resemblance at or above which a candidate is a near duplicate"`
	Containment   float64 `yaml:"containment" doc:"shingle containment (either direction) at or above which a candidate is a partial duplicate"`
	ITS           float64 `yaml:"its" doc:"DUPNIQ information-theoretic score threshold over unique words (paper: 0.72)"`
	CS            float64 `yaml:"cs" doc:"DUPNIQ correlation score threshold (paper: 0.12)"`
	Edit          float64 `yaml:"edit" doc:"edit similarity threshold for short texts"`
	PassageShared int     `yaml:"passage_shared" doc:"aligned shingles a passage needs to count as copied (partial duplicates by passage alignment); 0 is the profile's 20"`
}

// Pipeline configures what is emitted.
type Pipeline struct {
	Emit          string `yaml:"emit" doc:"duplicates (one event per duplicate) or all (also one event per unique document)"`
	MaxMatches    int    `yaml:"max_matches" doc:"verified matches listed in an event, best first"`
	MaxEventBytes int    `yaml:"max_event_bytes" doc:"largest event, encoded, at most 1GiB less 1MiB; serve lowers it to what the output topic takes (its max.message.bytes, read at start, less the key and framing). A larger event is shortened: passages, lower matches and sentence matches are left out (abridged: docs/event.schema.json) until it fits; one that does not fit even then (a huge meta object) becomes a dead letter event_too_large"`
	Granularity   string `yaml:"granularity" doc:"document, or sentence: also match each sentence against the sentences of earlier documents (edit similarity, edit class) and list them in the event's sentences"`
	// GeneratedHosts lists hosts of generated documentation.
	GeneratedHosts string `yaml:"generated_hosts" doc:"comma-separated hosts whose pages are generated documentation (API references, manual pages): text that two pages of such a host with different content share is the host's template, not a copy, so its pages are linked to each other only as near or exact copies (versions of one page); other hosts' pages are unaffected. Empty: none (docs/boilerplate.md, Generated documentation). Set the same on every member"`
	// Sentence mode bounds.
	SentenceMinChars   int `yaml:"sentence_min_chars" doc:"sentence mode: shortest sentence matched, in characters"`
	SentenceMaxChars   int `yaml:"sentence_max_chars" doc:"sentence mode: longest sentence matched, in characters"`
	MaxSentences       int `yaml:"max_sentences" doc:"sentence mode: sentences matched per document (the rest are counted in the event's sentences_skipped)"`
	MaxSentenceMatches int `yaml:"max_sentence_matches" doc:"sentence mode: matches listed per sentence, most similar first (the rest are counted in the event's sentence_matches_dropped)"`
}

// GeneratedHostList returns the hosts of pipeline.generated_hosts, lower
// case, without a leading "www.": each entry is a host name (letters,
// digits, '-' and '.', at least one dot), not a url.
func (p Pipeline) GeneratedHostList() ([]string, error) {
	var out []string
	for _, h := range strings.Split(p.GeneratedHosts, ",") {
		h = strings.ToLower(strings.TrimSpace(h))
		if h == "" {
			continue
		}
		if !strings.Contains(h, ".") || strings.Trim(h, "abcdefghijklmnopqrstuvwxyz0123456789-.") != "" || strings.HasPrefix(h, ".") || strings.HasSuffix(h, ".") {
			return nil, fmt.Errorf("%q is not a host name", h)
		}
		out = append(out, strings.TrimPrefix(h, "www."))
	}
	return out, nil
}

// MaxEventBytesLimit bounds pipeline.max_event_bytes: the largest record
// a Kafka client (franz-go) produces is 1 GiB, and an event's record
// carries its key (the id) and framing too.
const MaxEventBytesLimit = 1<<30 - 1<<20

// Default returns the built-in configuration for the web profile.
func Default() Config {
	c := Config{
		Profile: "web",
		Sketch: Sketch{
			Shingle: 5, K: 128, Method: "oph", Seed: 1, Threshold: 0.5, RecallWeight: 0.8, SimHashK: -1,
			FoldQuotes: true, JoinHyphens: true, MaxBytes: 16 << 20, IMatch: "idf", IMatchCutoff: 0.1, IMatchKeep: 0.1, IMatchMin: 8,
			MaxShingles: 256, MaxUnique: 8192, PassageWords: 40,
			SentenceCharGram: 10, SentenceBands: 10, SentenceRows: 8,
		},
		Index: Index{
			URL: "memory", Namespace: "neardup", Retention: 30 * 24 * time.Hour, Capacity: 1 << 20,
			CommonDocs: index.DefaultCommonDocs, Batch: 64, Timeout: 5 * time.Second,
		},
		Verify: Verify{MaxCandidates: 32},
		Pipeline: Pipeline{Emit: "duplicates", MaxMatches: 25, MaxEventBytes: 1 << 20, Granularity: "document",
			SentenceMinChars: 40, SentenceMaxChars: 1000, MaxSentences: 256, MaxSentenceMatches: 5},
		Kafka: defaultKafka(),
		HTTP:  HTTP{Addr: ":8080", AdminAddr: "127.0.0.1:8081"},
		Log:   Log{Format: "json", Level: "info"},
	}
	return c
}

// applyProfile sets the defaults that differ by profile. It runs before
// the file, environment and flags are applied, so they override it.
func applyProfile(c *Config, profile string) error {
	switch profile {
	case "web":
		// Near duplicates at the CiteSeerX resemblance 0.5; bands favour
		// recall (30×4: a pair at J = 0.6 is a candidate with p = 0.985,
		// at 0.7 with p = 0.9996). A sample of at most 256 shingles is
		// stored (docs/design.md, "Bytes per document").
	case "books":
		// Long, noisy OCR'd text: DUPNIQ's normalization drops digits, and
		// long documents need more stored unique words. Partial duplicates
		// with OCR noise keep few 5-word shingles (J ≈ 0.4 for a fifth
		// replaced and 1% character noise), so the bands are tuned for
		// J = 0.3 with K = 256: 85×3, p = 0.996 at J = 0.4. A book costs
		// 85 band entries, small beside the book.
		c.Sketch.DropDigits = true
		c.Sketch.MaxShingles = 4096
		c.Sketch.MaxUnique = 16384
		c.Sketch.K = 256
		c.Sketch.Threshold = 0.3
		c.Sketch.RecallWeight = 0.9
		// Partial duplicates of books are DUPNIQ's LCS over unique words;
		// the passage lane would store ~2 bytes per word of a book.
		c.Sketch.PassageWords = 0
	case "sentence":
		// Short texts: character n-grams (the Wikipedia study's shingles),
		// stored text for edit similarity, no I-Match (too few terms).
		c.Sketch.CharGram = 5
		c.Sketch.KeepText = 4096
		c.Sketch.IMatch = "off"
		c.Sketch.PassageWords = 0
	default:
		return fmt.Errorf("%w: profile %q: want web, books or sentence", ErrInvalid, profile)
	}
	c.Profile = profile
	return nil
}

// Validate checks every key and returns an error naming the first bad one.
// It resolves index.generation 0 to half of index.retention (a day when
// nothing expires).
func (c *Config) Validate() error {
	if c.Index.Generation == 0 {
		c.Index.Generation = c.Index.Retention / 2
		if c.Index.Generation <= 0 {
			c.Index.Generation = 24 * time.Hour
		}
	}
	bad := func(key string, v any, want string) error {
		return fmt.Errorf("%w: %s = %v: want %s", ErrInvalid, key, v, want)
	}
	s := c.Sketch
	switch {
	case c.Profile != "web" && c.Profile != "books" && c.Profile != "sentence":
		return bad("profile", c.Profile, "web, books or sentence")
	case s.Shingle < 1 || s.Shingle > 64:
		return bad("sketch.shingle", s.Shingle, "1..64")
	case s.CharGram < 0 || s.CharGram > 64:
		return bad("sketch.char_gram", s.CharGram, "0..64")
	case s.K < 8 || s.K > 1024:
		return bad("sketch.k", s.K, "8..1024")
	case s.Method != "oph" && s.Method != "classic":
		return bad("sketch.method", s.Method, "oph or classic")
	case s.Threshold <= 0 || s.Threshold >= 1:
		return bad("sketch.threshold", s.Threshold, "a number in (0, 1)")
	case s.RecallWeight <= 0 || s.RecallWeight >= 1:
		return bad("sketch.recall_weight", s.RecallWeight, "a number in (0, 1)")
	case s.Bands < 0 || s.Rows < 0 || (s.Bands == 0) != (s.Rows == 0):
		return bad("sketch.bands/sketch.rows", fmt.Sprintf("%d/%d", s.Bands, s.Rows), "both 0 (automatic) or both > 0")
	case s.Bands*s.Rows > s.K:
		return bad("sketch.bands×sketch.rows", s.Bands*s.Rows, fmt.Sprintf("at most sketch.k = %d", s.K))
	case s.SimHashK < -1 || s.SimHashK > 7:
		return bad("sketch.simhash_k", s.SimHashK, "-1 (off) or 0..7")
	case s.MaxBytes < 1:
		return bad("sketch.max_bytes", s.MaxBytes, "> 0")
	case s.KeepText < 0:
		return bad("sketch.keep_text", s.KeepText, ">= 0")
	case s.IMatch != "idf" && s.IMatch != "doc" && s.IMatch != "off":
		return bad("sketch.imatch", s.IMatch, "idf, doc or off")
	case s.IMatchCutoff < 0 || s.IMatchCutoff > 1:
		return bad("sketch.imatch_cutoff", s.IMatchCutoff, "0..1")
	case s.IMatchKeep <= 0 || s.IMatchKeep > 1:
		return bad("sketch.imatch_keep", s.IMatchKeep, "a number in (0, 1]")
	case s.IMatchMin < 1:
		return bad("sketch.imatch_min_terms", s.IMatchMin, ">= 1")
	case s.PassageWords != 0 && (s.PassageWords < s.Shingle || s.PassageWords > 10000):
		return bad("sketch.passage_words", s.PassageWords, "0 (off) or shingle..10000")
	case s.MaxShingles < 16:
		return bad("sketch.max_shingles", s.MaxShingles, ">= 16")
	case s.MaxUnique < 16:
		return bad("sketch.max_unique", s.MaxUnique, ">= 16")
	}
	ix := c.Index
	switch {
	case ix.URL == "":
		return bad("index.url", `""`, "memory or a redis:// URL")
	case ix.Namespace == "":
		return bad("index.namespace", `""`, "a non-empty key prefix")
	case ix.Retention < 0:
		return bad("index.retention", ix.Retention, ">= 0")
	case ix.Generation < 0:
		return bad("index.generation", ix.Generation, ">= 0 (0: half of index.retention)")
	case ix.Retention > 0 && ix.Generation > ix.Retention:
		return bad("index.generation", ix.Generation, fmt.Sprintf("at most index.retention (%v)", ix.Retention))
	case ix.Capacity < 1:
		return bad("index.capacity", ix.Capacity, ">= 1")
	case ix.CommonDocs < 2:
		return bad("index.common_docs", ix.CommonDocs, ">= 2")
	case ix.Batch < 1 || ix.Batch > 10000:
		return bad("index.batch", ix.Batch, "1..10000")
	case ix.Timeout <= 0:
		return bad("index.timeout", ix.Timeout, "> 0")
	case ix.Retry < 0:
		return bad("index.retry", ix.Retry, ">= 0 (0: the command's default)")
	}
	v := c.Verify
	if v.PassageShared < 0 {
		return bad("verify.passage_shared", v.PassageShared, "0 (profile default) or a number of shingles")
	}
	for _, f := range []struct {
		key string
		v   float64
	}{{"verify.jaccard", v.Jaccard}, {"verify.containment", v.Containment}, {"verify.its", v.ITS}, {"verify.cs", v.CS}, {"verify.edit", v.Edit}} {
		if f.v < 0 || f.v > 1 {
			return bad(f.key, f.v, "0 (profile default) or a number in (0, 1]")
		}
	}
	if v.Workers < 0 {
		return bad("verify.workers", v.Workers, ">= 0 (0 = GOMAXPROCS)")
	}
	if v.MaxCandidates < 1 || v.MaxCandidates > 4096 {
		return bad("verify.max_candidates", v.MaxCandidates, "1..4096")
	}
	if v.SettleAfter < 0 {
		return bad("verify.settle_after", v.SettleAfter, ">= 0 (0 = verify every candidate)")
	}
	p := c.Pipeline
	switch {
	case p.Emit != "duplicates" && p.Emit != "all":
		return bad("pipeline.emit", p.Emit, "duplicates or all")
	case p.MaxMatches < 1 || p.MaxMatches > 100:
		return bad("pipeline.max_matches", p.MaxMatches, "1..100")
	case p.MaxEventBytes < 4096 || p.MaxEventBytes > MaxEventBytesLimit:
		return bad("pipeline.max_event_bytes", p.MaxEventBytes, "4096..1GiB-1MiB (a Kafka client produces records of at most 1 GiB, key and framing included)")
	case p.Granularity != "document" && p.Granularity != "sentence":
		return bad("pipeline.granularity", p.Granularity, "document or sentence")
	}
	if _, err := p.GeneratedHostList(); err != nil {
		return bad("pipeline.generated_hosts", p.GeneratedHosts, "comma-separated host names such as docs.example.org (no scheme, port or path)")
	}
	if p.Granularity == "sentence" {
		s := c.Sketch
		switch {
		case s.SentenceCharGram < 1 || s.SentenceCharGram > 64:
			return bad("sketch.sentence_char_gram", s.SentenceCharGram, "1..64")
		case s.SentenceBands < 1 || s.SentenceRows < 1 || s.SentenceBands*s.SentenceRows > 4096:
			return bad("sketch.sentence_bands", s.SentenceBands, fmt.Sprintf(">= 1, with sketch.sentence_rows (%d) at most 4096 values", s.SentenceRows))
		case p.SentenceMinChars < 1:
			return bad("pipeline.sentence_min_chars", p.SentenceMinChars, ">= 1")
		case p.SentenceMaxChars < p.SentenceMinChars:
			return bad("pipeline.sentence_max_chars", p.SentenceMaxChars, fmt.Sprintf(">= pipeline.sentence_min_chars (%d)", p.SentenceMinChars))
		case p.MaxSentences < 1 || p.MaxSentences*s.SentenceBands > sketch.MaxSentenceKeys:
			return bad("pipeline.max_sentences", p.MaxSentences, fmt.Sprintf("1..%d (with %d bands per sentence)", sketch.MaxSentenceKeys/s.SentenceBands, s.SentenceBands))
		case p.MaxSentenceMatches < 1 || p.MaxSentenceMatches > 100:
			return bad("pipeline.max_sentence_matches", p.MaxSentenceMatches, "1..100")
		}
	}
	return c.validateService(bad)
}
