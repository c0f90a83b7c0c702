package stream

// Source says where an input came from, for events and dead letters.
type Source struct {
	File      string `json:"file,omitempty"`
	Line      int    `json:"line,omitempty"` // 1-based line of a JSON-lines file
	Topic     string `json:"topic,omitempty"`
	Partition *int32 `json:"partition,omitempty"`
	Offset    *int64 `json:"offset,omitempty"`
}

// Item is one input to pipeline.Pipeline.Run: a decoded document, or the reason
// an input could not be decoded. Rejected items pass through the pipeline
// in order and come out as dead letters, so a caller that commits offsets
// in output order never skips or loses one.
type Item struct {
	Doc    Document
	Err    error // non-nil: the input was rejected; Doc is not used
	Source Source
	// Raw is the rejected input (at most MaxRawBytes of it), kept for the
	// dead letter.
	Raw []byte
	// Tag is the caller's, returned untouched in the Output (a Kafka
	// record to commit, a progress counter).
	Tag any
	// Lazy, when set, decodes the input later: Doc and Err are then unset
	// until [Item.Decode]. The pipeline decodes in its parallel workers,
	// so a consumer's reader goroutine only reads. Raw should hold the
	// input, for the dead letter of an input that does not decode.
	Lazy func() (Document, error)
	// Delete makes the item a delete (a Kafka tombstone: the record's key
	// with a null value): Doc.ID is removed from the index and the output
	// is a KindDeleted event. Only Doc.ID is read.
	Delete bool
}

// Decode runs a Lazy item's decoding (once; nothing for other items): Doc
// and Err then hold its outcome, and Raw is kept only for a rejected
// input.
func (it *Item) Decode() {
	if it.Lazy == nil {
		return
	}
	it.Doc, it.Err = it.Lazy()
	it.Lazy = nil
	if it.Err == nil {
		it.Raw = nil
	}
}

// MaxRawBytes bounds the input copied into a dead letter; larger inputs
// are identified by their source position instead.
const MaxRawBytes = 64 << 10

// DeadLetter is a rejected input with its reason. Input holds the input
// itself when it is valid UTF-8 (InputBase64 otherwise), cut to
// MaxRawBytes with Truncated set; Source locates the whole of it.
type DeadLetter struct {
	ID          string `json:"id,omitempty"`
	Reason      Reason `json:"reason"`
	Error       string `json:"error"`
	Source      Source `json:"source"`
	Input       string `json:"input,omitempty"`
	InputBase64 []byte `json:"input_base64,omitempty"`
	Truncated   bool   `json:"truncated,omitempty"`
	At          string `json:"at"`
}

// Raw keeps a bounded copy of a rejected input for its dead letter.
func Raw(b []byte) []byte {
	return append([]byte(nil), b[:min(len(b), MaxRawBytes+1)]...)
}
