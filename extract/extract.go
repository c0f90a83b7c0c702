package extract

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/neardup/neardup/stream"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

var (
	// ErrBinary marks content that is not text (NUL bytes or mostly
	// control characters).
	ErrBinary = errors.New("extract: binary content")
	// ErrTooLarge marks content over the configured size limit.
	ErrTooLarge = errors.New("extract: content too large")
	// ErrEmpty marks content with no text.
	ErrEmpty = errors.New("extract: empty content")
)

// Format is the kind of content.
type Format int

const (
	// Text is plain text (any encoding the sketcher accepts).
	Text Format = iota
	// HTML is an HTML document; its visible text is extracted.
	HTML
)

// FormatOf guesses the format from a file name by [stream.IsHTMLName]:
// .html, .htm and .xhtml are HTML.
func FormatOf(name string) Format {
	if stream.IsHTMLName(name) {
		return HTML
	}
	return Text
}

// ReadFile reads at most limit bytes of the file at path and returns its
// text. A larger file fails with [ErrTooLarge] after reading limit+1 bytes,
// so memory stays bounded whatever the file size.
func ReadFile(path string, limit int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f, FormatOf(path), limit)
}

// Read reads at most limit bytes from r and returns the text in format fm.
func Read(r io.Reader, fm Format, limit int) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if len(b) > limit {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limit)
	}
	return Bytes(b, fm)
}

// Bytes returns the text of b in format fm, checking that it is text.
func Bytes(b []byte, fm Format) ([]byte, error) {
	if err := CheckText(b); err != nil {
		return nil, err
	}
	if fm == HTML {
		b = HTMLText(b)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, ErrEmpty
	}
	return b, nil
}

// CheckText returns [ErrBinary] when b looks binary: a NUL byte in the
// first 8 KiB, or more than 10% of those bytes being C0 control characters
// other than tab, newline, carriage return and form feed.
func CheckText(b []byte) error {
	head := b[:min(len(b), 8192)]
	ctl := 0
	for i := 0; i < len(head); {
		// Eight bytes at a time while none is below 0x20 (text is mostly
		// such runs): no byte to look at one by one.
		if i+8 <= len(head) && !hasControl(binary.LittleEndian.Uint64(head[i:])) {
			i += 8
			continue
		}
		end := min(i+8, len(head))
		for _, c := range head[i:end] {
			switch {
			case c == 0:
				return fmt.Errorf("%w: NUL byte", ErrBinary)
			case c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f':
				ctl++
			}
		}
		i = end
	}
	if len(head) > 0 && ctl*10 > len(head) {
		return fmt.Errorf("%w: %d control bytes in the first %d", ErrBinary, ctl, len(head))
	}
	return nil
}

// hasControl reports whether one of the eight bytes of v is below 0x20
// (the has-less-than test of the bit-twiddling folklore, exact for a
// bound of at most 0x80).
func hasControl(v uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	return (v-ones*0x20)&^v&highs != 0
}

// HTMLText returns the visible text of an HTML document: text nodes outside
// script, style, noscript, template, head metadata and form controls, with
// block elements separated by newlines. Malformed HTML is parsed the way
// browsers do; HTMLText never fails.
func HTMLText(b []byte) []byte {
	var out bytes.Buffer
	z := html.NewTokenizer(bytes.NewReader(b))
	skip := 0
	for {
		switch z.Next() {
		case html.ErrorToken:
			return out.Bytes()
		case html.StartTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			if skipped(a) {
				skip++
			}
			if block(a) {
				out.WriteByte('\n')
			}
		case html.SelfClosingTagToken:
			name, _ := z.TagName()
			if block(atom.Lookup(name)) {
				out.WriteByte('\n')
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			if skipped(a) && skip > 0 {
				skip--
			}
			if block(a) {
				out.WriteByte('\n')
			}
		case html.TextToken:
			if skip == 0 {
				out.Write(z.Text())
				out.WriteByte(' ')
			}
		}
	}
}

func skipped(a atom.Atom) bool {
	switch a {
	case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Title, atom.Select, atom.Textarea, atom.Svg, atom.Iframe, atom.Object:
		return true
	}
	return false
}

func block(a atom.Atom) bool {
	switch a {
	case atom.P, atom.Div, atom.Br, atom.Li, atom.Tr, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6,
		atom.Article, atom.Section, atom.Header, atom.Footer, atom.Blockquote, atom.Pre, atom.Td, atom.Th, atom.Hr:
		return true
	}
	return false
}
