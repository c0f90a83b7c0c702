package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/index/redistest"
	"github.com/neardup/neardup/internal/dataset"
	"github.com/neardup/neardup/internal/kafkatest"
)

// The documentation the tests keep honest: every neardup command line in
// these files is parsed against the command's real flag set, the ones in
// fenced blocks marked "runnable" are run, and the figures they quote come
// from docs/performance.md.
func docFiles(t *testing.T) []string {
	t.Helper()
	root := filepath.Join("..", "..")
	files := []string{filepath.Join(root, "README.md"), filepath.Join(root, "examples", "README.md"), filepath.Join(root, "index", "BENCHMARKS.md")}
	more, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(more) == 0 {
		t.Fatalf("docs/*.md: %v", err)
	}
	return append(files, more...)
}

// docCommand is one neardup invocation found in a document.
type docCommand struct {
	file     string
	line     int
	env      []string // NEARDUP_* assignments in front of it
	args     []string // after "neardup"
	runnable bool
}

var shellInfo = map[string]bool{"": true, "sh": true, "shell": true, "bash": true, "console": true}

// docCommands extracts the neardup command lines of a Markdown file: from
// fenced shell blocks, indented code blocks and inline code spans.
func docCommands(t *testing.T, path string) []docCommand {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []docCommand
	add := func(line int, text string, runnable bool) {
		for _, c := range neardupInvocations(text) {
			c.file, c.line, c.runnable = path, line, runnable
			out = append(out, c)
		}
	}
	var (
		fence     string // the open fence, "" outside one
		shell     bool   // the open fence is a shell block
		runnable  bool
		pending   string // a line continued with a backslash
		prevBlank = true
	)
	para, paraLine := "", 0
	flush := func() {
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(para, -1) {
			add(paraLine, strings.ReplaceAll(m[1], "\n", " "), false)
		}
		para = ""
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trim := strings.TrimSpace(line)
		if fence == "" && strings.HasPrefix(trim, "```") {
			flush()
			info := strings.Fields(strings.TrimPrefix(trim, "```"))
			fence, shell, runnable = "```", len(info) == 0 || shellInfo[info[0]], slices.Contains(info, "runnable")
			continue
		}
		if fence != "" {
			if strings.HasPrefix(trim, fence) {
				fence = ""
				continue
			}
			if !shell {
				continue
			}
		} else if !(strings.HasPrefix(line, "    ") && (prevBlank || pending != "")) || strings.HasPrefix(trim, "- ") || strings.HasPrefix(trim, "|") {
			// Prose: inline code spans only, which may wrap across the
			// lines of a paragraph.
			prevBlank = trim == ""
			if prevBlank {
				flush()
				continue
			}
			if para == "" {
				paraLine = n
			}
			para += line + "\n"
			continue
		}
		if strings.HasSuffix(trim, `\`) {
			pending += strings.TrimSuffix(trim, `\`) + " "
			continue
		}
		add(n, pending+trim, fence != "" && runnable)
		pending = ""
	}
	flush()
	return out
}

// neardupInvocations splits a shell line into commands (at &&, ;, |, and
// parentheses) and returns those that run neardup: "neardup",
// "./neardup", "bin/neardup" or "go run ./cmd/neardup", after any
// VAR=value assignments.
func neardupInvocations(line string) []docCommand {
	line = strings.TrimPrefix(strings.TrimSpace(line), "$ ")
	var out []docCommand
	for _, seg := range splitShell(line) {
		words := shellWords(seg)
		var env []string
		for len(words) > 0 && regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`).MatchString(words[0]) {
			env = append(env, words[0])
			words = words[1:]
		}
		switch {
		case len(words) >= 3 && words[0] == "go" && words[1] == "run" && words[2] == "./cmd/neardup":
			words = words[3:]
		case len(words) >= 1 && (words[0] == "neardup" || words[0] == "./neardup" || words[0] == "bin/neardup"):
			words = words[1:]
		default:
			continue
		}
		if len(words) == 0 {
			continue
		}
		out = append(out, docCommand{env: env, args: words})
	}
	return out
}

