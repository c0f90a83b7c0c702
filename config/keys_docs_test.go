package config

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// keyRef matches a configuration key as a text cites it: a section of
// the configuration ("index", "kafka", …) then one or more dot-separated
// lower-case names (index.common_docs, kafka.tls.ca), with a group's or a
// family's wildcard (kafka.sasl.*, index.tls_*).
func keyRef(sections []string) *regexp.Regexp {
	return regexp.MustCompile(`(?:` + strings.Join(sections, "|") + `)(?:\.[a-z](?:[a-z0-9_]*[a-z0-9])?)+(\.\*|_\*)?`)
}

// unknownKeys returns the keys text cites that the configuration does not
// have. A group (kafka.tls, kafka.sasl.*) or a family (index.tls_*) is
// cited by its prefix; a file name (pipeline.go, service.yaml), a part of
// a path, of a longer name or a call (index.Open(…) is not lower-case
// anyway) is no key.
func unknownKeys(text string, keys []string) []string {
	var sections []string
	groups := map[string]bool{}
	for _, k := range keys {
		parts := strings.Split(k, ".")
		if len(parts) > 1 && !slices.Contains(sections, parts[0]) {
			sections = append(sections, parts[0])
		}
		for i := 1; i < len(parts); i++ {
			groups[strings.Join(parts[:i], ".")] = true
		}
	}
	var bad []string
	for _, m := range keyRef(sections).FindAllStringSubmatchIndex(text, -1) {
		if m[0] > 0 && strings.ContainsRune("_./-", rune(text[m[0]-1])) || isWord(text, m[0]-1) ||
			m[1] < len(text) && (strings.ContainsRune("_/(-", rune(text[m[1]])) || isWord(text, m[1])) {
			continue
		}
		ref, tail := text[m[0]:m[1]], ""
		if m[2] >= 0 {
			ref, tail = text[m[0]:m[2]], text[m[2]:m[3]]
		}
		switch ext := ref[strings.LastIndexByte(ref, '.')+1:]; {
		case ext == "go" || ext == "md" || ext == "yaml" || ext == "yml" || ext == "json":
		case tail == "" && slices.Contains(keys, ref), tail != "_*" && groups[ref]:
		case tail == "_*" && slices.ContainsFunc(keys, func(k string) bool { return strings.HasPrefix(k, ref+"_") }):
		default:
			bad = append(bad, ref+tail)
		}
	}
	return bad
}

// isWord reports whether text[i] is an ASCII letter or digit.
func isWord(text string, i int) bool {
	if i < 0 || i >= len(text) {
		return false
	}
	c := text[i]
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func TestUnknownKeys(t *testing.T) {
	for _, tt := range []struct {
		text string
		want []string
	}{
		{"set `index.common_docs` to 3", nil},
		{"withheld by index.max_bucket.", []string{"index.max_bucket"}},
		{"kafka.tls.enabled and kafka.tls, kafka.sasl.* and index.tls_*", nil},
		{"kafka.tls.enable", []string{"kafka.tls.enable"}},
		{"index.tlz_* or index.url_*", []string{"index.tlz_*", "index.url_*"}},
		{"see index.go, pipeline.md and service.yaml; index.Open(ctx)", nil},
		{"docs/index.common_docs.md; neardup_index_common_docs; x.index.foo", nil},
		{"(verify.jaccard=0.5,sketch.k: 128)", nil},
		{"log.level\nhttp.adr", []string{"http.adr"}},
	} {
		if got := unknownKeys(tt.text, Keys()); !slices.Equal(got, tt.want) {
			t.Errorf("unknownKeys(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

// TestDocsNameKeysThatExist reads every configuration key the docs (README,
// docs/, their schemas) and the deployment kit (deploy/: alerts, their
// tests, the Grafana panels, the Kubernetes and compose files) cite and
// checks that the configuration has it.
func TestDocsNameKeysThatExist(t *testing.T) {
	var files []string
	for _, root := range []string{"../README.md", "../docs", "../deploy"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			switch filepath.Ext(path) {
			case ".md", ".json", ".yml", ".yaml", "":
				if !d.IsDir() {
					files = append(files, path)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	keys := Keys()
	read := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range unknownKeys(string(b), keys) {
			t.Errorf("%s cites %s, which is no configuration key", f, k)
		}
		read++
	}
	for _, must := range []string{"../README.md", "../docs/event.schema.json", "../deploy/prometheus/alerts.yml", "../deploy/grafana/neardup.json"} {
		if !slices.Contains(files, must) {
			t.Errorf("%s not read", must)
		}
	}
	t.Logf("%d files read", read)
}
