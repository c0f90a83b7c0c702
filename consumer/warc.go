package consumer

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/http/httputil"
	"os"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	gowarc "github.com/nlnwa/gowarc/v3"
	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"

	"github.com/neardup/neardup/stream"
)

// WARC input (ISO 28500, the format crawlers store what they fetched in:
// Heritrix, wget --warc-file, Browsertrix, Common Crawl). A file is a
// sequence of records, each either plain or its own gzip member (.warc.gz);
// the reader detects both per record, so one file may mix them.
//
// Documents come from response records (the HTTP payload, its headers
// skipped) and resource records (the whole block) whose content type is
// HTML or plain text. Revisit records become documents with their
// original's payload, read again from where it was seen (kept in memory
// for standard input). Everything else
// (request, metadata, warcinfo records, images, non-2xx responses) is
// skipped and counted in [WARCStats].

// ReasonMalformedWARC marks a WARC record (or the rest of a file) that
// could not be parsed: truncated, a wrong Content-Length or block digest,
// broken headers or compression.
const ReasonMalformedWARC stream.Reason = "malformed_warc"

// WARCID chooses where a WARC document's id comes from.
type WARCID string

const (
	// WARCIDURI takes the id from WARC-Target-URI (the record id when a
	// record has none). A URL captured twice gets one id: the second
	// capture is then a replay of the first (see stream.Event.Replay).
	WARCIDURI WARCID = "uri"
	// WARCIDRecord takes the id from WARC-Record-ID (without its angle
	// brackets), unique per capture.
	WARCIDRecord WARCID = "record-id"
)

// Format says how an input is read.
type Format string

const (
	// FormatAuto reads files by their name (.warc, .warc.gz: WARC; .jsonl,
	// .ndjson: JSON lines; others: one document each) and standard input
	// as JSON lines.
	FormatAuto Format = ""
	// FormatJSONLines reads every input as JSON lines.
	FormatJSONLines Format = "jsonl"
	// FormatWARC reads every input, standard input included, as WARC.
	FormatWARC Format = "warc"
)

// ParseFormat parses an --input-format value: auto, jsonl or warc.
func ParseFormat(s string) (Format, error) {
	switch strings.ToLower(s) {
	case "", "auto":
		return FormatAuto, nil
	case "jsonl", "ndjson", "json-lines":
		return FormatJSONLines, nil
	case "warc":
		return FormatWARC, nil
	}
	return "", fmt.Errorf("consumer: input format %q: want auto, jsonl or warc", s)
}

// ParseWARCID parses a --warc-id value: uri or record-id.
func ParseWARCID(s string) (WARCID, error) {
	switch WARCID(strings.ToLower(s)) {
	case "", WARCIDURI:
		return WARCIDURI, nil
	case WARCIDRecord:
		return WARCIDRecord, nil
	}
	return "", fmt.Errorf("consumer: WARC id %q: want uri or record-id", s)
}

// WARCStats counts what the WARC inputs held. Documents and dead letters
// are also counted by scan; the rest never reach the pipeline.
type WARCStats struct {
	Records   int // records read, malformed ones included
	Documents int // records sent as documents (revisits included)
	Revisits  int // revisit records sent with their original's payload
	Malformed int // dead letters with ReasonMalformedWARC
	// Skipped counts records that are not documents, by why: the record
	// type (request, metadata, warcinfo, ...), "non_text" (a payload
	// neither HTML nor plain text), "http_status" (a response other than
	// 2xx), "empty" (no payload), "content_encoding" (compressed other than
	// gzip or deflate, or not decodable), "revisit_unresolved" (the original is
	// not in the input, or was on stdin and is no longer in memory; see
	// RevisitMemory).
	Skipped map[string]int
}

