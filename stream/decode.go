package stream

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Document is one input document after decoding.
type Document struct {
	ID   string
	URL  string
	Text []byte // plain text, or HTML when IsHTML
	// IsHTML marks Text as HTML still to be reduced to its main text.
	IsHTML bool
	TS     time.Time       // zero when absent
	Meta   json.RawMessage // the input's meta object, verbatim
}

// Reason is a stable, machine-readable cause of a rejected input.
type Reason string

// Reasons for rejecting an input. They appear in dead letters.
const (
	ReasonMalformed  Reason = "malformed_json"     // not a JSON object
	ReasonMissingID  Reason = "missing_id"         // no id (and no record key)
	ReasonBadID      Reason = "bad_id"             // id not a non-empty string of valid UTF-8 of at most MaxIDBytes
	ReasonNoContent  Reason = "no_content"         // neither text nor html
	ReasonBothBodies Reason = "both_text_and_html" // both text and html
	ReasonEmpty      Reason = "empty_text"         // text (or extracted html) has no words
	ReasonTooLarge   Reason = "too_large"          // over sketch.max_bytes
	ReasonBadTS      Reason = "bad_ts"             // ts neither RFC 3339 nor epoch milliseconds, or outside years 0–9999
	ReasonBadMeta    Reason = "bad_meta"           // meta not an object
	ReasonBinary     Reason = "binary"             // content is not text
	ReasonBadField   Reason = "bad_field"          // a known field of the wrong type
	// Failures after decoding. The document may already be in the index
	// (without a verdict); a replay of it is decided again.
	ReasonEventTooLarge Reason = "event_too_large" // the event encodes to more than Config.MaxEventBytes
	ReasonUnencodable   Reason = "unencodable"     // the event cannot be encoded as JSON
	ReasonInternal      Reason = "internal_error"  // processing the document panicked (a bug); the run goes on
	// ReasonBadVerdict: a verdict the index holds does not decode: the
	// document's own (it is a replay), or that of the earlier document it
	// duplicates (its cluster is unknown). The error names the id.
	ReasonBadVerdict Reason = "bad_stored_verdict"
)

// ErrInvalid is wrapped by every [*InvalidError].
var ErrInvalid = errors.New("invalid document")

// InvalidError says why an input was rejected. It carries the id when one
// was found, so a dead letter can name the document.
type InvalidError struct {
	Reason Reason
	ID     string
	Detail string
}

func (e *InvalidError) Error() string {
	if e.Detail == "" {
		return fmt.Sprintf("invalid document: %s", e.Reason)
	}
	return fmt.Sprintf("invalid document: %s: %s", e.Reason, e.Detail)
}

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *InvalidError) Unwrap() error { return ErrInvalid }

func invalid(r Reason, id, format string, args ...any) error {
	return &InvalidError{Reason: r, ID: id, Detail: fmt.Sprintf(format, args...)}
}

// MaxIDBytes bounds document ids. Ids up to 62 bytes keep the Redis index's
// id hashes in their compact encoding; longer ones cost more memory.
const MaxIDBytes = 1024

// CheckID reports why id cannot name a document: it is empty, longer than
// MaxIDBytes or not valid UTF-8. Every id passes it before it reaches the
// index, whichever consumer read it.
func CheckID(id string) error {
	switch {
	case id == "":
		return errors.New("id is empty")
	case len(id) > MaxIDBytes:
		return fmt.Errorf("id of %d bytes: longer than %d", len(id), MaxIDBytes)
	case !utf8.ValidString(id):
		return errors.New("id is not valid UTF-8")
	}
	return nil
}

// wire is the JSON input contract.
type wire struct {
	ID   json.RawMessage `json:"id"`
	URL  json.RawMessage `json:"url"`
	Text json.RawMessage `json:"text"`
	HTML json.RawMessage `json:"html"`
	TS   json.RawMessage `json:"ts"`
	Meta json.RawMessage `json:"meta"`
}

// Decoder turns JSON objects (JSON lines, Kafka record values) into
// Documents. The zero value is not usable; see [NewDecoder].
type Decoder struct {
	maxBytes int
}

// NewDecoder returns a decoder that rejects documents whose input is
// larger than maxBytes (the body limit plus 64 KiB for the envelope).
func NewDecoder(maxBytes int) *Decoder { return &Decoder{maxBytes: maxBytes} }

