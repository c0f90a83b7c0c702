package pipeline

import "github.com/neardup/neardup/stream"

// The stream's types live in package stream, which consumers and sinks
// import without importing the pipeline; these aliases keep their
// pipeline names.
type (
	Source        = stream.Source
	Item          = stream.Item
	DeadLetter    = stream.DeadLetter
	Document      = stream.Document
	Reason        = stream.Reason
	InvalidError  = stream.InvalidError
	Decoder       = stream.Decoder
	Event         = stream.Event
	SentenceMatch = stream.SentenceMatch
	Match         = stream.Match
	Passage       = stream.Passage
	EventSource   = stream.EventSource
	Params        = stream.Params
	Output        = stream.Output
)

// Kinds of an event (see package stream).
const (
	KindExact   = stream.KindExact
	KindNear    = stream.KindNear
	KindPartial = stream.KindPartial
	KindUnique  = stream.KindUnique
	KindDeleted = stream.KindDeleted
)

// Reasons of a dead letter (see package stream).
const (
	ReasonMalformed     = stream.ReasonMalformed
	ReasonMissingID     = stream.ReasonMissingID
	ReasonBadID         = stream.ReasonBadID
	ReasonNoContent     = stream.ReasonNoContent
	ReasonBothBodies    = stream.ReasonBothBodies
	ReasonEmpty         = stream.ReasonEmpty
	ReasonTooLarge      = stream.ReasonTooLarge
	ReasonBadTS         = stream.ReasonBadTS
	ReasonBadMeta       = stream.ReasonBadMeta
	ReasonBinary        = stream.ReasonBinary
	ReasonBadField      = stream.ReasonBadField
	ReasonEventTooLarge = stream.ReasonEventTooLarge
	ReasonUnencodable   = stream.ReasonUnencodable
	ReasonInternal      = stream.ReasonInternal
	ReasonBadVerdict    = stream.ReasonBadVerdict
)

// Limits of the input contract (see package stream).
const (
	MaxRawBytes = stream.MaxRawBytes
	MaxIDBytes  = stream.MaxIDBytes
)

// ErrInvalid is wrapped by every [*InvalidError].
var ErrInvalid = stream.ErrInvalid

// NewDecoder returns a decoder of the input contract ([stream.NewDecoder]).
func NewDecoder(maxBytes int) *Decoder { return stream.NewDecoder(maxBytes) }

// CheckID reports why id cannot name a document ([stream.CheckID]).
func CheckID(id string) error { return stream.CheckID(id) }
