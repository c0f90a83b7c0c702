package service

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/index/redistest"
)

// TestServeReadyClusterMaster: serve over a real three-master Redis
// Cluster is ready while every master serves its slots, and not ready
// (/readyz 503, "index unavailable") when one master is down, or when one
// master still answers PING but its slots are no longer served.
func TestServeReadyClusterMaster(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		breakIt func(ctx context.Context, c *redis.Client) error
	}{
		{"master down", func(ctx context.Context, c *redis.Client) error {
			// The connection closes as the server exits: go-redis reads
			// that as success; waitReady checks the effect.
			return c.ShutdownNoSave(ctx).Err()
		}},
		{"slots unassigned", func(ctx context.Context, c *redis.Client) error {
			_, err := redistest.UnassignSlots(ctx, c)
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addrs := redistest.StartCluster(t)
			cl := startKafka(t, 3)
			c := loadConfig(t, cl.Brokers, "index.url", "redis+cluster://"+strings.Join(addrs, ",")+"?namespace=ready", "index.timeout", "500ms")
			in := start(t, c, openStore(t, c))
			in.waitReady(t, http.StatusOK, 30*time.Second)

			rc := redis.NewClient(&redis.Options{Addr: addrs[len(addrs)-1], MaxRetries: -1})
			defer rc.Close()
			if err := tt.breakIt(context.Background(), rc); err != nil {
				t.Fatalf("%s on %s: %v", tt.name, rc.Options().Addr, err)
			}
			body := in.waitReady(t, http.StatusServiceUnavailable, 30*time.Second)
			if !strings.Contains(body, "index unavailable") {
				t.Errorf("/readyz %q does not say the index is unavailable", body)
			}
			if err := in.stop(t); err != nil {
				t.Logf("stop: %v", err)
			}
		})
	}
}