// DecodeJSON decodes one JSON object of the input contract:
//
//	{"id": string, "url"?: string, "text"?: string, "html"?: string,
//	 "ts"?: RFC 3339 string or epoch milliseconds, "meta"?: object}
//
// with exactly one of text and html. Unknown fields are ignored. When the
// object has no id, fallbackID is used (a Kafka record key); pass "" for
// none. Failures are [*InvalidError] values, never panics.
func (d *Decoder) DecodeJSON(b []byte, fallbackID string) (Document, error) {
	if len(b) > d.maxBytes+64<<10 {
		return Document{}, invalid(ReasonTooLarge, fallbackID, "%d bytes > limit %d", len(b), d.maxBytes)
	}
	if doc, ok := d.decodeFast(b, fallbackID); ok {
		return doc, nil
	}
	return d.decodeFull(b, fallbackID)
}

// decodeFull decodes b with encoding/json; it decides every input the
// fast path declines, errors included.
func (d *Decoder) decodeFull(b []byte, fallbackID string) (Document, error) {
	var w wire
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&w); err != nil {
		return Document{}, invalid(ReasonMalformed, fallbackID, "%v", err)
	}
	// dec.More would let a stray ']' or '}' after the object pass.
	if len(bytes.TrimLeft(b[dec.InputOffset():], " \t\r\n")) > 0 {
		return Document{}, invalid(ReasonMalformed, fallbackID, "trailing data after the object")
	}
	var doc Document
	id, err := optString(w.ID, "id")
	switch {
	case err != nil && isNull(w.ID):
	case err != nil:
		return Document{}, invalid(ReasonBadID, fallbackID, "id must be a string")
	case present(w.ID):
		// encoding/json turns invalid UTF-8 and unpaired surrogate escapes
		// into U+FFFD, so that "x\xff" and "x\ud800" would both decode to
		// "x\ufffd" and collide: the raw string is checked first.
		if err := checkRawString(w.ID); err != nil {
			return Document{}, invalid(ReasonBadID, Shorten(strings.ToValidUTF8(id, "?")), "id %v", err)
		}
		if id == "" {
			return Document{}, invalid(ReasonBadID, fallbackID, "id is empty")
		}
	}
	if id == "" {
		id = fallbackID
	}
	if id == "" {
		return Document{}, invalid(ReasonMissingID, "", "no id field and no record key")
	}
	if err := CheckID(id); err != nil {
		return Document{}, invalid(ReasonBadID, Shorten(strings.ToValidUTF8(id, "?")), "%v", err)
	}
	doc.ID = id
	if doc.URL, err = optString(w.URL, "url"); err != nil {
		return Document{}, invalid(ReasonBadField, id, "%v", err)
	}
	text, err := optString(w.Text, "text")
	if err != nil {
		return Document{}, invalid(ReasonBadField, id, "%v", err)
	}
	html, err := optString(w.HTML, "html")
	if err != nil {
		return Document{}, invalid(ReasonBadField, id, "%v", err)
	}
	hasText, hasHTML := present(w.Text), present(w.HTML)
	switch {
	case hasText && hasHTML:
		return Document{}, invalid(ReasonBothBodies, id, "give exactly one of text and html")
	case !hasText && !hasHTML:
		return Document{}, invalid(ReasonNoContent, id, "give exactly one of text and html")
	case hasHTML:
		doc.Text, doc.IsHTML = []byte(html), true
	default:
		doc.Text = []byte(text)
	}
	if len(doc.Text) > d.maxBytes {
		return Document{}, invalid(ReasonTooLarge, id, "%d bytes > limit %d", len(doc.Text), d.maxBytes)
	}
	if doc.TS, err = parseTS(w.TS); err != nil {
		return Document{}, invalid(ReasonBadTS, id, "%v", err)
	}
	if present(w.Meta) {
		if m := bytes.TrimSpace(w.Meta); len(m) == 0 || m[0] != '{' {
			return Document{}, invalid(ReasonBadMeta, id, "meta must be an object")
		}
		doc.Meta = append(json.RawMessage(nil), w.Meta...)
	}
	return doc, nil
}

