package consumer

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/neardup/neardup/stream"
)

// Files reads local inputs: plain-text and HTML files (one document each,
// id = the path), JSON-lines files (.jsonl, .ndjson: one document per
// line), WARC files (.warc, .warc.gz: one document per HTML or text
// response, resource or revisit record; see [WARCStats]), directories
// (walked recursively in lexical order, hidden entries skipped) and "-"
// for standard input (JSON lines, or WARC with Format [FormatWARC]).
type Files struct {
	Paths    []string
	MaxBytes int       // document size limit (sketch.max_bytes)
	Stdin    io.Reader // read for "-"
	// Progress, when set, is called with the number of input bytes consumed
	// so far (for a progress bar).
	Progress func(bytes int64)
	// Exclude lists files never read as input, such as the run's own
	// output files inside a scanned directory.
	Exclude []string
	// Format overrides how inputs are read (default: by file name, and
	// standard input as JSON lines).
	Format Format
	// WARCID chooses the id of WARC documents (default WARCIDURI).
	WARCID WARCID
	// WARC counts the WARC records read; it is complete when Run returns.
	WARC WARCStats

	dec       *stream.Decoder
	consumed  int64
	warcState *warcState
}

// ReasonUnreadable marks a file that could not be read.
const ReasonUnreadable stream.Reason = "unreadable"

// Total returns the number of input bytes Run will read, for progress
// estimates; standard input counts as zero.
func (f *Files) Total() (int64, error) {
	var total int64
	err := f.walk(func(path string, info fs.FileInfo) error {
		total += info.Size()
		return nil
	})
	return total, err
}

// walk calls fn for every regular file the paths name, in order.
func (f *Files) walk(fn func(path string, info fs.FileInfo) error) error {
	var excluded []os.FileInfo
	for _, x := range f.Exclude {
		if info, err := os.Stat(x); err == nil {
			excluded = append(excluded, info)
		}
	}
	inner := fn
	fn = func(path string, info fs.FileInfo) error {
		for _, x := range excluded {
			if os.SameFile(x, info) {
				return nil
			}
		}
		return inner(path, info)
	}
	for _, p := range f.Paths {
		if p == "-" {
			continue
		}
		info, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("consumer: %w", err)
		}
		if !info.IsDir() {
			if err := fn(p, info); err != nil {
				return err
			}
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if path != p && strings.HasPrefix(d.Name(), ".") {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			return fn(path, info)
		})
		if err != nil {
			return fmt.Errorf("consumer: %w", err)
		}
	}
	return nil
}

// Run sends one item per document (or rejected input) to out, in order,
// and returns when every path is read, on the first error that is not a
// per-document problem (a missing path), or when ctx is cancelled. It does
// not close out.
func (f *Files) Run(ctx context.Context, out chan<- stream.Item) error {
	f.dec = stream.NewDecoder(f.MaxBytes)
	send := func(it stream.Item) error {
		select {
		case out <- it:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for i, p := range f.Paths {
		if p == "-" {
			if slices.Contains(f.Paths[:i], "-") {
				continue
			}
			in := f.Stdin
			if in == nil {
				in = os.Stdin
			}
			read := f.jsonLines
			if f.Format == FormatWARC {
				read = func(ctx context.Context, r io.Reader, name string, send func(stream.Item) error) error {
					return f.warc(ctx, r, name, false, send)
				}
			}
			if err := read(ctx, in, "-", send); err != nil {
				return err
			}
		}
	}
	return f.walk(func(path string, info fs.FileInfo) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		warc, lines := f.Format == FormatWARC || f.Format == FormatAuto && isWARC(path), f.Format == FormatJSONLines || f.Format == FormatAuto && isJSONLines(path)
		if !warc && !lines {
			return send(f.file(path, info))
		}
		fh, err := os.Open(path)
		if err != nil {
			return send(rejected(path, 0, ReasonUnreadable, err))
		}
		defer fh.Close()
		if warc {
			return f.warc(ctx, fh, path, true, send)
		}
		return f.jsonLines(ctx, fh, path, send)
	})
}

func isJSONLines(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".jsonl", ".ndjson":
		return true
	}
	return false
}

func isWARC(path string) bool {
	p := strings.ToLower(path)
	return strings.HasSuffix(p, ".warc") || strings.HasSuffix(p, ".warc.gz")
}

