package service

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/plain"
	"github.com/segmentio/kafka-go/sasl/scram"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/index/redistest"
	"github.com/neardup/neardup/internal/kafkatest"
	"github.com/neardup/neardup/internal/synth"
	"github.com/neardup/neardup/pipeline"
)

// testCA writes a CA certificate and returns it with a server TLS config
// for 127.0.0.1 signed by it.
func testCA(t *testing.T) (caFile string, server *tls.Config, client *tls.Config) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "neardup test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	srvKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	srv := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		KeyUsage: x509.KeyUsageDigitalSignature}
	srvDER, err := x509.CreateCertificate(rand.Reader, srv, caCert, &srvKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caFile = filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(caCert)
	server = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{srvDER}, PrivateKey: srvKey}}, MinVersion: tls.VersionTLS12}
	client = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return caFile, server, client
}

func kafkaGoMechanism(t *testing.T, mech, user, pass string) sasl.Mechanism {
	t.Helper()
	switch mech {
	case "PLAIN":
		return plain.Mechanism{Username: user, Password: pass}
	case "SCRAM-SHA-256", "SCRAM-SHA-512":
		algo := scram.SHA256
		if mech == "SCRAM-SHA-512" {
			algo = scram.SHA512
		}
		m, err := scram.Mechanism(algo, user, pass)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	t.Fatalf("mechanism %s", mech)
	return nil
}

// Scenario (e) and security: the service consumes and produces over TLS
// with SASL PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 (fixtures written and
// outputs read by kafka-go with the same credentials); a wrong password
// fails at start with an error naming the mechanism and the broker and
// never the password.
func TestServeTLSAndSASL(t *testing.T) {
	t.Parallel()
	caFile, serverTLS, clientTLS := testCA(t)
	for _, mech := range []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"} {
		t.Run(mech, func(t *testing.T) {
			const user, pass = "neardup", "s3cret-Pa55"
			cl := startKafka(t, 2,
				kafkatest.KfakeOpts(kfake.EnableSASL(), kfake.Superuser(mech, user, pass), kfake.TLS(serverTLS)),
				kafkatest.WithClient(clientTLS, kafkaGoMechanism(t, mech, user, pass)))
			docs := synth.Corpus(synth.Config{Docs: 60, Seed: 5, Contain: true})
			cl.Produce(t, inTopic, docMessages(t, docs)...)
			c := loadConfig(t, cl.Brokers, "kafka.tls.enabled", "true", "kafka.tls.ca", caFile,
				"kafka.sasl.mechanism", strings.ToLower(mech), "kafka.sasl.user", user, "kafka.sasl.password", pass)
			in := start(t, c, memoryStore(t, c))
			ids := make([]string, len(docs))
			for i, d := range docs {
				ids[i] = d.ID
			}
			waitEvents(t, cl, ids, time.Minute)
			if err := in.stop(t); err != nil {
				t.Fatal(err)
			}

			// The wrong password.
			bad := loadConfig(t, cl.Brokers, "kafka.tls.enabled", "true", "kafka.tls.ca", caFile,
				"kafka.sasl.mechanism", strings.ToLower(mech), "kafka.sasl.user", user, "kafka.sasl.password", "wrong-Pa55word")
			var logs strings.Builder
			pc, _ := pipeline.FromConfig(bad, "test")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err := New(ctx, Options{Config: bad, Pipeline: pc, Store: memoryStore(t, bad), Registerer: prometheus.NewRegistry(),
				Logger: slogTo(&logs)})
			if err == nil {
				t.Fatal("wrong password accepted")
			}
			msg := err.Error()
			for _, want := range []string{mech, strings.Split(cl.Brokers, ",")[0], user} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not name %q", msg, want)
				}
			}
			if !errors.Is(err, ErrKafka) {
				t.Errorf("error does not wrap ErrKafka: %v", err)
			}
			if strings.Contains(msg, "wrong-Pa55word") || strings.Contains(logs.String(), "wrong-Pa55word") {
				t.Errorf("the password leaked: %s\n%s", msg, logs.String())
			}
		})
	}
}

// A TLS broker whose CA the service does not trust is refused.
func TestServeTLSUntrusted(t *testing.T) {
	t.Parallel()
	_, serverTLS, clientTLS := testCA(t)
	otherCA, _, _ := testCA(t)
	cl := startKafka(t, 1, kafkatest.KfakeOpts(kfake.TLS(serverTLS)), kafkatest.WithClient(clientTLS, nil))
	c := loadConfig(t, cl.Brokers, "kafka.tls.enabled", "true", "kafka.tls.ca", otherCA)
	pc, _ := pipeline.FromConfig(c, "test")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := New(ctx, Options{Config: c, Pipeline: pc, Store: memoryStore(t, c)}); err == nil || !errors.Is(err, ErrKafka) {
		t.Fatalf("untrusted broker: %v", err)
	}
}

