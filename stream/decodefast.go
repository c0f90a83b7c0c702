package stream

import (
	"bytes"
	"encoding/binary"
	"unicode/utf8"
)

// The fast path: one pass over the bytes for the common shape of the input
// contract, an object whose known fields are strings (ts also a number) and
// whose meta and unknown fields are well-formed JSON. It never decides an
// error: on anything it does not handle, or any document the contract
// rejects, it declines and the full decoder (encoding/json) decides. So
// the two paths agree by construction on every input it accepts, which
// TestDecodeFastAgrees and FuzzDecodeFast check against encoding/json.
//
// It declines on, among others: a null or non-string known field, a key
// with an escape or one that matches a known name only case-insensitively
// (encoding/json folds case), a duplicate known key, a string with invalid
// UTF-8 or an unpaired surrogate escape (encoding/json substitutes U+FFFD),
// nesting deeper than fastMaxDepth, and trailing bytes.

// Fields of the input contract, as bits of the set seen.
const (
	fieldID uint8 = 1 << iota
	fieldURL
	fieldText
	fieldHTML
	fieldTS
	fieldMeta
	fieldUnknown uint8 = 0
	fieldDecline uint8 = 0xff
)

var fieldNames = [...]string{"id", "url", "text", "html", "ts", "meta"}

// fastMaxDepth bounds the nesting the fast path skips; deeper input goes to
// the full decoder (whose own limit is 10,000).
const fastMaxDepth = 64

// fieldOf maps a raw (unescaped) key to its field; a case variant of a
// known name is declined, since encoding/json would match it.
func fieldOf(key []byte) uint8 {
	switch string(key) {
	case "id":
		return fieldID
	case "url":
		return fieldURL
	case "text":
		return fieldText
	case "html":
		return fieldHTML
	case "ts":
		return fieldTS
	case "meta":
		return fieldMeta
	}
	for _, n := range fieldNames {
		if bytes.EqualFold(key, []byte(n)) {
			return fieldDecline
		}
	}
	return fieldUnknown
}

// decodeFast decodes b when it has the common shape and the full decoder
// would accept it, with the same result; ok is false otherwise.
func (d *Decoder) decodeFast(b []byte, fallbackID string) (doc Document, ok bool) {
	var (
		seen                  uint8
		id, url, body, ts, mt []byte
		tsQuoted              bool
	)
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return Document{}, false
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return Document{}, false // no id, no body: an error
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return Document{}, false
		}
		k := i + 1
		j := k
		for j < len(b) && b[j] != '"' {
			if b[j] == '\\' || b[j] < 0x20 {
				return Document{}, false
			}
			j++
		}
		if j >= len(b) {
			return Document{}, false
		}
		f := fieldOf(b[k:j])
		i = skipWS(b, j+1)
		if i >= len(b) || b[i] != ':' {
			return Document{}, false
		}
		i = skipWS(b, i+1)
		if f == fieldDecline || seen&f != 0 {
			return Document{}, false
		}
		seen |= f
		switch f {
		case fieldUnknown:
			i, ok = skipValue(b, i, 0)
		case fieldMeta:
			if i >= len(b) || b[i] != '{' {
				return Document{}, false
			}
			end, ok := skipValue(b, i, 0)
			if !ok {
				return Document{}, false
			}
			mt, i = b[i:end], end
		case fieldTS:
			var end int
			if i < len(b) && b[i] == '"' {
				var esc bool
				if end, esc, ok = scanString(b, i); !ok || esc {
					return Document{}, false
				}
				ts, tsQuoted = b[i+1:end-1], true
			} else {
				if end, ok = skipNumber(b, i); !ok {
					return Document{}, false
				}
				ts = b[i:end]
			}
			i = end
		default:
			var s []byte
			s, i, ok = decodeString(b, i)
			switch f {
			case fieldID:
				id = s
			case fieldURL:
				url = s
			default:
				body = s
			}
		}
		if !ok {
			return Document{}, false
		}
		i = skipWS(b, i)
		if i >= len(b) {
			return Document{}, false
		}
		if b[i] == ',' {
			i = skipWS(b, i+1)
			continue
		}
		if b[i] != '}' {
			return Document{}, false
		}
		break
	}
	if skipWS(b, i+1) != len(b) {
		return Document{}, false
	}

	// The contract's checks, in the full decoder's terms; any failure is
	// the full decoder's to report.
	doc.ID = fallbackID
	if seen&fieldID != 0 {
		doc.ID = string(id)
	}
	if CheckID(doc.ID) != nil {
		return Document{}, false
	}
	switch seen & (fieldText | fieldHTML) {
	case fieldText:
	case fieldHTML:
		doc.IsHTML = true
	default:
		return Document{}, false
	}
	if len(body) > d.maxBytes {
		return Document{}, false
	}
	if seen&fieldTS != 0 {
		t, err := tsFrom(string(ts), ts, tsQuoted)
		if err != nil {
			return Document{}, false
		}
		doc.TS = t
	}
	doc.URL = string(url)
	doc.Text = body
	if mt != nil {
		doc.Meta = bytes.Clone(mt)
	}
	return doc, true
}

