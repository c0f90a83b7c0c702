package config

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/neardup/neardup/internal/suggest"
	"github.com/neardup/neardup/verify"
)

// field is one settable key.
type field struct {
	key, doc string
	secret   bool // never printed (tag secret:"true")
	v        reflect.Value
}

// fields lists every key of c in declaration order.
func fields(c *Config) []field {
	var out []field
	var walk func(prefix string, v reflect.Value)
	walk = func(prefix string, v reflect.Value) {
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			key := prefix + f.Tag.Get("yaml")
			if f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeOf(time.Duration(0)) {
				out = append(out, field{key: key, doc: f.Tag.Get("doc")})
				walk(key+".", v.Field(i))
				continue
			}
			out = append(out, field{key: key, doc: f.Tag.Get("doc"), secret: f.Tag.Get("secret") == "true", v: v.Field(i)})
		}
	}
	walk("", reflect.ValueOf(c).Elem())
	return out
}

// Keys returns every configuration key, e.g. "sketch.k".
func Keys() []string {
	var c Config
	var keys []string
	for _, f := range fields(&c) {
		if f.v.IsValid() {
			keys = append(keys, f.key)
		}
	}
	return keys
}

// Set sets one key from its string form.
func (c *Config) Set(key, value string) error {
	for _, f := range fields(c) {
		if f.key != key || !f.v.IsValid() {
			continue
		}
		if err := setValue(f.v, value); err != nil {
			return fmt.Errorf("%w: %s = %q: %w", ErrInvalid, key, value, err)
		}
		return nil
	}
	return fmt.Errorf("%w: %s", ErrInvalid, unknownKey(key))
}

// unknownKey says that key is no configuration key, and which one it
// most likely meant.
func unknownKey(key string) string {
	hint := ""
	if best := suggest.Closest(key, Keys()); best != "" {
		hint = fmt.Sprintf("; did you mean %s?", best)
	}
	return fmt.Sprintf("unknown key %q%s ('neardup config example' lists every key)", key, hint)
}

// Get returns one key's value in string form.
func (c *Config) Get(key string) (string, bool) {
	for _, f := range fields(c) {
		if f.key == key && f.v.IsValid() {
			return format(f.v), true
		}
	}
	return "", false
}

func setValue(v reflect.Value, s string) error {
	s = strings.TrimSpace(s)
	switch v.Interface().(type) {
	case time.Duration:
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("want a duration such as 30s, 24h")
		}
		v.SetInt(int64(d))
		return nil
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("want true or false")
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int64:
		n, err := parseInt(s)
		if err != nil {
			return fmt.Errorf("want an integer")
		}
		v.SetInt(n)
	case reflect.Uint64:
		n, err := strconv.ParseUint(s, 0, 64)
		if err != nil {
			return fmt.Errorf("want a non-negative integer")
		}
		v.SetUint(n)
	case reflect.Float64:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("want a number")
		}
		v.SetFloat(f)
	default:
		return fmt.Errorf("unsupported kind %s", v.Kind())
	}
	return nil
}

// parseInt accepts plain integers and byte sizes with KiB/MiB/GiB suffixes.
func parseInt(s string) (int64, error) {
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.m
			break
		}
	}
	n, err := strconv.ParseInt(s, 0, 64)
	return n * mult, err
}

func format(v reflect.Value) string {
	if d, ok := v.Interface().(time.Duration); ok {
		return d.String()
	}
	return fmt.Sprint(v.Interface())
}

// Overrides collects "key=value" settings from flags, in order.
type Overrides struct{ kv [][2]string }

// Add records one override.
func (o *Overrides) Add(key, value string) { o.kv = append(o.kv, [2]string{key, value}) }

// Append records other's overrides after o's, so they take precedence.
func (o *Overrides) Append(other *Overrides) {
	if other != nil {
		o.kv = append(o.kv, other.kv...)
	}
}

type overrideFlag struct {
	o   *Overrides
	key string
}

func (f overrideFlag) String() string     { return "" }
func (f overrideFlag) Set(s string) error { f.o.Add(f.key, s); return nil }