// splitShell cuts a line at unquoted &&, ||, ;, |, ( and ), and drops an
// unquoted # comment.
func splitShell(s string) []string {
	var parts []string
	var cur strings.Builder
	var quote rune
	for i, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && (i == 0 || s[i-1] == ' '):
			return append(parts, cur.String())
		case r == '&' || r == ';' || r == '|' || r == '(' || r == ')':
			parts = append(parts, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteRune(r)
	}
	return append(parts, cur.String())
}

// shellWords splits on unquoted spaces and removes the quotes.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	in, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// Subcommands that take a second word before their flags.
var subcommands = map[string][]string{
	"config": {"example", "check"}, "eval": {"synth", "sites"}, "bench": {"serve", "corpus", "broker"}, "lexicon": {"build"},
}

// flagLineRe matches a flag's line in the flag package's PrintDefaults.
var flagLineRe = regexp.MustCompile(`^  -([^\s]+)(?:[ \t](\S+))?`)

// flagSet returns a command's flags (name → takes a value) from its -h
// output, the flag package's PrintDefaults format.
func flagSet(t *testing.T, cmd []string, cache map[string]map[string]bool) map[string]bool {
	t.Helper()
	key := strings.Join(cmd, " ")
	if f, ok := cache[key]; ok {
		return f
	}
	var o, e bytes.Buffer
	code := run(context.Background(), append(slices.Clone(cmd), "-h"), &o, &e)
	flags := map[string]bool{}
	for _, l := range strings.Split(o.String()+e.String(), "\n") {
		m := flagLineRe.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		// "  -name value" takes a value; "  -name" and "  -x\tusage" do not
		// (bool flags), which the line's tab or end tells.
		flags[m[1]] = m[2] != "" && !strings.HasPrefix(l[len("  -")+len(m[1]):], "\t")
	}
	if code != exitOK || len(flags) == 0 && key != "version" { // version has no flags
		t.Fatalf("neardup %s -h: exit %d, %d flags found:\n%s%s", key, code, len(flags), o.String(), e.String())
	}
	cache[key] = flags
	return flags
}

// placeholder reports a documentation placeholder (KEY, FILE, [--x], …).
func placeholder(w string) bool {
	return strings.ContainsAny(w, "[]…<>") || w == "..." || strings.Contains(w, "KEY") || strings.Contains(w, "key=value")
}

// checkArgs parses args as Go's flag package would and reports flags the
// command does not define, flags after the first positional argument
// (which the flag package would read as a path), and a missing value.
func checkArgs(t *testing.T, c docCommand, cache map[string]map[string]bool) (problems []string) {
	t.Helper()
	where := c.file + ":" + strconv.Itoa(c.line) + ": neardup " + strings.Join(c.args, " ")
	errorf := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }
	known := map[string]bool{}
	for _, cm := range commands() {
		known[cm.name] = true
	}
	if !known[c.args[0]] {
		if placeholder(c.args[0]) || c.args[0] == "COMMAND" || c.args[0] == "help" {
			return nil
		}
		errorf("%s: no command %q", where, c.args[0])
		return problems
	}
	cmd, rest := []string{c.args[0]}, c.args[1:]
	if subs, ok := subcommands[c.args[0]]; ok && len(rest) > 0 && slices.Contains(subs, rest[0]) {
		cmd, rest = append(cmd, rest[0]), rest[1:]
	} else if ok && c.args[0] != "eval" {
		if len(rest) > 0 && !placeholder(rest[0]) {
			errorf("%s: %s has no subcommand %q (want %s)", where, c.args[0], rest[0], strings.Join(subs, ", "))
		}
		return problems
	}
	flags := flagSet(t, cmd, cache)
	interspersed := strings.Join(cmd, " ") == "config check"
	positional := false
	for i := 0; i < len(rest); i++ {
		w := strings.Trim(rest[i], "[]")
		if placeholder(rest[i]) && !strings.HasPrefix(w, "-") || w == "" {
			continue
		}
		if !strings.HasPrefix(w, "-") || w == "-" {
			positional = true
			continue
		}
		if w == "--" {
			positional = true
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(w, "-"), "=")
		if placeholder(name) || strings.ToUpper(name) == name {
			continue
		}
		takesValue, ok := flags[name]
		switch {
		case !ok:
			errorf("%s: neardup %s has no flag -%s", where, strings.Join(cmd, " "), name)
		case positional && !interspersed:
			errorf("%s: -%s comes after a positional argument, so Go's flag package reads it as an argument", where, name)
		case takesValue && !hasValue:
			i++ // its value
		}
	}
	for _, kv := range c.env {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "NEARDUP_") && !slices.Contains(envNames(), name) {
			errorf("%s: $%s is no configuration key's variable", where, name)
		}
	}
	return problems
}