// Secrets never appear in the example, in config check output or in the
// start-up log line.
func TestSecretsNotPrinted(t *testing.T) {
	t.Parallel()
	c := loadConfig(t, "127.0.0.1:1", "kafka.sasl.mechanism", "plain", "kafka.sasl.user", "u", "kafka.sasl.password", "hunter2-xyz",
		"index.url", "redis://:redispw-xyz@127.0.0.1:1")
	for k, v := range c.Redacted() {
		if strings.Contains(v, "hunter2-xyz") || strings.Contains(v, "redispw-xyz") {
			t.Errorf("%s = %s", k, v)
		}
	}
	if v, _ := c.Display("kafka.sasl.password"); v != "[redacted]" {
		t.Errorf("password displayed as %q", v)
	}
	var ex strings.Builder
	if err := config.Example(&ex, "web"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ex.String(), "password: \"\"") {
		t.Errorf("example shows a password value")
	}
}

// Redis AUTH keeps working from serve, and the password stays out of the
// logs.
func TestServeRedisAuth(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{Args: []string{"--requirepass", "redis-Pa55-q"}})
	cl := startKafka(t, 2)
	docs := synth.Corpus(synth.Config{Docs: 80, Seed: 6, Contain: true})
	cl.Produce(t, inTopic, docMessages(t, docs)...)
	c := loadConfig(t, cl.Brokers, "index.url", "redis://:redis-Pa55-q@"+srv.Addr+"/0")
	var logs lockedBuilder
	in := startLogged(t, c, openStore(t, c), slog.New(slog.NewJSONHandler(&logs, nil)))
	waitEvents(t, cl, idsOf(docs), time.Minute)
	if err := in.stop(t); err != nil {
		t.Fatal(err)
	}
	if l := logs.String(); strings.Contains(l, "redis-Pa55-q") || !strings.Contains(l, srv.Addr) {
		t.Errorf("logs leak the password or do not name the index:\n%s", l)
	}
	bad := loadConfig(t, cl.Brokers, "index.url", "redis://:wrong@"+srv.Addr+"/0")
	if _, _, err := pipeline.OpenStore(context.Background(), bad, "test"); err == nil || strings.Contains(err.Error(), "wrong") {
		t.Errorf("wrong Redis password: %v", err)
	}
}

// lockedBuilder is a strings.Builder safe for concurrent writes.
type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Issue 24, point 7: a Redis password in the password-only form
// redis://PASSWORD@host, or in a URL that does not parse, was printed
// raw by the start-up log and errors. Every form is masked now.
func TestSecretsNotPrintedAnyURLForm(t *testing.T) {
	t.Parallel()
	cl := startKafka(t, 1)
	for _, tt := range []struct{ name, url string }{
		{"password-only", "redis://s3cret-A1@127.0.0.1:1/0"},
		{"empty-user", "redis://:s3cret-A1@127.0.0.1:1/0"},
		{"user-and-password", "redis://alice:s3cret-A1@127.0.0.1:1/0"},
		{"unparsable-at-and-slash", "redis://:s3cret-A1/x@y@127.0.0.1:1/0"},
		{"unparsable-percent", "redis://:s3cret-A1%zz@127.0.0.1:1/0"},
		{"cluster", "redis+cluster://alice:s3cret-A1@127.0.0.1:1,127.0.0.1:2"},
		{"tls", "rediss://s3cret-A1@127.0.0.1:1/0?namespace=n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// Each form waits out its failed dials: the forms run in
			// parallel, each service in a consumer group of its own.
			t.Parallel()
			c := loadConfig(t, cl.Brokers, "index.url", tt.url, "kafka.group", "neardup-test-"+tt.name)
			_, _, err := pipeline.OpenStore(context.Background(), c, "test")
			if err == nil {
				t.Fatal("opening an index on a closed port succeeded")
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error shows the password: %v", err)
			}
			var logs lockedBuilder
			in := startLogged(t, c, memoryStore(t, c), slog.New(slog.NewJSONHandler(&logs, nil)))
			in.waitReady(t, http.StatusOK, 30*time.Second)
			if err := in.stop(t); err != nil {
				t.Fatal(err)
			}
			if l := logs.String(); strings.Contains(l, "s3cret") || !strings.Contains(l, "xxxxx@") {
				t.Errorf("start-up log shows the password or no masked URL:\n%s", l)
			}
		})
	}
}