// String summarizes the counts in one line.
func (s WARCStats) String() string {
	var sk []string
	for _, k := range slices.Sorted(maps.Keys(s.Skipped)) {
		sk = append(sk, fmt.Sprintf("%s %d", k, s.Skipped[k]))
	}
	skipped := ""
	if len(sk) > 0 {
		skipped = " (" + strings.Join(sk, ", ") + ")"
	}
	return fmt.Sprintf("warc: %d records, %d documents (%d revisits), %d skipped%s, %d malformed",
		s.Records, s.Documents, s.Revisits, sum(s.Skipped), skipped, s.Malformed)
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// warcPos is where a record that became a document was read, so that a
// revisit of it can read its payload again.
type warcPos struct {
	file   string
	offset int64
}

// original is what a revisit takes from the record it refers to.
type original struct {
	id, uri string
	// pos locates a record in a file; for standard input, which cannot be
	// read again, body and mediaType hold its payload instead.
	pos       warcPos
	body      []byte
	mediaType string
}

// RevisitMemory bounds the payloads kept from standard input for the
// revisits that may follow them (the oldest are dropped first); a file's
// records are read again from their position instead.
const RevisitMemory = 64 << 20

// warcState is what one Run remembers across WARC inputs: each document's
// record by record id, payload digest and target URI. For files it holds
// positions (about a hundred bytes per document); for standard input the
// payloads themselves, at most RevisitMemory bytes of them.
type warcState struct {
	refs   map[string]*original
	kept   []*original // standard-input payloads, oldest first
	keptBy map[*original][]string
	bytes  int
	budget int // bytes of payloads kept (RevisitMemory)
}

func newWARCState(budget int) *warcState {
	return &warcState{refs: map[string]*original{}, keptBy: map[*original][]string{}, budget: budget}
}

// keys are a record's names a revisit may refer to it by.
func keys(id, digest, uri string) []string {
	var ks []string
	if id = strings.Trim(id, "<>"); id != "" {
		ks = append(ks, "id:"+id)
	}
	if digest != "" {
		ks = append(ks, "digest:"+strings.ToLower(digest))
	}
	if uri != "" {
		ks = append(ks, "uri:"+uri)
	}
	return ks
}

func (s *warcState) remember(rec gowarc.WarcRecord, o *original) {
	h := rec.WarcHeader()
	o.id, o.uri = strings.Trim(rec.RecordId(), "<>"), h.Get(gowarc.WarcTargetURI)
	ks := keys(o.id, h.Get(gowarc.WarcPayloadDigest), o.uri)
	for _, k := range ks {
		s.refs[k] = o
	}
	if o.body == nil {
		return
	}
	s.kept = append(s.kept, o)
	s.keptBy[o] = ks
	s.bytes += len(o.body)
	for s.bytes > s.budget && len(s.kept) > 1 {
		old := s.kept[0]
		s.kept = s.kept[1:]
		s.bytes -= len(old.body)
		for _, k := range s.keptBy[old] {
			if s.refs[k] == old {
				delete(s.refs, k)
			}
		}
		delete(s.keptBy, old)
	}
}

// original finds the record a revisit refers to: by WARC-Refers-To, else
// by payload digest, else by WARC-Refers-To-Target-URI.
func (s *warcState) original(rev gowarc.WarcRecord) (*original, bool) {
	h := rev.WarcHeader()
	for _, k := range keys(h.Get(gowarc.WarcRefersTo), h.Get(gowarc.WarcPayloadDigest), h.Get(gowarc.WarcRefersToTargetURI)) {
		if o, ok := s.refs[k]; ok {
			return o, true
		}
	}
	return nil, false
}

// warcOptions are the library's validation settings: findings are
// collected (not fatal) so one bad record does not stop a file, and the
// reader resynchronizes on the next record's start.
func warcOptions() []gowarc.WarcRecordOption {
	return []gowarc.WarcRecordOption{
		gowarc.WithSyntaxErrorPolicy(gowarc.ErrWarn),
		gowarc.WithSpecViolationPolicy(gowarc.ErrWarn),
		gowarc.WithUnknownRecordTypePolicy(gowarc.ErrWarn),
		gowarc.WithBufferMaxMemBytes(1 << 20),
	}
}

// countingReader reports the bytes read through it, for progress.
type countingReader struct {
	r       io.Reader
	advance func(int64)
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.advance(int64(n))
	return n, err
}

// warc reads the WARC records of r (named name; seekable marks a file
// that revisits can read again) and sends one item per document or
// malformed record.
func (f *Files) warc(ctx context.Context, r io.Reader, name string, seekable bool, send func(stream.Item) error) error {
	if f.warcState == nil {
		f.warcState = newWARCState(RevisitMemory)
	}
	if f.WARC.Skipped == nil {
		f.WARC.Skipped = map[string]int{}
	}
	rd, err := gowarc.NewWarcFileReaderFromStream(&countingReader{r: r, advance: f.advance}, 0, warcOptions()...)
	if err != nil {
		return send(rejected(name, 0, ReasonUnreadable, err))
	}
	// Not rd.Close: that would close r, which the caller owns.
	defer interruptible(ctx, r)()
	lastFail := int64(-1)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) && rec.WarcRecord == nil {
			return nil
		}
		if errors.Is(err, os.ErrDeadlineExceeded) && ctx.Err() != nil {
			return ctx.Err()
		}
		f.WARC.Records++
		if err != nil {
			f.WARC.Malformed++
			if rec.WarcRecord != nil {
				_ = rec.Close()
			}
			if serr := send(f.malformed(name, rec, err)); serr != nil {
				return serr
			}
			// The reader skips to the next record's start on the next call;
			// a failure that consumed nothing would repeat forever.
			end := rec.Offset + rec.Size
			if end <= lastFail || isEOF(err) {
				return nil
			}
			lastFail = end
			continue
		}
		it, ok := f.warcItem(rec, name, seekable)
		_ = rec.Close()
		if !ok {
			continue
		}
		if serr := send(it); serr != nil {
			return serr
		}
	}
}