func envNames() []string {
	names := slices.Clone(config.OtherVariables)
	for _, k := range config.Keys() {
		names = append(names, config.EnvName(k))
	}
	return names
}

// TestDocsCommands parses every neardup command line of the documentation
// against the real flag sets and runs the runnable ones from the
// repository root.
func TestDocsCommands(t *testing.T) {
	cache := map[string]map[string]bool{}
	var all, runnable []docCommand
	for _, f := range docFiles(t) {
		all = append(all, docCommands(t, f)...)
	}
	if len(all) < 20 {
		t.Fatalf("found only %d neardup command lines in the docs", len(all))
	}
	for _, c := range all {
		for _, p := range checkArgs(t, c, cache) {
			t.Error(p)
		}
		if c.runnable {
			runnable = append(runnable, c)
		}
	}
	if len(runnable) < 5 {
		t.Fatalf("only %d runnable commands", len(runnable))
	}
	t.Chdir(filepath.Join("..", ".."))
	for _, c := range runnable {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			for _, kv := range c.env {
				k, v, _ := strings.Cut(kv, "=")
				t.Setenv(k, v)
			}
			var o, e bytes.Buffer
			if code := run(context.Background(), c.args, &o, &e); code != exitOK || o.Len() == 0 {
				t.Errorf("%s:%d: neardup %s: exit %d, %d bytes of output\n%s", c.file, c.line, strings.Join(c.args, " "), code, o.Len(), e.String())
			}
		})
	}
}

// Every NEARDUP_ variable the documentation names is a configuration
// key's (config.EnvName) or one of config.OtherVariables, which is what
// config.Load accepts.
func TestDocsVariables(t *testing.T) {
	known := envNames()
	// The docs' example of a typo that config.Load rejects.
	const typo = "NEARDUP_SKETCH_KK"
	if _, err := config.Load("", []string{typo + "=12"}, nil); err == nil {
		t.Errorf("$%s, the documented typo, is accepted", typo)
	}
	known = append(known, typo)
	for _, f := range docFiles(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`NEARDUP_[A-Z0-9_]*[A-Z0-9]`).FindAllString(string(data), -1) {
			if !slices.Contains(known, m) {
				t.Errorf("%s: $%s is not a variable neardup reads", f, m)
			}
		}
	}
}

// Every configuration key the documentation names in code spans
// (`sketch.k`, `--index.url=…`) exists, so a renamed or removed key does
// not live on in the docs.
func TestDocsKeys(t *testing.T) {
	keys := map[string]bool{}
	for _, k := range config.Keys() {
		keys[k] = true
		if i := strings.LastIndex(k, "."); i > 0 {
			keys[k[:i]] = true // its section
		}
	}
	re := regexp.MustCompile("`-{0,2}((?:sketch|index|verify|pipeline|kafka|http|log)\\.[a-z_.]*[a-z])([._]\\*)?")
	for _, f := range docFiles(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(data), -1) {
			if m[2] != "" { // a wildcard: index.tls_*
				if !slices.ContainsFunc(config.Keys(), func(k string) bool { return strings.HasPrefix(k, m[1]+m[2][:1]) }) {
					t.Errorf("%s: no configuration key matches `%s%s`", f, m[1], m[2])
				}
				continue
			}
			if !keys[m[1]] {
				t.Errorf("%s: `%s` is no configuration key ('neardup config example' lists them)", f, m[1])
			}
		}
	}
}

