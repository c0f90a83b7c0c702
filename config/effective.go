package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Profiles are the names of the profiles, in the order help lists them.
var Profiles = []string{"web", "books", "sentence"}

// derived returns the keys of c whose zero value stands for a value the
// run derives, with that value in string form: a zero threshold is the
// profile's (verify.jaccard 0 is 0.5 in the web profile; a score the
// profile does not check stays 0, and a value adds the check), zero LSH
// bands and rows are the ones chosen from k, the threshold and the recall
// weight, and a zero generation is half the retention. It is the one
// place these are resolved for display: config check, config example,
// flag help and serve's start-up log all show them through it.
func (c *Config) derived() map[string]string {
	out := map[string]string{}
	if th, err := profileThresholds(c); err == nil {
		for key, v := range th {
			if v == "" {
				continue
			}
			if cur, _ := c.Get(key); cur == "0" {
				out[key] = v
			}
		}
	}
	if c.Sketch.Bands == 0 && c.Sketch.Rows == 0 && c.Sketch.K > 0 && c.Sketch.Threshold > 0 && c.Sketch.Threshold < 1 &&
		c.Sketch.RecallWeight > 0 && c.Sketch.RecallWeight < 1 {
		b, r := c.BandsRows()
		out["sketch.bands"], out["sketch.rows"] = strconv.Itoa(b), strconv.Itoa(r)
	}
	if c.Index.Generation == 0 {
		g := c.Index.Retention / 2
		if g <= 0 {
			g = 24 * time.Hour
		}
		out["index.generation"] = g.String()
	}
	return out
}

// display returns f's value for printing with derived (c.derived())
// resolved; secrets are "" (unset) or "[redacted]".
func display(f field, derived map[string]string) string {
	v := format(f.v)
	if d, ok := derived[f.key]; ok {
		v = d
	}
	if f.secret {
		if v != "" {
			return "[redacted]"
		}
		return ""
	}
	return v
}

// profileDefault describes a key's default for flag help: its effective
// value in every profile, "V" when they agree, "web V, books W, sentence
// X" when they do not.
func profileDefault(key string, values map[string]map[string]string) string {
	first := values[Profiles[0]][key]
	same := true
	for _, p := range Profiles[1:] {
		same = same && values[p][key] == first
	}
	if same {
		return first
	}
	var parts []string
	for _, p := range Profiles {
		parts = append(parts, fmt.Sprintf("%s %s", p, values[p][key]))
	}
	return strings.Join(parts, ", ")
}

// profileValues returns every key's displayed default value, by profile.
func profileValues() map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, p := range Profiles {
		c := Default()
		if err := applyProfile(&c, p); err != nil {
			panic(err) // the built-in profiles exist
		}
		d := c.derived()
		out[p] = map[string]string{}
		for _, f := range fields(&c) {
			if f.v.IsValid() {
				out[p][f.key] = display(f, d)
			}
		}
	}
	return out
}