// DecodeRecord decodes a Kafka record: a JSON value of the input contract,
// or, when contentType is "text/plain", the value itself as the text with
// the key as id.
func (d *Decoder) DecodeRecord(key, value []byte, contentType string) (Document, error) {
	ct, _, _ := strings.Cut(contentType, ";")
	if strings.EqualFold(strings.TrimSpace(ct), "text/plain") {
		id := string(key)
		if id == "" {
			return Document{}, invalid(ReasonMissingID, "", "text/plain record without a key")
		}
		if err := CheckID(id); err != nil {
			return Document{}, invalid(ReasonBadID, Shorten(strings.ToValidUTF8(id, "?")), "key: %v", err)
		}
		if len(value) > d.maxBytes {
			return Document{}, invalid(ReasonTooLarge, id, "%d bytes > limit %d", len(value), d.maxBytes)
		}
		return Document{ID: id, Text: value}, nil
	}
	return d.DecodeJSON(value, string(key))
}

func present(raw json.RawMessage) bool { return len(raw) > 0 && !isNull(raw) }

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

func optString(raw json.RawMessage, name string) (string, error) {
	if !present(raw) {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%s must be a string", name)
	}
	return s, nil
}

// checkRawString reports a JSON string literal whose bytes are not valid
// UTF-8 or that escapes an unpaired UTF-16 surrogate: what encoding/json
// would silently replace by U+FFFD.
func checkRawString(raw []byte) error {
	raw = bytes.TrimSpace(raw)
	if !utf8.Valid(raw) {
		return errors.New("is not valid UTF-8")
	}
	if len(raw) < 2 || raw[0] != '"' {
		return errors.New("is not a string")
	}
	s := raw[1 : len(raw)-1]
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		if i+1 >= len(s) || s[i+1] != 'u' {
			i++ // a one-character escape (the decoder checked it)
			continue
		}
		_, n, err := unicodeEscape(s[i:])
		if err != nil {
			return err
		}
		i += n - 1
	}
	return nil
}

// unicodeEscape decodes the \uXXXX escape at the start of s, with the low
// half that must follow a high surrogate, and returns the rune and the
// bytes it spans (6 or 12). An unpaired surrogate is an error: it has no
// UTF-8 encoding, and encoding/json would turn it into U+FFFD.
func unicodeEscape(s []byte) (r rune, n int, err error) {
	r, ok := hex4(s[2:])
	if !ok {
		return 0, 0, errors.New("has a bad \\u escape")
	}
	switch {
	case r >= 0xDC00 && r <= 0xDFFF:
		return 0, 0, fmt.Errorf("escapes an unpaired surrogate \\u%04x", r)
	case r >= 0xD800 && r <= 0xDBFF:
		var lo rune
		ok := len(s) >= 8 && s[6] == '\\' && s[7] == 'u'
		if ok {
			lo, ok = hex4(s[8:])
		}
		if !ok || lo < 0xDC00 || lo > 0xDFFF {
			return 0, 0, fmt.Errorf("escapes an unpaired surrogate \\u%04x", r)
		}
		return 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00), 12, nil
	}
	return r, 6, nil
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	v, err := strconv.ParseUint(string(b[:4]), 16, 16)
	return rune(v), err == nil
}

// parseTS accepts an RFC 3339 string or epoch milliseconds (a number or a
// numeric string), for a time in years 0 to 9999 (UTC): the range RFC 3339,
// and so the event encoding, can represent.
func parseTS(raw json.RawMessage) (time.Time, error) {
	if !present(raw) {
		return time.Time{}, nil
	}
	if raw[0] != '"' {
		return tsFrom(string(raw), raw, false)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return time.Time{}, err
	}
	return tsFrom(s, raw, true)
}

// tsFrom parses ts given as s, the string's value when quoted, else the
// number's text; raw is the JSON value, for errors.
func tsFrom(s string, raw []byte, quoted bool) (time.Time, error) {
	var t time.Time
	parsed := false
	if quoted {
		if p, err := time.Parse(time.RFC3339Nano, s); err == nil {
			t, parsed = p.UTC(), true
		}
	}
	if !parsed {
		ms, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("ts %s: want an RFC 3339 string or epoch milliseconds", Shorten(string(raw)))
		}
		t = time.UnixMilli(ms).UTC()
	}
	if y := t.Year(); y < 0 || y > 9999 {
		return time.Time{}, fmt.Errorf("ts %s: year %d outside 0–9999", Shorten(string(raw)), y)
	}
	return t, nil
}

// Shorten cuts s to 64 bytes of valid UTF-8 (marked with an ellipsis) for
// an error message or a dead letter.
func Shorten(s string) string {
	if len(s) <= 64 {
		return s
	}
	return strings.ToValidUTF8(s[:64], "") + "…"
}
