package consumer

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gowarc "github.com/nlnwa/gowarc/v3"
	"golang.org/x/text/encoding/charmap"

	"github.com/neardup/neardup/internal/dataset"
	"github.com/neardup/neardup/internal/warctest"
	"github.com/neardup/neardup/stream"
)

// excerpt returns n bytes of a Gutenberg text from byte off, cut to whole
// lines, read in place from the shared data.
func excerpt(t *testing.T, file string, off, n int) string {
	t.Helper()
	b, err := os.ReadFile(dataset.Gutenberg(t, file))
	if err != nil {
		t.Fatal(err)
	}
	b = b[off : off+n]
	b = b[bytes.IndexByte(b, '\n')+1 : bytes.LastIndexByte(b, '\n')+1]
	return string(b)
}

func page(title, text string) []byte {
	var sb strings.Builder
	fmt.Fprintf(&sb, "<!doctype html><html><head><title>%s</title></head><body><article>", html.EscapeString(title))
	for _, p := range strings.Split(text, "\n\n") {
		fmt.Fprintf(&sb, "<p>%s</p>\n", html.EscapeString(p))
	}
	sb.WriteString("</article></body></html>")
	return []byte(sb.String())
}

// readAll runs f and returns every item it sent.
func readAll(t *testing.T, f *Files) []stream.Item {
	t.Helper()
	out := make(chan stream.Item, 1024)
	err := f.Run(context.Background(), out)
	close(out)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	var items []stream.Item
	for it := range out {
		items = append(items, it)
	}
	return items
}

// A WARC written by the library, plain and gzip member-per-record: HTML
// and text records become documents with their URI, date and offset;
// requests, images and a 404 are skipped and counted; a revisit is the
// original's payload, linked to it in its meta; a Latin-1 page arrives as
// UTF-8.
func TestWARCRecords(t *testing.T) {
	alice := excerpt(t, "pg11.txt", 20000, 6000)
	moby := excerpt(t, "pg2701.txt", 50000, 6000)
	latin1, err := charmap.ISO8859_1.NewEncoder().Bytes(page("Café", "Déjà vu in the café.\n\nTout à fait."))
	if err != nil {
		t.Fatal(err)
	}
	recs := []warctest.Record{
		warctest.Request("https://example.org/alice"),
		warctest.Response("https://example.org/alice", "text/html; charset=utf-8", page("Alice", alice)),
		warctest.Resource("https://example.org/moby.txt", "text/plain", []byte(moby)),
		warctest.Response("https://example.org/logo.png", "image/png", []byte("\x89PNG\r\n\x1a\n\x00\x00")),
		warctest.HTTPResponse("https://example.org/gone", 404, "text/html", page("Not found", "No such page.")),
		warctest.Revisit("https://mirror.example.org/alice", 1),
		warctest.Response("https://example.org/cafe", "text/html; charset=iso-8859-1", latin1),
	}
	for _, tt := range []struct {
		name string
		file string
		ids  WARCID
	}{
		{"plain", "crawl.warc", WARCIDURI},
		{"gzip", "crawl.warc.gz", WARCIDURI},
		{"record ids", "crawl.warc.gz", WARCIDRecord},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tt.file)
			offsets := warctest.Write(t, path, recs...)
			var progress int64
			f := &Files{Paths: []string{path}, MaxBytes: 1 << 20, WARCID: tt.ids, Progress: func(n int64) { progress = n }}
			items := readAll(t, f)
			if len(items) != 4 {
				t.Fatalf("%d items, want 4 (alice, moby, revisit, cafe): %+v", len(items), items)
			}
			wantRec := []int{1, 2, 5, 6}
			var metas []map[string]string
			for i, it := range items {
				if it.Err != nil {
					t.Fatalf("item %d: %v", i, it.Err)
				}
				r := recs[wantRec[i]]
				if it.Doc.URL != r.URI || it.Source.File != path || it.Source.Offset == nil || *it.Source.Offset != offsets[wantRec[i]] {
					t.Errorf("item %d: url %q source %+v, want %q at %d", i, it.Doc.URL, it.Source, r.URI, offsets[wantRec[i]])
				}
				if it.Doc.TS.IsZero() {
					t.Errorf("item %d: no ts", i)
				}
				var m map[string]string
				if err := json.Unmarshal(it.Doc.Meta, &m); err != nil {
					t.Fatalf("item %d meta %s: %v", i, it.Doc.Meta, err)
				}
				metas = append(metas, m)
				wantID := r.URI
				if tt.ids == WARCIDRecord {
					wantID = m["warc_record_id"]
					if !strings.HasPrefix(wantID, "urn:uuid:") {
						t.Errorf("item %d: record id %q", i, wantID)
					}
				}
				if it.Doc.ID != wantID {
					t.Errorf("item %d: id %q, want %q", i, it.Doc.ID, wantID)
				}
			}
			if !items[0].Doc.IsHTML || !bytes.Equal(items[0].Doc.Text, page("Alice", alice)) {
				t.Errorf("alice: html %v, payload without the HTTP headers expected", items[0].Doc.IsHTML)
			}
			if items[1].Doc.IsHTML || string(items[1].Doc.Text) != moby {
				t.Errorf("moby: html %v, text differs", items[1].Doc.IsHTML)
			}
			if !bytes.Equal(items[2].Doc.Text, items[0].Doc.Text) || metas[2]["warc_type"] != "revisit" || metas[2]["refers_to"] != metas[0]["warc_record_id"] ||
				metas[2]["refers_to_target_uri"] != recs[1].URI {
				t.Errorf("revisit: meta %v, original %v", metas[2], metas[0])
			}
			if !bytes.Contains(items[3].Doc.Text, []byte("Déjà vu in the café")) {
				t.Errorf("latin-1 page not converted to UTF-8: %q", items[3].Doc.Text[:200])
			}
			st := f.WARC
			want := map[string]int{"request": 1, "non_text": 1, "http_status": 1}
			if st.Records != 7 || st.Documents != 4 || st.Revisits != 1 || st.Malformed != 0 || fmt.Sprint(st.Skipped) != fmt.Sprint(want) {
				t.Errorf("stats %+v", st)
			}
			if fi, _ := os.Stat(path); progress != fi.Size() {
				t.Errorf("progress %d bytes, file %d", progress, fi.Size())
			}
			t.Log(st)
		})
	}
}