func isEOF(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "unexpected EOF")
}

// malformed is the dead letter of a record that did not parse.
func (f *Files) malformed(name string, rec gowarc.Record, err error) stream.Item {
	id := ""
	if rec.WarcRecord != nil {
		id = f.warcID(rec.WarcRecord)
	}
	off := rec.Offset
	return stream.Item{
		Err:    &stream.InvalidError{Reason: ReasonMalformedWARC, ID: id, Detail: fmt.Sprintf("record at byte %d: %s", off, oneLine(err))},
		Source: stream.Source{File: name, Offset: &off},
	}
}

// fatalFinding reports a validation finding that means the record's bytes
// are not what its header says: a Content-Length or digest mismatch (a
// truncated or corrupted record). Other findings (a missing carriage
// return, bytes before the record) leave the content usable.
func fatalFinding(v []error) error {
	for _, e := range v {
		var cl *gowarc.ContentLengthError
		var de *gowarc.DigestError
		if errors.As(e, &cl) || errors.As(e, &de) {
			return e
		}
		if s := e.Error(); strings.Contains(s, "content length mismatch") || strings.Contains(s, "wrong digest") {
			return e
		}
	}
	return nil
}

// oneLine joins the lines of a (joined) error with "; ".
func oneLine(err error) string {
	return strings.ReplaceAll(err.Error(), "\n", "; ")
}

func (f *Files) warcID(rec gowarc.WarcRecord) string {
	rid := strings.Trim(rec.RecordId(), "<>")
	if f.WARCID == WARCIDRecord {
		return rid
	}
	if u := rec.WarcHeader().Get(gowarc.WarcTargetURI); u != "" {
		return u
	}
	return rid
}

