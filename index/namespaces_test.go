package index

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/index/redistest"
)

// Namespaces lists the namespaces stored on a server, and reads only: the
// server's keys are the same before and after.
func TestNamespaces(t *testing.T) {
	addr := redistest.StartServer(t)
	ctx := context.Background()
	url := "redis://" + addr
	if got, complete, err := Namespaces(ctx, url, Options{}, 5*time.Second); err != nil || len(got) != 0 || !complete {
		t.Fatalf("empty server: %v %v %v", got, complete, err)
	}
	for _, ns := range []string{"crawl", "crawl-2", "news"} {
		s, err := Open(ctx, url, Options{Params: testParams, Namespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	rc := redis.NewClient(&redis.Options{Addr: addr})
	defer rc.Close()
	before, _ := rc.DBSize(ctx).Result()
	got, complete, err := Namespaces(ctx, url, Options{}, 5*time.Second)
	if err != nil || !complete || !slices.Equal(got, []string{"crawl", "crawl-2", "news"}) {
		t.Errorf("Namespaces: %v %v %v", got, complete, err)
	}
	if after, _ := rc.DBSize(ctx).Result(); after != before {
		t.Errorf("listing changed the server: %d keys, then %d", before, after)
	}
	if _, _, err := Namespaces(ctx, "redis://127.0.0.1:1", Options{Timeout: 200 * time.Millisecond}, time.Second); err == nil {
		t.Error("an unreachable server lists without error")
	}
}