// The checker itself: a wrong flag, a flag after a path and a bad variable
// are caught; a right line passes.
func TestDocsCommandChecker(t *testing.T) {
	cache := map[string]map[string]bool{}
	for _, tt := range []struct {
		line string
		bad  bool
	}{
		{"go run ./cmd/neardup scan --emit all examples/docs", false},
		{"neardup config check deploy/neardup.yaml --sketch.k=64", false},
		{"NEARDUP_SKETCH_K=64 neardup scan --quiet -", false},
		{"neardup scan --emitt all examples/docs", true},
		{"neardup scan examples/docs --emit all", true},
		{"NEARDUP_SKETCH_KK=64 neardup scan x", true},
		{"neardup bench sevre", true},
		{"neardup nosuch", true},
	} {
		cs := neardupInvocations(tt.line)
		if len(cs) != 1 {
			t.Fatalf("%q: %d invocations", tt.line, len(cs))
		}
		cs[0].file = "test"
		if got := checkArgs(t, cs[0], cache); (len(got) > 0) != tt.bad {
			t.Errorf("%q: problems %q, want some: %v", tt.line, got, tt.bad)
		}
	}
}

// figureRe matches the figures the single-source rule covers: throughput
// and CPU or bytes per document.
var figureRe = regexp.MustCompile(`(\d[\d,.]*)\s*(?:docs/s|documents/s|documents/s per|µs/doc|µs (?:of [a-z-]+ CPU )?per document|B per document|bytes per document)`)

// TestDocsFigures: every throughput, CPU-per-document and
// bytes-per-document figure that README.md, docs/operations.md and
// docs/design.md quote appears in docs/performance.md, the single source,
// and each of them links there.
func TestDocsFigures(t *testing.T) {
	root := filepath.Join("..", "..")
	perf, err := os.ReadFile(filepath.Join(root, "docs", "performance.md"))
	if err != nil {
		t.Fatal(err)
	}
	source := string(perf)
	checked := 0
	for _, f := range []string{"README.md", "docs/operations.md", "docs/design.md"} {
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		if !strings.Contains(text, "performance.md") {
			t.Errorf("%s does not link to docs/performance.md", f)
		}
		for _, m := range figureRe.FindAllStringSubmatch(text, -1) {
			checked++
			fig := strings.TrimRight(m[1], ".,")
			if !regexp.MustCompile(`(^|[^\d,.])` + regexp.QuoteMeta(fig) + `($|[^\d,])`).MatchString(source) {
				t.Errorf("%s quotes %q, which docs/performance.md does not have", f, m[0])
			}
		}
	}
	if checked == 0 {
		t.Error("no figures found: the pattern is broken")
	}
}

