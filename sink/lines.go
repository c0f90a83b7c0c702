package sink

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// Lines writes values as JSON lines. It is safe for concurrent use; each
// value is written whole. Call Flush before the underlying writer closes.
type Lines struct {
	mu  sync.Mutex
	bw  *bufio.Writer
	enc *json.Encoder
}

// NewLines returns a Lines writing to w.
func NewLines(w io.Writer) *Lines {
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	return &Lines{bw: bw, enc: enc}
}

// Write encodes v as one line.
func (l *Lines) Write(v any) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.enc.Encode(v); err != nil {
		return fmt.Errorf("sink: write: %w", err)
	}
	return nil
}

// Flush writes buffered lines through.
func (l *Lines) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.bw.Flush(); err != nil {
		return fmt.Errorf("sink: flush: %w", err)
	}
	return nil
}

// Marshal encodes v as Lines writes it, without the newline: the one JSON
// form of events and dead letters whatever the sink (HTML characters are
// not escaped).
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}
