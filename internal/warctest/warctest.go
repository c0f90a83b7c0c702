// Package warctest writes WARC files for tests with the same library scan
// reads them with (github.com/nlnwa/gowarc), so that test inputs are
// records a crawler could have written, not hand-made bytes.
package warctest

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	gowarc "github.com/nlnwa/gowarc/v3"
)

// Record is one record to write.
type Record struct {
	Type gowarc.RecordType
	// URI is WARC-Target-URI; Date is WARC-Date (a fixed date when zero).
	URI  string
	Date time.Time
	// ContentType is the record's own Content-Type (for a response, the
	// HTTP message's type: application/http;msgtype=response).
	ContentType string
	// Block is the record's content block: for a response, the HTTP
	// status line and headers followed by the payload.
	Block []byte
	// RevisitOf is, for a revisit record, the index of the earlier record
	// of the same Write it revisits (identical-payload-digest profile).
	RevisitOf int
}

// Response is an HTTP 200 response record with the given payload type.
func Response(uri, mediaType string, payload []byte) Record {
	return HTTPResponse(uri, 200, mediaType, payload)
}

// HTTPResponse is an HTTP response record with the given status.
func HTTPResponse(uri string, status int, mediaType string, payload []byte) Record {
	head := fmt.Sprintf("HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", status, statusText(status), mediaType, len(payload))
	return Record{Type: gowarc.Response, URI: uri, ContentType: "application/http;msgtype=response", Block: append([]byte(head), payload...)}
}

func statusText(c int) string {
	switch c {
	case 200:
		return "OK"
	case 404:
		return "Not Found"
	case 301:
		return "Moved Permanently"
	}
	return "Status"
}

// EncodedResponse is an HTTP 200 response whose payload is sent with the
// given extra headers (e.g. Content-Encoding: gzip) and bytes as stored.
func EncodedResponse(uri, mediaType string, headers map[string]string, stored []byte) Record {
	head := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: %s\r\n", mediaType)
	for _, k := range slices.Sorted(maps.Keys(headers)) {
		head += k + ": " + headers[k] + "\r\n"
	}
	return Record{Type: gowarc.Response, URI: uri, ContentType: "application/http;msgtype=response", Block: append([]byte(head+"\r\n"), stored...)}
}

// Resource is a resource record (a file archived without a protocol).
func Resource(uri, mediaType string, payload []byte) Record {
	return Record{Type: gowarc.Resource, URI: uri, ContentType: mediaType, Block: payload}
}

// Request is an HTTP request record.
func Request(uri string) Record {
	return Record{Type: gowarc.Request, URI: uri, ContentType: "application/http;msgtype=request",
		Block: []byte("GET / HTTP/1.1\r\nHost: example.org\r\n\r\n")}
}

// Revisit is a revisit record of the i-th record of the same Write,
// captured again at uri.
func Revisit(uri string, i int) Record {
	return Record{Type: gowarc.Revisit, URI: uri, RevisitOf: i}
}

// Write writes recs to path, a name ending in .warc or .warc.gz (one gzip
// member per record), and returns each record's byte offset in the file.
func Write(t testing.TB, path string, recs ...Record) []int64 {
	t.Helper()
	gz := strings.HasSuffix(path, ".gz")
	base := strings.TrimSuffix(filepath.Base(path), ".gz")
	if !strings.HasSuffix(base, ".warc") {
		t.Fatalf("warctest: %s: want a name ending in .warc or .warc.gz", path)
	}
	w := gowarc.NewWarcFileWriter(
		gowarc.WithFileNameGenerator(&gowarc.PatternNameGenerator{Directory: filepath.Dir(path), Pattern: strings.TrimSuffix(base, ".warc") + ".%{ext}s"}),
		gowarc.WithCompression(gz),
		gowarc.WithMaxFileSize(1<<40))
	built := make([]gowarc.WarcRecord, len(recs))
	offsets := make([]int64, len(recs))
	date := time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)
	for i, r := range recs {
		d := r.Date
		if d.IsZero() {
			d = date.Add(time.Duration(i) * time.Second)
		}
		opts := []gowarc.WarcRecordOption{gowarc.WithAddMissingDigest(true), gowarc.WithAddMissingRecordId(true), gowarc.WithAddMissingContentLength(true)}
		b := gowarc.NewRecordBuilder(r.Type, opts...)
		b.AddWarcHeader(gowarc.WarcTargetURI, r.URI)
		b.AddWarcHeaderTime(gowarc.WarcDate, d)
		if r.Type == gowarc.Revisit {
			orig := built[r.RevisitOf]
			ref, err := orig.CreateRevisitRef(gowarc.ProfileIdenticalPayloadDigestV1_1)
			if err != nil {
				t.Fatalf("warctest: revisit of record %d: %v", r.RevisitOf, err)
			}
			b.AddWarcHeader(gowarc.WarcProfile, ref.Profile)
			b.AddWarcHeader(gowarc.WarcRefersTo, "<"+strings.Trim(ref.TargetRecordId, "<>")+">")
			b.AddWarcHeader(gowarc.WarcRefersToTargetURI, ref.TargetUri)
			b.AddWarcHeader(gowarc.WarcRefersToDate, ref.TargetDate)
			b.AddWarcHeader(gowarc.WarcPayloadDigest, orig.WarcHeader().Get(gowarc.WarcPayloadDigest))
			b.AddWarcHeader(gowarc.ContentType, "application/http;msgtype=response")
			if _, err := b.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
		} else {
			b.AddWarcHeader(gowarc.ContentType, r.ContentType)
			if _, err := b.Write(r.Block); err != nil {
				t.Fatal(err)
			}
		}
		rec, _, err := b.Build()
		if err != nil {
			t.Fatalf("warctest: record %d: %v", i, err)
		}
		built[i] = rec
		res := w.Write(rec)
		if len(res) != 1 || res[0].Err != nil {
			t.Fatalf("warctest: write record %d: %v", i, res)
		}
		offsets[i] = res[0].FileOffset
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("warctest: the writer did not write %s: %v", path, err)
	}
	return offsets
}
