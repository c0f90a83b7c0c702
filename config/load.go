package config

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
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
	return fmt.Errorf("%w: unknown key %q", ErrInvalid, key)
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

// RegisterFlags adds one flag per key (--sketch.k=…, --index.url=…) and a
// --config flag for the file to fs; the returned Overrides and file path
// are what Load takes.
func RegisterFlags(fs *flag.FlagSet) (*Overrides, *string) {
	o := &Overrides{}
	path := fs.String("config", "", "YAML configuration file (see 'neardup config example')")
	c := Default()
	for _, f := range fields(&c) {
		if f.v.IsValid() {
			def := format(f.v)
			if f.secret {
				def = ""
			}
			fs.Var(overrideFlag{o, f.key}, f.key, f.doc+" (default "+def+")")
		}
	}
	return o, path
}

// EnvName returns the environment variable that overrides key.
func EnvName(key string) string {
	return "NEARDUP_" + strings.NewReplacer(".", "_", "-", "_").Replace(strings.ToUpper(key))
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
	env := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "NEARDUP_") {
			env[k] = v
		}
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
		return fmt.Errorf("%w: %w", ErrInvalid, err)
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
			if err := c.Set(key, v.Value); err != nil {
				return fmt.Errorf("%w (line %d)", err, v.Line)
			}
		}
		return nil
	}
	return walk("", doc.Content[0])
}

// Example writes a fully commented configuration file with the defaults of
// profile.
func Example(w io.Writer, profile string) error {
	c := Default()
	if err := applyProfile(&c, profile); err != nil {
		return err
	}
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
		val := format(f.v)
		if f.secret {
			val = ""
		}
		if f.v.Kind() == reflect.String {
			val = strconv.Quote(val)
		}
		fmt.Fprintf(w, "%s%s: %s\n", indent, name, val)
	}
	return nil
}