// A truncated or corrupted file ends in dead letters for what is broken;
// every record before it (and, for corruption, after it) is read, and Run
// does not fail.
func TestWARCMalformed(t *testing.T) {
	var recs []warctest.Record
	for i, file := range []string{"pg11.txt", "pg84.txt", "pg1342.txt", "pg1661.txt"} {
		recs = append(recs, warctest.Response(fmt.Sprintf("https://example.org/%d", i), "text/html", page(file, excerpt(t, file, 30000, 8000))))
	}
	for _, tt := range []struct {
		name    string
		file    string
		damage  func(b []byte, offsets []int64) []byte
		docs    int // documents read
		dead    int // dead letters
		resumed bool
	}{
		{"gzip cut in the last record", "t.warc.gz", func(b []byte, o []int64) []byte { return b[:o[3]+(int64(len(b))-o[3])/2] }, 3, 1, false},
		{"gzip cut in the header of the last record", "t.warc.gz", func(b []byte, o []int64) []byte { return b[:o[3]+5] }, 3, 1, false},
		{"plain cut in the last record", "t.warc", func(b []byte, o []int64) []byte { return b[:o[3]+(int64(len(b))-o[3])/2] }, 3, 1, false},
		{"gzip member corrupted in the middle", "t.warc.gz", func(b []byte, o []int64) []byte {
			for i := o[1] + 40; i < o[1]+400; i++ {
				b[i] ^= 0x5a
			}
			return b
		}, 3, 1, true},
		{"plain record header broken", "t.warc", func(b []byte, o []int64) []byte {
			copy(b[o[1]:], "WARC/1.1\r\nWARC-Type response\r\nbroken")
			return b
		}, 3, 1, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tt.file)
			offsets := warctest.Write(t, path, recs...)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, tt.damage(b, offsets), 0o644); err != nil {
				t.Fatal(err)
			}
			f := &Files{Paths: []string{path}, MaxBytes: 1 << 20}
			items := readAll(t, f)
			docs, dead := 0, 0
			for _, it := range items {
				var inv *stream.InvalidError
				switch {
				case it.Err == nil:
					docs++
				case errors.As(it.Err, &inv) && inv.Reason == ReasonMalformedWARC:
					dead++
					t.Logf("dead letter: %v (source %s at %d)", inv, it.Source.File, *it.Source.Offset)
				default:
					t.Errorf("unexpected item error %v", it.Err)
				}
			}
			if docs != tt.docs || dead < tt.dead {
				t.Errorf("%d documents and %d dead letters, want %d and ≥ %d", docs, dead, tt.docs, tt.dead)
			}
			if tt.resumed && (len(items) == 0 || items[len(items)-1].Err != nil || items[len(items)-1].Doc.URL != recs[3].URI) {
				t.Errorf("did not resume after the damage: last item %+v", items[len(items)-1])
			}
			t.Log(f.WARC)
			if f.WARC.Malformed != dead {
				t.Errorf("stats count %d malformed, %d dead letters", f.WARC.Malformed, dead)
			}
		})
	}
}

