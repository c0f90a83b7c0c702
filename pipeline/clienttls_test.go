package pipeline

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ClientTLS, the one TLS builder of kafka.tls.* and index.tls_*, names the
// key of the setting that is wrong.
func TestClientTLS(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.txt")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, prefix, ca, cert, key, want string
	}{
		{"none", "kafka.tls.", "", "", "", ""},
		{"missing ca", "kafka.tls.", filepath.Join(dir, "absent.pem"), "", "", "kafka.tls.ca: open"},
		{"ca not PEM", "index.tls_", notPEM, "", "", "index.tls_ca " + notPEM + ": no PEM certificate found"},
		{"cert without key", "index.tls_", "", notPEM, "", "index.tls_cert and index.tls_key go together"},
		{"bad pair", "kafka.tls.", "", notPEM, notPEM, "kafka.tls.cert/kafka.tls.key: "},
	} {
		tc, err := ClientTLS(tt.prefix, tt.ca, tt.cert, tt.key)
		switch {
		case tt.want == "" && (err != nil || tc == nil || tc.MinVersion != tls.VersionTLS12):
			t.Errorf("%s: %v, %v; want TLS 1.2 settings", tt.name, tc, err)
		case tt.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.want)):
			t.Errorf("%s: error %v, want it to start %q", tt.name, err, tt.want)
		}
	}
}