// TestGuideProfiles: the profile table of docs/operations.md states each
// profile's real cascade thresholds and bands.
func TestGuideProfiles(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, line := range strings.Split(string(data), "\n") {
		m := regexp.MustCompile("^\\| `(web|books|sentence)` \\|").FindStringSubmatch(line)
		if m == nil {
			continue
		}
		rows++
		o := &config.Overrides{}
		o.Add("profile", m[1])
		c, err := config.Load("", nil, o)
		if err != nil {
			t.Fatal(err)
		}
		var ex bytes.Buffer
		if err := config.Example(&ex, m[1]); err != nil {
			t.Fatal(err)
		}
		value := func(key string) string {
			v := regexp.MustCompile(`(?m)^  ` + key + `: (\S+)$`).FindStringSubmatch(ex.String())
			if v == nil {
				t.Fatalf("example lacks %s", key)
			}
			return v[1]
		}
		for label, key := range map[string]string{"Jaccard": "jaccard", "containment": "containment", "its": "its", "edit similarity": "edit"} {
			got := regexp.MustCompile(label + ` ≥ ([\d.]+)`).FindStringSubmatch(line)
			want := value(key)
			switch {
			case got == nil && want != "0":
				t.Errorf("%s row lacks %s ≥ %s", m[1], label, want)
			case got != nil && got[1] != want:
				t.Errorf("%s row: %s ≥ %s, the profile's is %s", m[1], label, got[1], want)
			}
		}
		b, r := c.BandsRows()
		if want := fmt.Sprintf("| %d × %d |", b, r); !strings.Contains(line, want) {
			t.Errorf("%s row lacks %q", m[1], want)
		}
	}
	if rows != 3 {
		t.Errorf("%d profile rows, want 3", rows)
	}
}

// TestExamplesREADME: examples/README.md's table says what scan reports.
func TestExamplesREADME(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := neardup(t, "scan", "--quiet", "--emit", "all", filepath.Join("..", "..", "examples", "docs"))
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	got := map[string]string{}
	for _, ev := range events(t, out) {
		got[filepath.Base(ev.ID)] = strings.TrimSpace(ev.Kind + " " + strings.TrimSuffix(filepath.Base(ev.DuplicateOf), "."))
	}
	rows := regexp.MustCompile(`(?m)^\| ([0-9][^ |]+\.txt) \| (unique|exact|near|partial)(?: duplicate of ([^ |]+\.txt))?`).FindAllStringSubmatch(string(data), -1)
	if len(rows) != len(got) {
		t.Errorf("the table has %d rows, scan decided %d documents", len(rows), len(got))
	}
	for _, r := range rows {
		if want := strings.TrimSpace(r[2] + " " + r[3]); got[r[1]] != want {
			t.Errorf("%s: the table says %q, scan reports %q", r[1], want, got[r[1]])
		}
	}
	count := map[int]string{7: "Seven", 8: "Eight", 9: "Nine"}[len(got)]
	if count == "" || !strings.HasPrefix(string(data), "# Example documents\n\n"+count+" short documents") {
		t.Errorf("examples/README.md does not open with the number of documents (%d)", len(got))
	}
}

// TestDocsNamespaceCleanup: the clean-up command of docs/operations.md
// ("Upgrading sketch parameters") removes every key of the namespace it
// names and no key of another.
func TestDocsNamespaceCleanup(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`redis-cli --scan --pattern '([^':]+):([^']*)'`).FindStringSubmatch(string(data))
	if m == nil {
		t.Fatal("no clean-up command in docs/operations.md")
	}
	ns, pattern := m[1], m[1]+":"+m[2]
	addr := redistest.StartServer(t)
	dir := filepath.Join("..", "..", "examples", "docs")
	for _, n := range []string{ns, ns + "-2"} {
		if code, _, errOut := neardup(t, "scan", "--quiet", "--index", "redis://"+addr, "--index.namespace", n, dir); code != exitOK {
			t.Fatalf("scan into %s: exit %d: %s", n, code, errOut)
		}
	}
	rc := redis.NewClient(&redis.Options{Addr: addr})
	defer rc.Close()
	ctx := context.Background()
	all, err := rc.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	matched, err := rc.Keys(ctx, pattern).Result()
	if err != nil {
		t.Fatal(err)
	}
	mine := 0
	for _, k := range all {
		if strings.HasPrefix(k, ns+":") {
			mine++
		}
	}
	if mine == 0 || len(matched) != mine {
		t.Errorf("pattern %q matches %d keys; namespace %s holds %d (of %d keys in all)", pattern, len(matched), ns, mine, len(all))
	}
}

