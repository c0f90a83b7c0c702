package config

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "neardup.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPrecedence(t *testing.T) {
	path := writeFile(t, "sketch:\n  k: 64\n  shingle: 4\nindex:\n  retention: 48h\n")
	o := &Overrides{}
	o.Add("sketch.shingle", "3")
	c, err := Load(path, []string{"NEARDUP_SKETCH_K=256", "NEARDUP_SKETCH_SHINGLE=7", "OTHER=1"}, o)
	if err != nil {
		t.Fatal(err)
	}
	if c.Sketch.K != 256 { // env beats file
		t.Errorf("k = %d, want 256 from the environment", c.Sketch.K)
	}
	if c.Sketch.Shingle != 3 { // flag beats env
		t.Errorf("shingle = %d, want 3 from the flag", c.Sketch.Shingle)
	}
	if c.Index.Retention != 48*time.Hour {
		t.Errorf("retention = %v, want 48h from the file", c.Index.Retention)
	}
	if c.Index.URL != "memory" {
		t.Errorf("url = %q, want the default", c.Index.URL)
	}
}

func TestProfileDefaults(t *testing.T) {
	o := &Overrides{}
	o.Add("profile", "sentence")
	c, err := Load(writeFile(t, "sketch:\n  keep_text: 100\n"), nil, o)
	if err != nil {
		t.Fatal(err)
	}
	if c.Profile != "sentence" || c.Sketch.CharGram != 5 || c.Sketch.IMatch != "off" {
		t.Errorf("sentence profile defaults not applied: %+v", c.Sketch)
	}
	if c.Sketch.KeepText != 100 {
		t.Errorf("file did not override the profile: keep_text = %d", c.Sketch.KeepText)
	}
	c, err = Load(writeFile(t, "profile: books\n"), nil, nil)
	if err != nil || !c.Sketch.DropDigits {
		t.Errorf("profile from file: %v, drop_digits %v", err, c.Sketch.DropDigits)
	}
}

func TestErrorsNameTheKey(t *testing.T) {
	tests := []struct {
		name, file string
		env        []string
		want       string
	}{
		{"unknown key", "sketch:\n  kay: 3\n", nil, `line 2: unknown key "sketch.kay"`},
		// A file key gets the "did you mean" an environment variable gets.
		{"unknown key near one", "sketch:\n  k: 64\n  shingel: 3\n", nil, `line 3: unknown key "sketch.shingel"; did you mean sketch.shingle?`},
		{"unknown section key", "verfy:\n  jaccard: 0.6\n", nil, `unknown key "verfy.jaccard"; did you mean verify.jaccard?`},
		{"bad type", "sketch:\n  k: many\n", nil, "sketch.k"},
		{"bad enum", "sketch:\n  method: fast\n", nil, "sketch.method = fast: want oph or classic"},
		{"bad profile", "profile: news\n", nil, `profile "news"`},
		{"env", "", []string{"NEARDUP_INDEX_BATCH=0"}, "index.batch = 0: want 1..10000"},
		{"env type", "", []string{"NEARDUP_INDEX_RETENTION=soon"}, "NEARDUP_INDEX_RETENTION"},
		{"bands without rows", "sketch:\n  bands: 9\n", nil, "sketch.bands/sketch.rows"},
		{"malformed yaml", "sketch: [1, 2\n", nil, "yaml"},
		// go.yaml.in/yaml/v3 names the 0-based line for parser errors.
		{"yaml parser error line", "sketch:\n  k: [oops\n", nil, "yaml: line 2: did not find expected ',' or ']'"},
		{"yaml scanner error line", "sketch:\n  k: 3\n  seed: a: b\n", nil, "yaml: line 3: mapping values are not allowed"},
		{"unknown env key", "", []string{"NEARDUP_SKETCH_KK=12"}, "$NEARDUP_SKETCH_KK: no configuration key \"sketch.kk\"; did you mean sketch.k ($NEARDUP_SKETCH_K)?"},
		{"unknown env section", "", []string{"NEARDUP_FOO=1"}, "unknown environment variable $NEARDUP_FOO"},
		// Issue 38: an event limit no Kafka client can produce.
		{"max_event_bytes 1GiB", "", []string{"NEARDUP_PIPELINE_MAX_EVENT_BYTES=1GiB"}, "pipeline.max_event_bytes = 1073741824: want 4096..1GiB-1MiB"},
		// Issue 38: the admin endpoint off loopback without a token.
		{"admin_addr without token", "", []string{"NEARDUP_HTTP_ADMIN_ADDR=:8081"}, "http.admin_addr = :8081: want a loopback address"},
		{"admin_addr same as addr", "", []string{"NEARDUP_HTTP_ADMIN_ADDR=:8080", "NEARDUP_HTTP_ADMIN_TOKEN=t"}, "http.admin_addr = :8080: want an address other than http.addr"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(writeFile(t, tt.file), tt.env, nil)
			if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want ErrInvalid mentioning %q", err, tt.want)
			}
		})
	}
}

