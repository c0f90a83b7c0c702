package index

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Options are the settings Open passes on to the store it opens. Query
// parameters of the URL override them.
type Options struct {
	Params         Params
	Namespace      string
	Retention      time.Duration
	Generation     time.Duration
	RefreshOnMatch bool
	CommonDocs     int
	// MaxCandidates bounds the candidates a lookup returns (0: the
	// default), best ranked first.
	MaxCandidates int
	// Capacity is the Redis store's guess of the first generation's
	// documents, which sizes its bucket groups (later generations are
	// sized by the documents the previous one received), and caps the
	// memory store's generations (MemoryConfig.Capacity).
	Capacity int
	Batch    int
	// Timeout is the dial, read and write timeout of Redis connections.
	Timeout time.Duration
	// TLS is used for rediss:// URLs (default: system roots, the URL's
	// host name).
	TLS *tls.Config
	// RequireExisting: a Redis namespace that does not exist is
	// ErrIndexLost (RedisConfig.RequireExisting).
	RequireExisting bool
	// ReadOnly opens a Redis namespace read-only (RedisConfig.ReadOnly).
	// The memory store ignores it.
	ReadOnly bool
	// Clock is the Redis store's clock (RedisConfig.Clock; default
	// time.Now), for benchmarks that run several generations.
	Clock func() time.Time
}

// Open opens a store from a URL:
//
//	memory
//	redis://[user[:password]@]host:port[/db][?query]
//	rediss://…                                  (TLS)
//	redis+cluster://[user[:password]@]host:port,host:port[?query]
//	rediss+cluster://…                          (TLS)
//
// Query parameters: namespace, retention and generation (Go durations),
// refresh (bool), common_docs, max_candidates, capacity, batch, shards,
// timeout.
func Open(ctx context.Context, rawURL string, o Options) (Store, error) {
	cfg, mem, err := parseURL(rawURL, o)
	if err != nil {
		return nil, err
	}
	if mem {
		return NewMemory(MemoryConfig{Params: cfg.Params, Retention: cfg.Retention, Generation: cfg.Generation,
			Capacity: cfg.Capacity, RefreshOnMatch: cfg.RefreshOnMatch, CommonDocs: cfg.CommonDocs,
			MaxCandidates: cfg.MaxCandidates})
	}
	return NewRedis(ctx, cfg)
}

// IsMemory reports whether rawURL names the in-process memory index
// ("memory", "memory://", or any memory: URL), which lives and dies with
// one process: commands that act on a shared index (delete) refuse it.
func IsMemory(rawURL string) bool {
	_, mem, err := parseURL(rawURL, Options{})
	return err == nil && mem
}

