package index

import (
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// parseURL is a parser of its own because go-redis's ParseURL and
// ParseClusterURL cannot read the index URLs neardup accepts: this test
// names each form they reject or read differently, with what parseURL
// makes of it. It fails when go-redis changes its mind, so the comment on
// parseURL stays true.
func TestGoRedisParseURLCannotReadOurURLs(t *testing.T) {
	for _, tt := range []struct {
		url string
		// goRedis is the start of the error both go-redis parsers give,
		// or, when they accept the URL, what they read ("user=… pw=…" or
		// "addrs=…").
		goRedis string
		// ours is what parseURL reads.
		ours string
	}{
		// The in-process index has no Redis URL.
		{"memory", "redis: invalid URL scheme", "memory"},
		{"memory://", "redis: invalid URL scheme", "memory"},
		// The index's own settings ride in the query; go-redis knows
		// only its client options.
		{"redis://h:6379?namespace=x", "redis: unexpected option: namespace", "addrs=[h:6379] namespace=x"},
		{"redis://h:6379?timeout=5s", "redis: unexpected option: timeout", "addrs=[h:6379] timeout=5s"},
		{"redis://h:6379?retention=24h&refresh=true", "redis: unexpected option", "addrs=[h:6379] retention=24h0m0s refresh=true"},
		// A cluster is a scheme of its own with a list of seed hosts;
		// go-redis's cluster form is redis://h1?addr=h2.
		{"redis+cluster://h1:7000,h2:7001", "redis: invalid URL scheme", "cluster addrs=[h1:7000 h2:7001]"},
		{"rediss+cluster://h1:7000", "redis: invalid URL scheme", "cluster tls addrs=[h1:7000]"},
		{"redis://h1:7000,h2:7001", "addrs=[[h1:7000,h2]:7001]", "addrs=[h1:7000 h2:7001]"},
		// The password-only form is a password for the default user
		// (docs/operations.md); go-redis reads a user without a password.
		{"redis://PASSWORD@h:6379", "user=PASSWORD pw=", "user= pw=PASSWORD"},
	} {
		got := goRedisReads(tt.url)
		if !strings.HasPrefix(got, tt.goRedis) {
			t.Errorf("go-redis reads %s as %q, want %q", tt.url, got, tt.goRedis)
		}
		if mine := oursReads(tt.url); mine != tt.ours {
			t.Errorf("parseURL reads %s as %q, want %q", tt.url, mine, tt.ours)
		}
	}
}

// goRedisReads is what ParseURL and ParseClusterURL make of u when they
// agree (their error, or the user, password and addresses they read).
func goRedisReads(u string) string {
	o, err := redis.ParseURL(u)
	c, cerr := redis.ParseClusterURL(u)
	switch {
	case err != nil && cerr != nil && err.Error() == cerr.Error():
		return err.Error()
	case err != nil || cerr != nil:
		return "parsers disagree"
	case o.Username != "" || o.Password != "":
		return "user=" + o.Username + " pw=" + o.Password
	}
	return "addrs=[" + strings.Join(c.Addrs, " ") + "]"
}

func oursReads(u string) string {
	cfg, mem, err := parseURL(u, Options{})
	switch {
	case err != nil:
		return err.Error()
	case mem:
		return "memory"
	case cfg.Username != "" || cfg.Password != "":
		return "user=" + cfg.Username + " pw=" + cfg.Password
	}
	var b strings.Builder
	if cfg.Cluster {
		b.WriteString("cluster ")
	}
	if cfg.TLS != nil {
		b.WriteString("tls ")
	}
	b.WriteString("addrs=[" + strings.Join(cfg.Addrs, " ") + "]")
	if cfg.Namespace != "" {
		b.WriteString(" namespace=" + cfg.Namespace)
	}
	if cfg.ReadTimeout != 0 {
		b.WriteString(" timeout=" + cfg.ReadTimeout.String())
	}
	if cfg.Retention != 0 {
		b.WriteString(" retention=" + cfg.Retention.String())
	}
	if cfg.RefreshOnMatch {
		b.WriteString(" refresh=true")
	}
	return b.String()
}
