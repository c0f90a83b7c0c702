package index

import (
	"context"
	"errors"
	"testing"
)

// serverError is a Redis error reply.
type serverError string

func (e serverError) Error() string { return string(e) }
func (serverError) RedisError()     {}

// Issue 38, point 2: a cluster's redirects and "try again" replies are
// transient (the member retries and follows the new slot map); other
// error replies are not.
func TestWrapClusterReplies(t *testing.T) {
	r := &Redis{ns: "n"}
	for _, tt := range []struct {
		reply     string
		transient bool
	}{
		{"MOVED 3999 127.0.0.1:6381", true},
		{"ASK 3999 127.0.0.1:6381", true},
		{"TRYAGAIN Multiple keys request during rehashing of slot", true},
		{"CLUSTERDOWN The cluster is down", true},
		{"CROSSSLOT Keys in request don't hash to the same slot", false},
		{"WRONGTYPE Operation against a key holding the wrong kind of value", false},
	} {
		err := r.wrap(context.Background(), "op", serverError(tt.reply))
		if got := errors.Is(err, ErrUnavailable); got != tt.transient {
			t.Errorf("%s: unavailable %v, want %v (%v)", tt.reply, got, tt.transient, err)
		}
	}
}
