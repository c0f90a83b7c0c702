// Package redistest starts real redis-server processes for tests: a single
// node on a free port ([StartServer], [Start]) and a three-master Redis
// Cluster ([StartCluster]). Servers run without persistence, are killed when
// the test ends (and when the test binary dies), and the test is skipped
// with an install hint when redis-server is not in PATH, or fails when the
// environment variable CI is set (internal/dataset.Missing).
//
// Every server belongs to the test that started it: nothing is shared
// between tests and nothing is left running.
package redistest