// The example must be a valid configuration that loads to the defaults.
func TestExampleRoundTrip(t *testing.T) {
	for _, p := range []string{"web", "books", "sentence"} {
		var buf bytes.Buffer
		if err := Example(&buf, p); err != nil {
			t.Fatal(err)
		}
		c, err := Load(writeFile(t, buf.String()), nil, nil)
		if err != nil {
			t.Fatalf("%s example does not load: %v\n%s", p, err, buf.String())
		}
		if c.Profile != p {
			t.Errorf("profile %q after loading the %s example", c.Profile, p)
		}
		for _, key := range Keys() {
			if _, ok := c.Get(key); !ok {
				t.Errorf("key %s missing", key)
			}
		}
		if !strings.Contains(buf.String(), "# MinHash signature length") {
			t.Error("example lacks comments")
		}
	}
}

// Variables that are not keys but are documented as read elsewhere load.
func TestOtherVariables(t *testing.T) {
	var env []string
	for _, k := range OtherVariables {
		env = append(env, k+"=1")
	}
	if _, err := Load("", append(env, "NEARDUP_SKETCH_K=64", "OTHER_THING=1"), nil); err != nil {
		t.Fatal(err)
	}
}

// The example prints the thresholds the profile's cascade really uses
// (verify's built-in profiles), not the zero that means "the profile's".
func TestExampleThresholds(t *testing.T) {
	for _, tt := range []struct {
		profile string
		want    []string
	}{
		{"web", []string{"  jaccard: 0.5\n", "  containment: 0.8\n", "  passage_shared: 20\n", "  its: 0\n"}},
		{"books", []string{"  jaccard: 0.6\n", "  its: 0.72\n", "  containment: 0\n", "  passage_shared: 0\n"}},
		{"sentence", []string{"  edit: 0.75\n", "  jaccard: 0\n"}},
	} {
		var buf bytes.Buffer
		if err := Example(&buf, tt.profile); err != nil {
			t.Fatal(err)
		}
		for _, w := range tt.want {
			if !strings.Contains(buf.String(), w) {
				t.Errorf("%s example lacks %q", tt.profile, w)
			}
		}
	}
}

func TestSizes(t *testing.T) {
	var c Config
	if err := c.Set("sketch.max_bytes", "4MiB"); err != nil || c.Sketch.MaxBytes != 4<<20 {
		t.Errorf("4MiB → %d, %v", c.Sketch.MaxBytes, err)
	}
}

// Display shows the value a run uses: a zero threshold as the profile's,
// a set one as set, a score the profile does not check as 0, zero bands
// and rows as the ones chosen, a zero generation as half the retention.
func TestDisplayEffective(t *testing.T) {
	for _, tt := range []struct {
		env  []string
		want map[string]string
	}{
		{nil, map[string]string{"verify.jaccard": "0.5", "verify.its": "0", "sketch.bands": "30", "sketch.rows": "4", "index.generation": "360h0m0s"}},
		{[]string{"NEARDUP_VERIFY_JACCARD=0.7", "NEARDUP_SKETCH_BANDS=16", "NEARDUP_SKETCH_ROWS=8"}, map[string]string{"verify.jaccard": "0.7", "sketch.bands": "16", "sketch.rows": "8"}},
		{[]string{"NEARDUP_PROFILE=books"}, map[string]string{"verify.jaccard": "0.6", "verify.its": "0.72", "verify.containment": "0", "verify.passage_shared": "0"}},
		{[]string{"NEARDUP_PROFILE=sentence"}, map[string]string{"verify.edit": "0.75", "verify.jaccard": "0"}},
		{[]string{"NEARDUP_INDEX_RETENTION=0"}, map[string]string{"index.generation": "24h0m0s"}},
	} {
		c, err := Load("", tt.env, nil)
		if err != nil {
			t.Fatal(err)
		}
		shown := c.Redacted()
		for k, v := range tt.want {
			if got, _ := c.Display(k); got != v || shown[k] != v {
				t.Errorf("%v: %s shows as %q (Redacted %q), want %q", tt.env, k, got, shown[k], v)
			}
		}
	}
}