// "-" with FormatWARC reads a WARC from standard input; a revisit there
// takes its original's payload from memory, and one whose original is not
// in the input is counted as unresolved.
func TestWARCStdin(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "in.warc.gz")
	warctest.Write(t, path,
		warctest.Response("https://example.org/a", "text/html", page("A", excerpt(t, "pg84.txt", 40000, 4000))),
		warctest.Revisit("https://example.org/a", 0),
		warctest.Resource("https://example.org/b", "text/plain", []byte(excerpt(t, "pg11.txt", 40000, 3000))),
		warctest.Revisit("https://example.org/b2", 2))
	// A revisit of a record that is not in the input: the tail of another
	// (uncompressed) file, appended to the stream.
	other := filepath.Join(dir, "other.warc")
	off := warctest.Write(t, other, warctest.Resource("https://example.org/c", "text/plain", []byte("c")), warctest.Revisit("https://example.org/c", 0))
	in, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tail, err := os.ReadFile(other)
	if err != nil {
		t.Fatal(err)
	}
	f := &Files{Paths: []string{"-"}, MaxBytes: 1 << 20, Stdin: bytes.NewReader(append(in, tail[off[1]:]...)), Format: FormatWARC, WARCID: WARCIDRecord}
	items := readAll(t, f)
	if len(items) != 4 {
		t.Fatalf("%d items, want 4: %+v", len(items), items)
	}
	for i, it := range items {
		if it.Err != nil || it.Source.File != "-" {
			t.Fatalf("item %d: %v, source %+v", i, it.Err, it.Source)
		}
	}
	for _, pair := range [][2]int{{0, 1}, {2, 3}} {
		orig, rev := items[pair[0]], items[pair[1]]
		var m map[string]string
		if err := json.Unmarshal(rev.Doc.Meta, &m); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(orig.Doc.Text, rev.Doc.Text) || orig.Doc.IsHTML != rev.Doc.IsHTML || m["refers_to"] != orig.Doc.ID || rev.Doc.ID == orig.Doc.ID {
			t.Errorf("revisit %s (meta %v) does not carry %s's payload", rev.Doc.ID, m, orig.Doc.ID)
		}
	}
	if f.WARC.Revisits != 2 || f.WARC.Skipped["revisit_unresolved"] != 1 {
		t.Errorf("stats %+v", f.WARC)
	}
}

func TestParseFormatAndID(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Format
		ok   bool
	}{{"", FormatAuto, true}, {"auto", FormatAuto, true}, {"WARC", FormatWARC, true}, {"jsonl", FormatJSONLines, true}, {"csv", "", false}} {
		got, err := ParseFormat(tt.in)
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("ParseFormat(%q) = %q, %v", tt.in, got, err)
		}
	}
	for _, tt := range []struct {
		in   string
		want WARCID
		ok   bool
	}{{"", WARCIDURI, true}, {"uri", WARCIDURI, true}, {"record-id", WARCIDRecord, true}, {"url", "", false}} {
		got, err := ParseWARCID(tt.in)
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("ParseWARCID(%q) = %q, %v", tt.in, got, err)
		}
	}
}

func TestToUTF8(t *testing.T) {
	for _, tt := range []struct {
		name, ctype, mt, in, want string
	}{
		{"undeclared UTF-8 kept", "text/plain", "text/plain", "naïve “quotes”", "naïve “quotes”"},
		{"declared latin-1", "text/plain; charset=ISO-8859-1", "text/plain", "caf\xe9", "café"},
		{"declared utf-8", "text/html; charset=utf-8", "text/html", "café", "café"},
		{"meta charset", "text/html", "text/html", "<meta charset=\"iso-8859-1\"><p>caf\xe9", "<meta charset=\"iso-8859-1\"><p>café"},
		{"undeclared invalid UTF-8", "text/plain", "text/plain", "caf\xe9", "café"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(toUTF8([]byte(tt.in), tt.ctype, tt.mt)); got != tt.want {
				t.Errorf("toUTF8(%q, %q) = %q, want %q", tt.in, tt.ctype, got, tt.want)
			}
		})
	}
}