// Sections a command that runs the pipeline over files reads (scan,
// check, delete, compare, eval): RegisterFlags with these leaves out the
// service's keys (kafka.*, http.*, log.*), which such a command never
// uses; they are still accepted from the file and the environment.
var PipelineSections = []string{"profile", "sketch", "index", "verify", "pipeline"}

// RegisterFlags adds one flag per key (--sketch.k=…, --index.url=…) and a
// --config flag for the file to fs; the returned Overrides and file path
// are what Load takes. With sections, only the keys of those sections
// ("sketch", "index", …; "profile" for the profile key) get a flag. The
// flags' usage is the key's doc; DescribeDefaults adds the defaults, when
// help is printed (they take some milliseconds to work out).
func RegisterFlags(fs *flag.FlagSet, sections ...string) (*Overrides, *string) {
	o := &Overrides{}
	path := fs.String("config", "", "YAML configuration file (see 'neardup config example')")
	c := Default()
	for _, f := range fields(&c) {
		if !f.v.IsValid() {
			continue
		}
		section, _, _ := strings.Cut(f.key, ".")
		if len(sections) > 0 && !slices.Contains(sections, section) {
			continue
		}
		fs.Var(overrideFlag{o, f.key}, f.key, f.doc)
	}
	return o, path
}

// DescribeDefaults appends to the usage of each key's flag in fs its
// default as a run uses it, in each profile where they differ
// ("(default web 0.5, books 0.6, sentence 0)" for verify.jaccard): what
// config check prints for that profile. Call it before printing help.
func DescribeDefaults(fs *flag.FlagSet) {
	var values map[string]map[string]string
	for _, key := range Keys() {
		f := fs.Lookup(key)
		if f == nil || strings.HasSuffix(f.Usage, ")") && strings.Contains(f.Usage, " (default ") {
			continue
		}
		if values == nil {
			values = profileValues()
		}
		def := profileDefault(key, values)
		if def == "" {
			def = `""`
		}
		f.Usage += " (default " + def + ")"
	}
}

// EnvName returns the environment variable that overrides key.
func EnvName(key string) string {
	return "NEARDUP_" + strings.NewReplacer(".", "_", "-", "_").Replace(strings.ToUpper(key))
}

// OtherVariables are the NEARDUP_ environment variables that are not
// configuration keys: the evaluation data folder (neardup eval and the
// tests) and the switches of long tests and benchmarks. Any other NEARDUP_
// variable that names no key is an error, so a typo (NEARDUP_SKETCH_KK)
// does not pass silently.
var OtherVariables = []string{
	"NEARDUP_DATA",            // neardup eval, tests: the evaluation sets
	"NEARDUP_PERF",            // verify tests: assert timing ratios
	"NEARDUP_BENCH_DOCS",      // index benchmarks: documents per run
	"NEARDUP_BENCH_ROUNDS",    // index benchmarks: rounds
	"NEARDUP_MEM_DOCS",        // index memory benchmark: documents
	"NEARDUP_TEST_AS_COMMAND", // cmd/neardup tests: run the test binary as the command
	"NEARDUP_SCREENSHOT",      // cmd/neardup browser test: write a screenshot of compare --html
}

// envKeys returns the NEARDUP_ variables of environ by name; a NEARDUP_
// variable that is neither a key's (EnvName) nor one of OtherVariables is
// an error that names it and the closest key.
func envKeys(environ []string) (map[string]string, error) {
	known := map[string]bool{}
	for _, k := range Keys() {
		known[EnvName(k)] = true
	}
	for _, k := range OtherVariables {
		known[k] = true
	}
	env := map[string]string{}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(k, "NEARDUP_") {
			continue
		}
		if !known[k] {
			return nil, fmt.Errorf("%w: unknown environment variable $%s: no configuration key %q%s (unset it, or see 'neardup config example')",
				ErrInvalid, k, envKey(k), closest(envKey(k)))
		}
		env[k] = v
	}
	return env, nil
}

