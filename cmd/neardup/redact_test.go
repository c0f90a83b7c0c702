package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/neardup/neardup/index/redistest"
	"github.com/neardup/neardup/internal/kafkatest"
)

// Issue 38, point 4: a Redis password never appears in what any command
// prints: config check, serve's logs, the demo's lines, and the errors of
// scan, check, delete and serve, for every form a URL may take. Each form
// names a password holding "s3cret"; forms that parse and authenticate
// reach a real redis-server that requires that password (so serve starts
// and logs its configuration, and the demo runs), the others a closed port
// or a parse error.
func TestPasswordsNeverPrinted(t *testing.T) {
	t.Parallel()
	const closed = "127.0.0.1:1"
	type form struct {
		name string
		url  string // H: the address of a server requiring user/pass
		user string // ACL user ("" the default user)
		pass string // "" no server: the URL never authenticates
	}
	forms := []form{
		{name: "password-only", url: "redis://s3cret-1@H/0", pass: "s3cret-1"},
		{name: "empty-user", url: "redis://:s3cret-2@H/0", pass: "s3cret-2"},
		{name: "user-and-password", url: "redis://alice:s3cret-3@H/0?namespace=n", user: "alice", pass: "s3cret-3"},
		{name: "space", url: "redis://:pa ss-s3cret@" + closed + "/0"},
		{name: "bad-escape", url: "redis://user:p%zz-s3cret@" + closed + "/0"},
		{name: "hash", url: "redis://:s3cret#4@" + closed + "/0"},
		{name: "question-mark", url: "redis://:s3cret?5@" + closed + "/0"},
		{name: "at-and-slash", url: "redis://:s3cret/6@x@" + closed + "/0"},
		{name: "rediss", url: "rediss://alice:s3cret-7@" + closed + "/0?namespace=n"},
		{name: "cluster", url: "redis+cluster://alice:s3cret-8@" + closed + ",127.0.0.1:2,127.0.0.1:3"},
		{name: "query-password", url: "redis://" + closed + "/0?password=s3cret-9&namespace=n"},
		{name: "query-unknown", url: "redis://" + closed + "/0?namespace=n&auth=s3cret-10"},
	}
	cl := kafkatest.Start(t, kafkatest.Topic("crawl", 1), kafkatest.Topic("neardup.events", 1), kafkatest.Topic("neardup.dead-letters", 1))
	doc := filepath.Join(t.TempDir(), "a.txt")
	if err := os.WriteFile(doc, []byte("a small document of a few words to scan and check"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range forms {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			url := f.url
			if f.pass != "" {
				args := []string{"--requirepass", f.pass}
				if f.user != "" {
					args = []string{"--user", f.user, "on", ">" + f.pass, "~*", "&*", "+@all"}
				}
				url = strings.Replace(url, "H", redistest.Start(t, redistest.Options{Args: args}).Addr, 1)
			}
			var printed []string
			see := func(what string, out ...string) {
				printed = append(printed, what+":\n"+strings.Join(out, "\n"))
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmds := [][]string{
				{"config", "check", "--index.url", url},
				{"scan", "--index", url, doc},
				{"check", "--index", url, doc},
				{"delete", "--index", url, "some-id"},
			}
			if !testing.Short() { // the race run (-short) leaves the demo out
				cmds = append(cmds, []string{"demo", "--docs", "10", "--instances", "1", "--partitions", "1", "-v", "--index", url})
			}
			for _, args := range cmds {
				code, out, errOut := neardup(t, args...)
				see(strings.Join(args[:2], " ")+" (exit "+string(rune('0'+code))+")", out, errOut)
			}
			// config check from the environment.
			cmd := asCommand(t, []string{"NEARDUP_INDEX_URL=" + url}, "config", "check")
			out, _ := cmd.CombinedOutput()
			see("NEARDUP_INDEX_URL config check", string(out))
			see("serve", serveOutput(ctx, t, cl.Brokers, url))

			all := strings.Join(printed, "\n")
			if strings.Contains(all, "s3cret") {
				t.Errorf("a password is printed:\n%s", all)
			}
			if !strings.Contains(all, "index.url=") {
				t.Errorf("config check printed no index.url:\n%s", all)
			}
			if f.pass != "" && !strings.Contains(all, "neardup serve starting") {
				t.Errorf("serve did not start with a URL that authenticates:\n%s", all)
			}
		})
	}
}

// serveOutput runs neardup serve with index.url set to url until it
// logs that it started or is waiting for its dependencies, or exits, and
// returns all it printed.
func serveOutput(ctx context.Context, t *testing.T, brokers, url string) string {
	t.Helper()
	cmd := asCommand(t, []string{"NEARDUP_KAFKA_BROKERS=" + brokers, "NEARDUP_KAFKA_INPUT_TOPIC=crawl",
		"NEARDUP_HTTP_ADDR=127.0.0.1:0", "NEARDUP_HTTP_ADMIN_ADDR=127.0.0.1:0", "NEARDUP_INDEX_URL=" + url, "NEARDUP_KAFKA_GROUP=redact-" + t.Name()}, "serve")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = cmd.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	done := make(chan struct{})
	go func() { // owned: ends when the process closes stderr
		defer close(done)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		signalled := false
		for sc.Scan() {
			b.WriteString(sc.Text() + "\n")
			l := sc.Text()
			if !signalled && (strings.Contains(l, "neardup serve starting") || strings.Contains(l, "retrying")) {
				signalled = true
				_ = cmd.Process.Signal(syscall.SIGTERM)
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		<-done
		t.Errorf("serve neither started nor stopped")
	}
	_ = cmd.Wait()
	return b.String()
}