// warcItem turns one parsed record into an item; ok is false for a record
// skipped (and counted).
func (f *Files) warcItem(rec gowarc.Record, name string, seekable bool) (stream.Item, bool) {
	wr := rec.WarcRecord
	off := rec.Offset
	src := stream.Source{File: name, Offset: &off}
	e := fatalFinding(rec.Validation)
	if e == nil && wr.Type() == 0 && len(rec.Validation) > 0 {
		// No known WARC-Type: the header is broken, not a new record type.
		e = errors.Join(rec.Validation...)
	}
	if e != nil {
		f.WARC.Malformed++
		return stream.Item{
			Err:    &stream.InvalidError{Reason: ReasonMalformedWARC, ID: f.warcID(wr), Detail: fmt.Sprintf("record at byte %d: %s", off, oneLine(e))},
			Source: src,
		}, true
	}
	meta := map[string]string{"warc_type": wr.Type().String(), "warc_record_id": strings.Trim(wr.RecordId(), "<>")}
	var body []byte
	var ctype, why string
	switch wr.Type() {
	case gowarc.Response, gowarc.Resource:
		body, ctype, why = f.payload(wr)
	case gowarc.Revisit:
		o, found := f.warcState.original(wr)
		if !found {
			f.WARC.Skipped["revisit_unresolved"]++
			return stream.Item{}, false
		}
		if body, ctype = o.body, o.mediaType; body == nil {
			orig, closeOrig, err := readRecordAt(o.pos)
			if err != nil {
				f.WARC.Skipped["revisit_unresolved"]++
				return stream.Item{}, false
			}
			body, ctype, why = f.payload(orig)
			closeOrig()
		}
		meta["refers_to"] = o.id
		if o.uri != "" {
			meta["refers_to_target_uri"] = o.uri
		}
	default:
		f.WARC.Skipped[wr.Type().String()]++
		return stream.Item{}, false
	}
	if why != "" {
		f.WARC.Skipped[why]++
		return stream.Item{}, false
	}
	id := f.warcID(wr)
	if len(body) > f.MaxBytes {
		return stream.Item{Err: &stream.InvalidError{Reason: stream.ReasonTooLarge, ID: id, Detail: fmt.Sprintf("payload of more than %d bytes", f.MaxBytes)}, Source: src}, true
	}
	switch {
	case wr.Type() == gowarc.Revisit:
		f.WARC.Revisits++
	case seekable:
		f.warcState.remember(wr, &original{pos: warcPos{file: name, offset: off}})
	default:
		f.warcState.remember(wr, &original{body: body, mediaType: ctype})
	}
	f.WARC.Documents++
	doc := stream.Document{
		ID:     id,
		URL:    wr.WarcHeader().Get(gowarc.WarcTargetURI),
		Text:   body,
		IsHTML: ctype == "text/html",
	}
	if ts, err := wr.Date(); err == nil {
		doc.TS = ts.UTC()
	} else if d := wr.WarcHeader().Get(gowarc.WarcDate); d != "" {
		doc.TS, _ = time.Parse(time.RFC3339Nano, d)
	}
	if m, err := json.Marshal(meta); err == nil {
		doc.Meta = m
	}
	return stream.Item{Doc: doc, Source: src}, true
}

// readRecordAt reads the record at pos again (for a revisit).
func readRecordAt(pos warcPos) (gowarc.WarcRecord, func(), error) {
	rd, err := gowarc.NewWarcFileReader(pos.file, pos.offset, warcOptions()...)
	if err != nil {
		return nil, nil, err
	}
	rec, err := rd.Next()
	if err != nil {
		if rec.WarcRecord != nil {
			_ = rec.Close()
		}
		_ = rd.Close()
		return nil, nil, err
	}
	return rec.WarcRecord, func() { _ = rec.Close(); _ = rd.Close() }, nil
}

// payload returns a record's text payload (converted to UTF-8) and its
// media type, text/html or text/plain, or why it is skipped.
func (f *Files) payload(wr gowarc.WarcRecord) (body []byte, mediaType, skip string) {
	var r io.Reader
	ctype := wr.WarcHeader().Get(gowarc.ContentType)
	switch b := wr.Block().(type) {
	case gowarc.HttpResponseBlock:
		if c := b.HttpStatusCode(); c < 200 || c > 299 {
			return nil, "", "http_status"
		}
		ctype = ""
		if h := b.HttpHeader(); h != nil {
			ctype = h.Get("Content-Type")
		}
		p, err := b.PayloadBytes()
		if err != nil {
			return nil, "", "empty"
		}
		r = p
		if h := b.HttpHeader(); h != nil {
			var why string
			if r, why = decoded(r, h, chunked(b.ProtocolHeaderBytes())); why != "" {
				return nil, "", why
			}
		}
	default:
		if strings.HasPrefix(strings.ToLower(ctype), "application/http") {
			// An HTTP block the library could not parse as a response.
			return nil, "", "non_text"
		}
		p, err := b.RawBytes()
		if err != nil {
			return nil, "", "empty"
		}
		r = p
	}
	// Read one byte past the limit so a larger payload is reported as
	// such without holding it all.
	raw, err := io.ReadAll(io.LimitReader(r, int64(f.MaxBytes)+1))
	if err != nil || len(raw) == 0 {
		return nil, "", "empty"
	}
	mt := textType(ctype, raw)
	if mt == "" {
		return nil, "", "non_text"
	}
	if len(raw) > f.MaxBytes {
		return raw, mt, ""
	}
	return toUTF8(raw, ctype, mt), mt, ""
}