// envKey is the configuration key a NEARDUP_ variable would name, for
// messages: NEARDUP_SKETCH_KK → sketch.kk (underscores inside key names
// cannot be told from separators, so this is a guess).
func envKey(name string) string {
	s := strings.ToLower(strings.TrimPrefix(name, "NEARDUP_"))
	for _, k := range Keys() {
		if strings.ReplaceAll(k, ".", "_") == s {
			return k
		}
	}
	if sec, rest, ok := strings.Cut(s, "_"); ok {
		return sec + "." + rest
	}
	return s
}

// closest returns "; did you mean K ($NEARDUP_K)?" for the key nearest
// to key (suggest.Closest), or "".
func closest(key string) string {
	best := suggest.Closest(key, Keys())
	if best == "" {
		return ""
	}
	return fmt.Sprintf("; did you mean %s ($%s)?", best, EnvName(best))
}

// yamlParserProblems are the messages of go.yaml.in/yaml/v3's parser (not
// its scanner). For these the package prints the 0-based line of the
// construct being parsed (or no line at all for the first line), while
// scanner errors print 1-based lines; yamlLine makes both 1-based.
var yamlParserProblems = []string{
	"did not find expected ',' or ']'", "did not find expected ',' or '}'", "did not find expected '-' indicator",
	"did not find expected <document start>", "did not find expected <stream-start>", "did not find expected key",
	"did not find expected node content", "found duplicate %TAG directive", "found duplicate %YAML directive",
	"found incompatible YAML document", "found undefined tag handle",
}

// yamlLine rewrites a yaml parser error to name the 1-based line.
func yamlLine(err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		n, after, ok := strings.Cut(rest, ": ")
		if v, perr := strconv.Atoi(n); ok && perr == nil {
			line, msg = v, after
		}
	}
	if !slices.Contains(yamlParserProblems, msg) {
		return err
	}
	return fmt.Errorf("yaml: line %d: %s", line+1, msg)
}