// TestDocsKcatRecipes runs the kcat command lines of docs/operations.md as
// printed, against a Kafka-protocol broker, and reads what they produced
// back with kafka-go: the tombstone recipe with a URL id (whose colons cut
// the key on main, where the recipe split the line at its first ':': a
// malformed_json dead letter, nothing deleted) gives a record keyed by the
// whole id with a null value; the compose section's producer gives one
// record per line, keyed by the text before the tab.
func TestDocsKcatRecipes(t *testing.T) {
	contractTest(t)
	if _, err := exec.LookPath("kcat"); err != nil {
		dataset.Missing(t, "kcat (Debian's kcat, make deps) runs the docs' recipes")
	}
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	recipe := func(re string) string {
		m := regexp.MustCompile(re).FindString(string(data))
		if m == "" {
			t.Fatalf("docs/operations.md has no line matching %s", re)
		}
		return m
	}
	tombstone := recipe(`(?m)printf .*\| kcat -P -b BROKER -t TOPIC .*-Z$`)
	producer := recipe(`(?m)kcat -P -b localhost:29092 -t crawl.documents -K '\\t' -l docs.tsv`)
	cl := kafkatest.Start(t, kafkatest.Topic("deletes", 1), kafkatest.Topic("crawl.documents", 1))
	sh := func(cmd string, env ...string) {
		t.Helper()
		c := exec.Command("sh", "-c", cmd)
		c.Dir = t.TempDir()
		c.Env = append(os.Environ(), env...)
		if tsv := strings.Join(env, ""); strings.Contains(tsv, "TSV=") {
			if err := os.WriteFile(filepath.Join(c.Dir, "docs.tsv"), []byte(strings.TrimPrefix(env[0], "TSV=")), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", cmd, err, out)
		}
	}
	const id = "https://example.org:8443/news/2026/harbour?lang=en&x=a:b"
	sh(strings.NewReplacer("BROKER", cl.Brokers, "TOPIC", "deletes").Replace(tombstone), "ID="+id)
	got := cl.ReadAll(t, "deletes")
	if len(got) != 1 || string(got[0].Key) != id || got[0].Value != nil {
		t.Errorf("the tombstone recipe produced %d records, want one keyed %q with a null value: %+v", len(got), id, got)
	}

	docs := `https://example.org/a` + "\t" + `{"id":"https://example.org/a","text":"one"}` + "\n" +
		`https://example.org/b` + "\t" + `{"id":"https://example.org/b","text":"two"}` + "\n"
	sh(strings.Replace(producer, "localhost:29092", cl.Brokers, 1), "TSV="+docs)
	got = cl.ReadAll(t, "crawl.documents")
	if len(got) != 2 || string(got[0].Key) != "https://example.org/a" || string(got[1].Value) != `{"id":"https://example.org/b","text":"two"}` {
		t.Errorf("the compose producer recipe produced %+v", got)
	}
}

// TestDocsSimHashLane: the README's method table and compare say the
// SimHash lane is off when it is (sketch.simhash_k -1 by default); main's
// README listed "k = 3" and compare printed "near duplicate at ≤ 0".
func TestDocsSimHashLane(t *testing.T) {
	c, err := config.Load("", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Sketch.SimHashK != -1 {
		t.Fatalf("the lane is on by default (sketch.simhash_k %d): say so in README's method table and here", c.Sketch.SimHashK)
	}
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| SimHash-64[^\n]*").FindString(string(data))
	if !strings.Contains(row, "off by default") {
		t.Errorf("README's SimHash row does not say the lane is off: %q", row)
	}
	docs := filepath.Join("..", "..", "examples", "docs")
	_, out, _ := neardup(t, "compare", filepath.Join(docs, "01-harbour-bridge.txt"), filepath.Join(docs, "02-harbour-bridge-syndicated.txt"))
	if !strings.Contains(out, "(lane off: sketch.simhash_k -1)") || strings.Contains(out, "≤ 0") {
		t.Errorf("compare's SimHash row:\n%s", out)
	}
}