// toUTF8 converts a payload to UTF-8 from the charset its Content-Type
// declares. Without one, valid UTF-8 is kept as it is (the HTML standard's
// windows-1252 default would garble it) and other bytes are decoded as an
// HTML page's meta element says, else as windows-1252.
func toUTF8(raw []byte, ctype, mediaType string) []byte {
	var enc encoding.Encoding
	if _, params, err := mime.ParseMediaType(ctype); err == nil && params["charset"] != "" {
		e, name := charset.Lookup(params["charset"])
		if e == nil || name == "utf-8" {
			return raw
		}
		enc = e
	} else if utf8.Valid(raw) {
		return raw
	} else {
		enc, _, _ = charset.DetermineEncoding(raw, mediaType)
	}
	if utf, err := enc.NewDecoder().Bytes(raw); err == nil {
		return utf
	}
	return raw
}

// decoded undoes the transfer and content codings of an HTTP payload as
// the crawler stored it (WARC keeps the bytes as received): chunked,
// gzip, deflate. Another content coding (br, zstd) is skipped as
// "content_encoding". The caller bounds what it reads, so a compression
// bomb costs at most the size limit.
//
// Some tools store the decoded payload but keep the headers; a payload
// that does not start as its declared coding would is taken as it is.
func decoded(r io.Reader, h *http.Header, isChunked bool) (io.Reader, string) {
	if isChunked {
		br := bufio.NewReader(r)
		if head, _ := br.Peek(20); looksChunked(head) {
			r = httputil.NewChunkedReader(br)
		} else {
			r = br
		}
	}
	switch ce := strings.ToLower(strings.TrimSpace(h.Get("Content-Encoding"))); ce {
	case "", "identity":
	case "gzip", "x-gzip":
		br := bufio.NewReader(r)
		if head, _ := br.Peek(2); len(head) < 2 || head[0] != 0x1f || head[1] != 0x8b {
			return br, ""
		}
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, "content_encoding"
		}
		r = zr
	case "deflate":
		// HTTP's deflate is zlib-wrapped; some servers send raw deflate.
		br := bufio.NewReader(r)
		if head, err := br.Peek(2); err == nil && (uint16(head[0])<<8|uint16(head[1]))%31 == 0 && head[0]&0x0f == 8 {
			zr, err := zlib.NewReader(br)
			if err != nil {
				return nil, "content_encoding"
			}
			r = zr
		} else {
			r = flate.NewReader(br)
		}
	default:
		return nil, "content_encoding"
	}
	return r, ""
}

// looksChunked reports whether b starts with a chunk-size line: hex
// digits, an optional extension, CRLF.
func looksChunked(b []byte) bool {
	i := 0
	for i < len(b) && strings.IndexByte("0123456789abcdefABCDEF", b[i]) >= 0 {
		i++
	}
	if i == 0 {
		return false
	}
	rest := b[i:]
	if j := bytes.IndexByte(rest, '\n'); j >= 0 {
		rest = rest[:j+1]
	}
	return bytes.HasSuffix(rest, []byte("\r\n")) && (len(rest) == 2 || rest[0] == ';')
}

// chunked reports whether raw HTTP response headers declare a chunked
// transfer coding (net/http's parsed header no longer holds it).
func chunked(head []byte) bool {
	for _, line := range bytes.Split(head, []byte("\n")) {
		name, value, ok := bytes.Cut(line, []byte(":"))
		if ok && strings.EqualFold(string(bytes.TrimSpace(name)), "Transfer-Encoding") &&
			bytes.Contains(bytes.ToLower(value), []byte("chunked")) {
			return true
		}
	}
	return false
}

// textType returns text/html or text/plain for a payload neardup reads,
// "" for others. Without a declared type the payload is sniffed.
func textType(ctype string, body []byte) string {
	if ctype == "" {
		ctype = http.DetectContentType(body)
	}
	mt, _, err := mime.ParseMediaType(ctype)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(strings.Split(ctype, ";")[0]))
	}
	switch mt {
	case "text/html", "application/xhtml+xml":
		return "text/html"
	case "text/plain":
		return "text/plain"
	}
	return ""
}
