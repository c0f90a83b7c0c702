package redistest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/internal/dataset"
)

// SkipHint is the message of tests skipped for a missing binary.
const SkipHint = "redis-server not installed: apt-get install -y redis-server"

// readyTimeout bounds how long a server may take to answer PING.
const readyTimeout = 15 * time.Second

// Options configure a single server.
type Options struct {
	// Args are appended to the command line, e.g. "--requirepass", "pw".
	Args []string
	// TLS, when set, makes the server listen with TLS only (the port is a
	// tls-port); Args must carry the certificate options. ClientTLS is used
	// to wait for readiness.
	TLS       bool
	ClientTLS *tls.Config
}

// Server is one running redis-server.
type Server struct {
	// Addr is "127.0.0.1:port".
	Addr string
	Port int
	t    testing.TB
	opts Options
	dir  string
	cmd  *exec.Cmd
	done chan struct{}
}

// StartServer starts a redis-server on a free port with persistence off
// and returns its address. It is stopped when the test ends.
func StartServer(t testing.TB) string { return Start(t, Options{}).Addr }

// Start starts a redis-server with opts. It skips the test when
// redis-server is not installed.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	requireBinary(t, "redis-server")
	s := &Server{t: t, opts: opts, dir: t.TempDir()}
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		if s.Port, err = freePort(false); err != nil {
			continue
		}
		if err = s.start(); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("redistest: start redis-server: %v", err)
	}
	t.Cleanup(s.Kill)
	return s
}

func (s *Server) args() []string {
	port := strconv.Itoa(s.Port)
	a := []string{"--save", "", "--appendonly", "no", "--bind", "127.0.0.1", "--dir", s.dir,
		"--logfile", filepath.Join(s.dir, "redis-"+port+".log")}
	if s.opts.TLS {
		a = append(a, "--port", "0", "--tls-port", port)
	} else {
		a = append(a, "--port", port)
	}
	return append(a, s.opts.Args...)
}

func (s *Server) start() error {
	s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port))
	cmd := exec.Command("redis-server", s.args()...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { // owned by s: ends when the process exits (Kill waits for it)
		_ = cmd.Wait()
		close(done)
	}()
	s.cmd, s.done = cmd, done
	if err := s.waitReady(); err != nil {
		s.Kill()
		return fmt.Errorf("%w\n%s", err, s.Log())
	}
	return nil
}

func (s *Server) waitReady() error {
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	c := redis.NewClient(&redis.Options{Addr: s.Addr, TLSConfig: s.opts.ClientTLS, MaxRetries: -1,
		DialTimeout: 200 * time.Millisecond, ReadTimeout: time.Second})
	defer c.Close()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		err := c.Ping(ctx).Err()
		var rerr redis.Error
		if err == nil || errors.As(err, &rerr) { // NOAUTH means it is up
			return nil
		}
		select {
		case <-s.done:
			return errors.New("redis-server exited")
		case <-ctx.Done():
			return fmt.Errorf("no PING reply from %s: %v", s.Addr, err)
		case <-tick.C:
		}
	}
}

// Kill stops the server with SIGKILL (no shutdown, nothing saved) and
// waits for it to exit. It is safe to call twice.
func (s *Server) Kill() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.done
	s.cmd = nil
}

// Restart starts the server again on the same port, empty.
func (s *Server) Restart() {
	s.t.Helper()
	s.Kill()
	var err error
	deadline := time.Now().Add(readyTimeout)
	for time.Now().Before(deadline) {
		if err = s.start(); err == nil {
			return
		}
	}
	s.t.Fatalf("redistest: restart %s: %v", s.Addr, err)
}

// Log returns the server's log file.
func (s *Server) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "redis-"+strconv.Itoa(s.Port)+".log"))
	return string(b)
}

// StartCluster starts three masters with cluster mode enabled, joins them
// with redis-cli --cluster create (no replicas), waits for
// cluster_state:ok on every node and returns their addresses.
func StartCluster(t testing.TB) []string {
	t.Helper()
	nodes := startCluster(t, 0)
	addrs := make([]string, len(nodes))
	for i, n := range nodes {
		addrs[i] = n.Addr
	}
	return addrs
}

