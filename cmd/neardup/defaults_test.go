package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/neardup/neardup/config"
)

// checkValues parses config check's output into key → value.
func checkValues(t *testing.T, out string) map[string]string {
	t.Helper()
	vals := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			t.Fatalf("config check line %q", l)
		}
		vals[k] = v
	}
	if len(vals) != len(config.Keys()) {
		t.Fatalf("config check printed %d keys of %d", len(vals), len(config.Keys()))
	}
	return vals
}

// helpDefaultRe matches a flag's help in PrintDefaults form: its name, then
// its usage ending in "(default …)".
var helpDefaultRe = regexp.MustCompile(`(?m)^  -(\S+) value\n\s+.*\(default (.*)\)$`)

// One source for defaults: for every profile, config check prints the
// values the run uses (verify.jaccard 0.5 in web, not the 0 that stands
// for the profile's), config example prints the same values (the file it
// writes checks to exactly what no file gives), and each flag's help names
// the same default, per profile where they differ. On today's main config
// check printed verify.jaccard=0 and the help "(default 0)".
func TestDefaultsOneSource(t *testing.T) {
	contractTest(t)
	_, _, help := neardup(t, "serve", "-h")
	helps := map[string]string{}
	for _, m := range helpDefaultRe.FindAllStringSubmatch(help, -1) {
		helps[m[1]] = m[2]
	}
	if len(helps) != len(config.Keys()) {
		t.Fatalf("serve -h gives a default for %d flags of %d keys", len(helps), len(config.Keys()))
	}
	want := map[string]map[string]string{
		"web":      {"verify.jaccard": "0.5", "verify.containment": "0.8", "verify.passage_shared": "20", "sketch.bands": "30", "sketch.rows": "4"},
		"books":    {"verify.jaccard": "0.6", "verify.its": "0.72", "verify.containment": "0", "sketch.k": "256", "sketch.bands": "85", "sketch.rows": "3"},
		"sentence": {"verify.edit": "0.75", "verify.jaccard": "0"},
	}
	for _, profile := range config.Profiles {
		code, out, errOut := neardup(t, "config", "check", "--profile", profile)
		if code != exitOK {
			t.Fatalf("config check --profile %s: exit %d: %s", profile, code, errOut)
		}
		check := checkValues(t, out)
		for k, v := range want[profile] {
			if check[k] != v {
				t.Errorf("%s: config check prints %s=%s, the run uses %s", profile, k, check[k], v)
			}
		}
		_, example, _ := neardup(t, "config", "example", "--profile", profile)
		file := filepath.Join(t.TempDir(), profile+".yaml")
		if err := os.WriteFile(file, []byte(example), 0o600); err != nil {
			t.Fatal(err)
		}
		code, out, errOut = neardup(t, "config", "check", file)
		if code != exitOK {
			t.Fatalf("config check of the %s example: exit %d: %s", profile, code, errOut)
		}
		for k, v := range checkValues(t, out) {
			if check[k] != v {
				t.Errorf("%s: the example sets %s=%s, the profile's default is %s", profile, k, v, check[k])
			}
		}
		for k, v := range check {
			h := helps[k]
			if strings.Contains(h, "web ") {
				h = regexp.MustCompile(`(?:^|, )` + profile + ` ([^,]*)`).FindStringSubmatch(h)[1]
			}
			if v == "" {
				v = `""`
			}
			if h != v {
				t.Errorf("%s: --%s help says default %s, config check %s", profile, k, helps[k], v)
			}
		}
	}
	// The commands that run over files list only the keys they read.
	// (delete reads the kafka section: with kafka.brokers it produces the
	// deleted events and the unique topic's tombstones a member would.)
	for _, cmd := range [][]string{{"scan"}, {"check"}, {"delete"}, {"compare"}, {"eval"}} {
		_, _, h := neardup(t, append(cmd, "-h")...)
		for _, never := range []string{"-http.addr", "-kafka.brokers", "-log.format"} {
			if cmd[0] == "delete" && never == "-kafka.brokers" {
				continue
			}
			if strings.Contains(h, "  "+never+" ") {
				t.Errorf("neardup %s -h lists %s, which it never uses", cmd[0], never)
			}
		}
		if !strings.Contains(h, "  -verify.jaccard value") {
			t.Errorf("neardup %s -h lacks -verify.jaccard", cmd[0])
		}
	}
}