func rejected(path string, line int, r stream.Reason, err error) stream.Item {
	return stream.Item{
		Err:    &stream.InvalidError{Reason: r, ID: idFor(path, line), Detail: err.Error()},
		Source: stream.Source{File: path, Line: line},
	}
}

func idFor(path string, line int) string {
	if line > 0 {
		return ""
	}
	return filepath.ToSlash(path)
}

// file reads one plain-text or HTML document, reading at most MaxBytes+1
// bytes whatever the file's size.
func (f *Files) file(path string, info fs.FileInfo) stream.Item {
	f.advance(info.Size())
	src := stream.Source{File: path}
	if info.Size() > int64(f.MaxBytes) {
		return rejected(path, 0, stream.ReasonTooLarge, fmt.Errorf("%d bytes > limit %d", info.Size(), f.MaxBytes))
	}
	fh, err := os.Open(path)
	if err != nil {
		return rejected(path, 0, ReasonUnreadable, err)
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, int64(f.MaxBytes)+1))
	if err != nil {
		return rejected(path, 0, ReasonUnreadable, err)
	}
	if len(b) > f.MaxBytes {
		return rejected(path, 0, stream.ReasonTooLarge, fmt.Errorf("more than %d bytes", f.MaxBytes))
	}
	doc := stream.Document{ID: idFor(path, 0), Text: b, IsHTML: stream.IsHTMLName(path)}
	return stream.Item{Doc: doc, Source: src}
}

// jsonLines decodes one document per line. A line longer than the limit
// is skipped to its end without being held in memory and reported as
// too_large; blank lines are ignored.
func (f *Files) jsonLines(ctx context.Context, r io.Reader, name string, send func(stream.Item) error) error {
	limit := f.MaxBytes + 64<<10
	defer interruptible(ctx, r)()
	br := bufio.NewReaderSize(r, 256<<10)
	for line := 1; ; line++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		b, n, over, err := readLine(br, limit)
		f.advance(n)
		if len(b) > 0 || over {
			it := stream.Item{Source: stream.Source{File: name, Line: line}}
			switch {
			case over:
				it.Err = &stream.InvalidError{Reason: stream.ReasonTooLarge, Detail: fmt.Sprintf("line of %d bytes > limit %d", n, limit)}
				it.Raw = stream.Raw(b)
			default:
				// Decoded by the pipeline's workers; b is this line's own.
				line := b
				it.Raw, it.Lazy = line, func() (stream.Document, error) { return f.dec.DecodeJSON(line, "") }
			}
			if serr := send(it); serr != nil {
				return serr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if errors.Is(err, os.ErrDeadlineExceeded) && ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			return fmt.Errorf("consumer: read %s line %d: %w", name, line, err)
		}
	}
}

// interruptible makes ctx interrupt a blocking read of r: a read of a pipe
// or terminal does not see ctx, but a read deadline in the past ends it.
// The watcher it starts ends when the returned func is called.
func interruptible(ctx context.Context, r io.Reader) (stop func()) {
	fh, ok := r.(*os.File)
	if !ok {
		return func() {}
	}
	done := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-ctx.Done():
			_ = fh.SetReadDeadline(time.Unix(1, 0))
		case <-done:
		}
	}()
	return func() { close(done); <-watched }
}

// readLine returns the next line without its newline, holding at most
// limit bytes of it: over reports a longer line (b then holds its start),
// n the bytes consumed. err is io.EOF after the last line.
func readLine(br *bufio.Reader, limit int) (b []byte, n int64, over bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		n += int64(len(chunk))
		if !over {
			if len(b)+len(chunk) > limit+1 {
				b = append(b, chunk[:max(0, min(len(chunk), MaxKeep-len(b)))]...)
				over = true
			} else {
				b = append(b, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		b = trimEOL(b)
		if err == nil && len(b) == 0 && !over {
			// Blank line: keep reading, the caller counts it.
			return nil, n, false, nil
		}
		return b, n, over, err
	}
}

// MaxKeep bounds how much of an over-long line is kept for its dead letter.
const MaxKeep = stream.MaxRawBytes

func trimEOL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

func (f *Files) advance(n int64) {
	f.consumed += n
	if f.Progress != nil {
		f.Progress(f.consumed)
	}
}