func skipWS(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// special marks the bytes that end a plain run inside a JSON string: the
// quote, the backslash and the control characters, which JSON forbids raw.
var special = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// scanString checks the string literal at b[i] (escapes well formed, no raw
// control characters) and returns the index after its closing quote and
// whether it has escapes. It does not check UTF-8 (encoding/json does not
// either: it substitutes U+FFFD when it decodes).
func scanString(b []byte, i int) (end int, esc, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, false, false
	}
	for j := i + 1; j < len(b); j++ {
		// Eight bytes at a time while none is a quote, a backslash or a
		// control character (most of a document's text).
		for j+8 <= len(b) && !specialWord(binary.LittleEndian.Uint64(b[j:])) {
			j += 8
		}
		if j >= len(b) {
			break
		}
		c := b[j]
		if !special[c] {
			continue
		}
		switch {
		case c == '"':
			return j + 1, esc, true
		case c < 0x20:
			return 0, false, false
		}
		esc = true
		if j+1 >= len(b) {
			return 0, false, false
		}
		switch b[j+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			j++
		case 'u':
			if _, ok := hex4(b[j+2:]); !ok {
				return 0, false, false
			}
			j += 5
		default:
			return 0, false, false
		}
	}
	return 0, false, false
}

// specialWord reports whether one of the eight bytes of v may be special
// in a string literal: '"', '\\' or below 0x20 (exact for "none": the
// zero-byte tests below have no false negatives).
func specialWord(v uint64) bool {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	zero := func(x uint64) uint64 { return (x - ones) &^ x & highs }
	return (zero(v^('"'*ones)) | zero(v^('\\'*ones)) | (v-0x20*ones)&^v&highs) != 0
}

// decodeString decodes the string literal at b[i] into a new slice. It
// declines invalid UTF-8 and unpaired surrogate escapes, which
// encoding/json would replace by U+FFFD.
func decodeString(b []byte, i int) (s []byte, end int, ok bool) {
	end, esc, ok := scanString(b, i)
	if !ok {
		return nil, 0, false
	}
	raw := b[i+1 : end-1]
	if !utf8.Valid(raw) {
		return nil, 0, false
	}
	if !esc {
		return bytes.Clone(raw), end, true
	}
	out := make([]byte, 0, len(raw))
	for k := 0; k < len(raw); {
		n := bytes.IndexByte(raw[k:], '\\')
		if n < 0 {
			out = append(out, raw[k:]...)
			break
		}
		out = append(out, raw[k:k+n]...)
		k += n
		switch c := raw[k+1]; c { // scanString checked the escape
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, n, err := unicodeEscape(raw[k:])
			if err != nil {
				return nil, 0, false
			}
			out = utf8.AppendRune(out, r)
			k += n
			continue
		default: // '"', '\\', '/'
			out = append(out, c)
		}
		k += 2
	}
	return out, end, true
}

// skipNumber returns the index after the JSON number at b[i].
func skipNumber(b []byte, i int) (int, bool) {
	digits := func(i int) int {
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return 0, false
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		i = digits(i)
	default:
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return 0, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return 0, false
		}
		i = j
	}
	return i, true
}

// skipValue returns the index after the JSON value at b[i], checking its
// syntax as encoding/json would.
func skipValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch c := b[i]; {
	case c == '"':
		end, _, ok := scanString(b, i)
		return end, ok
	case c == '{' || c == '[':
		if depth >= fastMaxDepth {
			return 0, false
		}
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == closer {
			return i + 1, true
		}
		for {
			var ok bool
			if c == '{' {
				if i, _, ok = scanString(b, i); !ok {
					return 0, false
				}
				if i = skipWS(b, i); i >= len(b) || b[i] != ':' {
					return 0, false
				}
				i = skipWS(b, i+1)
			}
			if i, ok = skipValue(b, i, depth+1); !ok {
				return 0, false
			}
			i = skipWS(b, i)
			switch {
			case i >= len(b):
				return 0, false
			case b[i] == ',':
				i = skipWS(b, i+1)
			case b[i] == closer:
				return i + 1, true
			default:
				return 0, false
			}
		}
	case c == '-' || (c >= '0' && c <= '9'):
		return skipNumber(b, i)
	default:
		for _, lit := range [...]string{"true", "false", "null"} {
			if bytes.HasPrefix(b[i:], []byte(lit)) {
				return i + len(lit), true
			}
		}
		return 0, false
	}
}