// parseURL reads an index URL (see Open). It is not go-redis's ParseURL
// or ParseClusterURL, which cannot read these URLs
// (TestGoRedisParseURLCannotReadOurURLs): they reject "memory", the
// redis+cluster and rediss+cluster schemes and the index's own query
// parameters (namespace, retention, timeout, …: "unexpected option"),
// read a comma-separated list of cluster seeds as one address, and read
// the password-only form redis://PASSWORD@host as a user without a
// password.
func parseURL(rawURL string, o Options) (cfg RedisConfig, memory bool, err error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: index url %q: %s", ErrInvalid, redactURL(rawURL), fmt.Sprintf(format, a...))
	}
	cfg = RedisConfig{
		Params: o.Params, Namespace: o.Namespace, Retention: o.Retention, Generation: o.Generation,
		RefreshOnMatch: o.RefreshOnMatch, CommonDocs: o.CommonDocs, MaxCandidates: o.MaxCandidates,
		Capacity: o.Capacity, Batch: o.Batch, RequireExisting: o.RequireExisting, ReadOnly: o.ReadOnly, Clock: o.Clock,
		DialTimeout: o.Timeout, ReadTimeout: o.Timeout, WriteTimeout: o.Timeout,
	}
	if rawURL == "memory" || rawURL == "memory://" {
		return cfg, true, nil
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Parse's error quotes the URL and the part it stopped at,
		// which may be the password.
		return cfg, false, bad("does not parse as a URL (percent-encode @ / : %% and spaces in the user and password)")
	}
	tlsOn := false
	switch u.Scheme {
	case "memory":
		memory = true
	case "redis":
	case "rediss":
		tlsOn = true
	case "redis+cluster":
		cfg.Cluster = true
	case "rediss+cluster":
		cfg.Cluster, tlsOn = true, true
	default:
		return cfg, false, bad("scheme %q: want memory, redis, rediss, redis+cluster or rediss+cluster", u.Scheme)
	}
	if !memory {
		for _, h := range strings.Split(u.Host, ",") {
			if h == "" {
				continue
			}
			if !strings.Contains(h, ":") {
				h += ":6379"
			}
			cfg.Addrs = append(cfg.Addrs, h)
		}
		if len(cfg.Addrs) == 0 {
			return cfg, false, bad("no host")
		}
		if u.User != nil {
			cfg.Username = u.User.Username()
			cfg.Password, _ = u.User.Password()
			if cfg.Password == "" && cfg.Username != "" {
				// redis://:password@host is a password for the default user;
				// redis://password@host is accepted the same way.
				cfg.Password, cfg.Username = cfg.Username, ""
			}
		}
		if db := strings.Trim(u.Path, "/"); db != "" {
			if cfg.Cluster {
				return cfg, false, bad("a cluster has no database number")
			}
			if cfg.DB, err = strconv.Atoi(db); err != nil || cfg.DB < 0 {
				return cfg, false, bad("database %q: want a number", db)
			}
		}
		if tlsOn {
			cfg.TLS = o.TLS
			if cfg.TLS == nil {
				host := cfg.Addrs[0]
				if i := strings.LastIndex(host, ":"); i >= 0 {
					host = host[:i]
				}
				cfg.TLS = &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
			}
		}
	}
	q := u.Query()
	for k, vs := range q {
		v := vs[len(vs)-1]
		var perr error
		switch k {
		case "namespace":
			cfg.Namespace = v
		case "retention":
			cfg.Retention, perr = time.ParseDuration(v)
		case "generation":
			cfg.Generation, perr = time.ParseDuration(v)
		case "refresh":
			cfg.RefreshOnMatch, perr = strconv.ParseBool(v)
		case "common_docs":
			cfg.CommonDocs, perr = strconv.Atoi(v)
		case "max_candidates":
			cfg.MaxCandidates, perr = strconv.Atoi(v)
		case "capacity":
			cfg.Capacity, perr = strconv.Atoi(v)
		case "batch":
			cfg.Batch, perr = strconv.Atoi(v)
		case "shards":
			cfg.Shards, perr = strconv.Atoi(v)
		case "timeout":
			var d time.Duration
			d, perr = time.ParseDuration(v)
			cfg.DialTimeout, cfg.ReadTimeout, cfg.WriteTimeout = d, d, d
		default:
			return cfg, false, bad("unknown parameter %q", k)
		}
		if perr != nil {
			return cfg, false, bad("%s=%q: %v", k, v, perr)
		}
	}
	return cfg, memory, nil
}

// redactURL hides the password of a URL in error messages.
func redactURL(s string) string { return RedactURL(s) }

// RedactURL returns s, an index URL (or any string that may hold one),
// with everything that may be a secret masked as "xxxxx", whether or not
// s parses. It is the one redactor of the program: configuration checks,
// logs, errors and the demo print URLs only through it.
//
//   - The user information: everything between the scheme's "//" (or the
//     start of s) and the last '@' of s. This masks redis://user:pass@host,
//     the password-only form redis://PASSWORD@host, and passwords holding
//     '@', '/', ':', '?', '#', spaces or bad percent escapes (which make
//     the URL unparsable).
//   - The value of every query parameter but those Open knows and that
//     hold no secret (namespace, retention, …): a ?password=… or any
//     unknown parameter is masked.
//   - A fragment ("#…"), which Open never reads.
//
// Strings without '@', '?' or '#' are returned unchanged.
func RedactURL(s string) string {
	const mask = "xxxxx"
	start := 0
	if i := strings.Index(s, "://"); i >= 0 {
		start = i + 3
	}
	if at := strings.LastIndexByte(s[start:], '@'); at >= 0 {
		s = s[:start] + mask + s[start+at:]
	}
	frag := ""
	if h := strings.IndexByte(s[start:], '#'); h >= 0 {
		s, frag = s[:start+h], "#"+mask
	}
	q := strings.IndexByte(s[start:], '?')
	if q < 0 {
		return s + frag
	}
	base, params := s[:start+q], strings.Split(s[start+q+1:], "&")
	for i, p := range params {
		k, _, hasValue := strings.Cut(p, "=")
		name, err := url.QueryUnescape(k)
		if err != nil || !plainParams[strings.ToLower(name)] {
			if hasValue {
				params[i] = k + "=" + mask
			} else {
				params[i] = mask
			}
		}
	}
	return base + "?" + strings.Join(params, "&") + frag
}

// plainParams are the query parameters of an index URL (parseURL) that
// hold no secret.
var plainParams = map[string]bool{
	"namespace": true, "retention": true, "generation": true, "refresh": true, "common_docs": true,
	"max_candidates": true, "capacity": true, "batch": true, "shards": true, "timeout": true,
}