// Payloads kept for standard-input revisits stay within the budget, the
// oldest dropped first, and a dropped one no longer resolves.
func TestWARCStateBudget(t *testing.T) {
	s := newWARCState(11)
	build := func(typ gowarc.RecordType, uri string, hdr ...string) gowarc.WarcRecord {
		b := gowarc.NewRecordBuilder(typ, gowarc.WithAddMissingRecordId(true), gowarc.WithAddMissingDigest(true), gowarc.WithAddMissingContentLength(true))
		b.AddWarcHeader(gowarc.WarcTargetURI, uri)
		b.AddWarcHeader(gowarc.WarcDate, "2026-10-01T00:00:00Z")
		b.AddWarcHeader(gowarc.ContentType, "text/plain")
		for i := 0; i+1 < len(hdr); i += 2 {
			b.AddWarcHeader(hdr[i], hdr[i+1])
		}
		_, _ = b.WriteString("x")
		r, _, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	var recs []gowarc.WarcRecord
	for i, uri := range []string{"u:1", "u:2", "u:3"} {
		r := build(gowarc.Resource, uri)
		recs = append(recs, r)
		s.remember(r, &original{body: []byte(strings.Repeat("b", 4+i)), mediaType: "text/plain"})
	}
	if s.bytes > 11 || len(s.kept) != 2 {
		t.Errorf("kept %d payloads, %d bytes, budget 11", len(s.kept), s.bytes)
	}
	for i, want := range []bool{false, true, true} {
		rev := build(gowarc.Revisit, "u:x", gowarc.WarcRefersTo, "<"+strings.Trim(recs[i].RecordId(), "<>")+">")
		if _, ok := s.original(rev); ok != want {
			t.Errorf("revisit of record %d resolved %v, want %v", i, ok, want)
		}
	}
}

// HTTP payloads stored with their transfer and content codings are
// decoded; an unknown coding is skipped and counted.
func TestWARCEncodedPayloads(t *testing.T) {
	text := excerpt(t, "pg1661.txt", 30000, 5000)
	body := page("Holmes", text)
	var gz, zl, df bytes.Buffer
	gw := gzip.NewWriter(&gz)
	_, _ = gw.Write(body)
	_ = gw.Close()
	zw := zlib.NewWriter(&zl)
	_, _ = zw.Write(body)
	_ = zw.Close()
	fw, _ := flate.NewWriter(&df, flate.DefaultCompression)
	_, _ = fw.Write(body)
	_ = fw.Close()
	chunked := func(b []byte) []byte {
		var out bytes.Buffer
		for len(b) > 0 {
			n := min(len(b), 1000)
			fmt.Fprintf(&out, "%x\r\n%s\r\n", n, b[:n])
			b = b[n:]
		}
		out.WriteString("0\r\n\r\n")
		return out.Bytes()
	}
	for _, tt := range []struct {
		name    string
		headers map[string]string
		stored  []byte
		skipped string
	}{
		{"gzip", map[string]string{"Content-Encoding": "gzip"}, gz.Bytes(), ""},
		{"deflate (zlib)", map[string]string{"Content-Encoding": "deflate"}, zl.Bytes(), ""},
		{"deflate (raw)", map[string]string{"Content-Encoding": "deflate"}, df.Bytes(), ""},
		{"chunked", map[string]string{"Transfer-Encoding": "chunked"}, chunked(body), ""},
		{"chunked gzip", map[string]string{"Transfer-Encoding": "chunked", "Content-Encoding": "gzip"}, chunked(gz.Bytes()), ""},
		{"brotli", map[string]string{"Content-Encoding": "br"}, []byte("\x1b\x00\x00"), "content_encoding"},
		{"stored decoded, headers kept", map[string]string{"Transfer-Encoding": "chunked", "Content-Encoding": "gzip"}, body, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "enc.warc.gz")
			warctest.Write(t, path, warctest.EncodedResponse("https://example.org/h", "text/html", tt.headers, tt.stored))
			f := &Files{Paths: []string{path}, MaxBytes: 1 << 20}
			items := readAll(t, f)
			if tt.skipped != "" {
				if len(items) != 0 || f.WARC.Skipped[tt.skipped] != 1 {
					t.Errorf("items %d, stats %+v, want it skipped as %s", len(items), f.WARC, tt.skipped)
				}
				return
			}
			if len(items) != 1 || items[0].Err != nil || !bytes.Equal(items[0].Doc.Text, body) {
				got := ""
				if len(items) == 1 {
					got = clip(string(items[0].Doc.Text))
				}
				t.Fatalf("%d items (stats %+v), text %q, want the decoded page", len(items), f.WARC, got)
			}
		})
	}
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

func TestLooksChunked(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want bool
	}{
		{"3e8\r\n<html>", true},
		{"1a;name=v\r\nxx", true},
		{"<!doctype html>", false},
		{"add some text\r\n", false},
		{"beef\n", false},
		{"", false},
	} {
		if got := looksChunked([]byte(tt.in)); got != tt.want {
			t.Errorf("looksChunked(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