// StartReplicatedCluster starts three masters and one replica of each
// (cluster-node-timeout 5 s: a master that stops answering is failed
// over to its replica about 5–7 s later), waits for cluster_state:ok and
// for every replica to be in sync, and returns the six servers, the
// masters first (as redis-cli --cluster create assigns them: servers
// 3..5 replicate masters in some order; see Server.Role).
func StartReplicatedCluster(t testing.TB) []*Server {
	t.Helper()
	return startCluster(t, 1)
}

// Role returns the server's role as the cluster sees it now: "master" or
// "slave" (INFO replication), and for a replica its master's address.
func (s *Server) Role(ctx context.Context) (role, master string, err error) {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: time.Second})
	defer c.Close()
	info, err := c.Info(ctx, "replication").Result()
	if err != nil {
		return "", "", err
	}
	var host, port string
	for _, line := range strings.Split(info, "\r\n") {
		k, v, _ := strings.Cut(line, ":")
		switch k {
		case "role":
			role = v
		case "master_host":
			host = v
		case "master_port":
			port = v
		}
	}
	if host != "" {
		master = net.JoinHostPort(host, port)
	}
	return role, master, nil
}

func startCluster(t testing.TB, replicas int) []*Server {
	t.Helper()
	requireBinary(t, "redis-server")
	requireBinary(t, "redis-cli")
	var nodes []*Server
	var addrs []string
	for range 3 * (1 + replicas) {
		var srv *Server
		for attempt := 0; srv == nil && attempt < 5; attempt++ {
			port, err := freePort(true)
			if err != nil {
				continue
			}
			s := &Server{t: t, Port: port, dir: t.TempDir(), opts: Options{Args: []string{
				"--cluster-enabled", "yes", "--cluster-node-timeout", "5000",
				"--cluster-config-file", "nodes-" + strconv.Itoa(port) + ".conf",
			}}}
			if err := s.start(); err == nil {
				srv = s
			}
		}
		if srv == nil {
			t.Fatal("redistest: could not start a cluster node")
		}
		t.Cleanup(srv.Kill)
		nodes = append(nodes, srv)
		addrs = append(addrs, srv.Addr)
	}
	args := append([]string{"--cluster", "create"}, addrs...)
	args = append(args, "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")
	out, err := exec.Command("redis-cli", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("redistest: redis-cli --cluster create: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, a := range addrs {
		if err := waitClusterOK(ctx, a); err != nil {
			t.Fatalf("redistest: %s: %v", a, err)
		}
	}
	for _, n := range nodes {
		if err := waitInSync(ctx, n.Addr); err != nil {
			t.Fatalf("redistest: %s: %v", n.Addr, err)
		}
	}
	return nodes
}

// waitInSync waits until a replica's link to its master is up (a master
// returns at once).
func waitInSync(ctx context.Context, addr string) error {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer c.Close()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		info, err := c.Info(ctx, "replication").Result()
		if err == nil && (strings.Contains(info, "role:master") || strings.Contains(info, "master_link_status:up")) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("replica not in sync: %v %q", err, info)
		case <-tick.C:
		}
	}
}

func waitClusterOK(ctx context.Context, addr string) error {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer c.Close()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		info, err := c.ClusterInfo(ctx).Result()
		if err == nil && strings.Contains(info, "cluster_state:ok") {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster_state not ok: %v %q", err, info)
		case <-tick.C:
		}
	}
}

// requireBinary skips the test when name is not installed, or fails it
// when the environment variable CI is set.
func requireBinary(t testing.TB, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if name == "redis-server" {
			dataset.Missing(t, SkipHint)
		}
		dataset.Missing(t, name+" not installed: apt-get install -y redis-server (it brings redis-tools)")
	}
}

// freePort returns a port that is free now; with bus it also checks
// port+10000, the cluster bus port.
func freePort(bus bool) (int, error) {
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if !bus {
			return port, nil
		}
		if port+10000 > 65535 {
			continue
		}
		if l2, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port+10000)); err == nil {
			l2.Close()
			return port, nil
		}
	}
	return 0, errors.New("no free port")
}

// Freeze stops the server process (SIGSTOP): connections stay open and
// every call hangs until Thaw, as with a server stuck in a long command or
// a network partition.
func (s *Server) Freeze() {
	s.t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		s.t.Fatalf("redistest: freeze %s: %v", s.Addr, err)
	}
}

// Thaw resumes a frozen server (SIGCONT).
func (s *Server) Thaw() {
	s.t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		s.t.Fatalf("redistest: thaw %s: %v", s.Addr, err)
	}
}