// Load builds the configuration: defaults, the profile, the YAML file at
// path (if not empty), variables from environ (os.Environ() form), then
// overrides; and validates it.
func Load(path string, environ []string, overrides *Overrides) (Config, error) {
	var file []byte
	if path != "" {
		var err error
		if file, err = os.ReadFile(path); err != nil {
			return Config{}, fmt.Errorf("config: %w", err)
		}
	}
	env, err := envKeys(environ)
	if err != nil {
		return Config{}, err
	}
	if overrides == nil {
		overrides = &Overrides{}
	}
	// The profile decides the defaults, so find its final value first.
	var probe Config
	probe.Profile = "web"
	if err := applyFile(&probe, file, map[string]bool{"profile": true}); err != nil {
		return Config{}, err
	}
	if v, ok := env[EnvName("profile")]; ok {
		probe.Profile = v
	}
	for _, kv := range overrides.kv {
		if kv[0] == "profile" {
			probe.Profile = kv[1]
		}
	}
	c := Default()
	if err := applyProfile(&c, probe.Profile); err != nil {
		return Config{}, err
	}
	if err := applyFile(&c, file, nil); err != nil {
		return Config{}, err
	}
	for _, key := range Keys() {
		if v, ok := env[EnvName(key)]; ok {
			if err := c.Set(key, v); err != nil {
				return Config{}, fmt.Errorf("%w (from $%s)", err, EnvName(key))
			}
		}
	}
	for _, kv := range overrides.kv {
		if err := c.Set(kv[0], kv[1]); err != nil {
			return Config{}, fmt.Errorf("%w (from --%s)", err, kv[0])
		}
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// applyFile sets every scalar of the YAML document; only the keys in only
// when only is non-nil. Unknown keys are errors that name the key and line.
func applyFile(c *Config, file []byte, only map[string]bool) error {
	if len(bytes.TrimSpace(file)) == 0 {
		return nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(file, &doc); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, yamlLine(err))
	}
	if len(doc.Content) == 0 {
		return nil
	}
	var walk func(prefix string, n *yaml.Node) error
	walk = func(prefix string, n *yaml.Node) error {
		if n.Kind != yaml.MappingNode {
			return fmt.Errorf("%w: line %d: %q must be a mapping", ErrInvalid, n.Line, strings.TrimSuffix(prefix, "."))
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			key := prefix + k.Value
			if v.Kind == yaml.MappingNode {
				if err := walk(key+".", v); err != nil {
					return err
				}
				continue
			}
			if v.Kind != yaml.ScalarNode {
				return fmt.Errorf("%w: line %d: %s must be a single value", ErrInvalid, v.Line, key)
			}
			if only != nil && !only[key] {
				continue
			}
			if _, known := c.Get(key); !known {
				return fmt.Errorf("%w: line %d: %s", ErrInvalid, k.Line, unknownKey(key))
			}
			if err := c.Set(key, v.Value); err != nil {
				return fmt.Errorf("%w (line %d)", err, v.Line)
			}
		}
		return nil
	}
	return walk("", doc.Content[0])
}

// Example writes a fully commented configuration file with the defaults of
// profile: every value as the run uses it (c.derived), so a zero threshold
// shows as the profile's; a zero that derives a value from other keys
// (bands, rows, generation) is kept, with the value it stands for.
func Example(w io.Writer, profile string) error {
	c := Default()
	if err := applyProfile(&c, profile); err != nil {
		return err
	}
	th, err := profileThresholds(&c)
	if err != nil {
		return err
	}
	derived := c.derived()
	fmt.Fprintf(w, "# neardup configuration (defaults of the %s profile).\n", profile)
	fmt.Fprintln(w, "# Every key can also be set with an environment variable (sketch.k → NEARDUP_SKETCH_K)")
	fmt.Fprintln(w, "# or a flag (--sketch.k=128). Precedence: defaults < profile < this file < environment < flags.")
	for _, f := range fields(&c) {
		depth := strings.Count(f.key, ".")
		indent := strings.Repeat("  ", depth)
		name := f.key[strings.LastIndex(f.key, ".")+1:]
		fmt.Fprintf(w, "\n%s# %s\n", indent, f.doc)
		if !f.v.IsValid() {
			fmt.Fprintf(w, "%s%s:\n", indent, name)
			continue
		}
		val := display(f, derived)
		if f.secret {
			val = ""
		}
		_, threshold := th[f.key]
		switch d, ok := derived[f.key]; {
		case threshold && !ok && f.key == "verify.passage_shared":
			fmt.Fprintf(w, "%s# (0: the passage lane is off in the %s profile, sketch.passage_words 0 or character shingles)\n", indent, profile)
		case threshold && !ok:
			fmt.Fprintf(w, "%s# (0: the %s profile does not check this score; a value adds the check)\n", indent, profile)
		case ok && !threshold:
			// Derived from other keys: a file that keeps 0 follows them.
			val = format(f.v)
			fmt.Fprintf(w, "%s# (0 here stands for %s)\n", indent, d)
		}
		if f.v.Kind() == reflect.String {
			val = strconv.Quote(val)
		}
		fmt.Fprintf(w, "%s%s: %s\n", indent, name, val)
	}
	return nil
}

// profileThresholds returns the thresholds the verification cascade of
// c's profile uses, by key in string form; "" for a score it does not
// check. verify.passage_shared is the profile's floor when the passage
// lane is on.
func profileThresholds(c *Config) (map[string]string, error) {
	p, err := verify.ProfileByName(c.Profile)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	out := map[string]string{"verify.jaccard": "", "verify.containment": "", "verify.its": "", "verify.cs": "", "verify.edit": "", "verify.passage_shared": ""}
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, ch := range p.Checks {
		switch ch.Method {
		case verify.MethodJaccard:
			out["verify.jaccard"] = num(ch.Threshold)
		case verify.MethodContainment:
			out["verify.containment"] = num(ch.Threshold)
		case verify.MethodEdit:
			out["verify.edit"] = num(ch.Threshold)
		case verify.MethodLCS:
			if ch.Score == verify.ScoreCS {
				out["verify.cs"] = num(ch.Threshold)
			} else {
				out["verify.its"] = num(ch.Threshold)
			}
		}
	}
	if c.Sketch.PassageWords > 0 && c.Sketch.CharGram == 0 {
		out["verify.passage_shared"] = strconv.Itoa(verify.DefaultPassageShared)
	}
	return out, nil
}
