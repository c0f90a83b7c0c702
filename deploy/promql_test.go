package deploy

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// This file finds what a PromQL expression reads (its vector selectors
// and the labels it groups or matches on) without Prometheus's Go
// packages, whose compile time dominated a cold make test. It reads the
// tokens only: whether the expression is valid PromQL is promtool check
// rules' job (TestAlertRules for the rules, TestDashboardModel for the
// dashboard's queries), and every expression it is given has passed it.

// matcher is one label matcher of a vector selector.
type matcher struct {
	name, op, value string // op: =, !=, =~ or !~
}

// selected is what a query reads: each selected series name with the
// matchers on it, and the labels the query groups or matches by.
type selected struct {
	names    map[string][]matcher
	grouping []string
}

// promqlKeywords are the words of PromQL that are never a series name.
var promqlKeywords = []string{
	// binary operators and modifiers
	"and", "or", "unless", "atan2", "bool", "offset",
	"by", "without", "on", "ignoring", "group_left", "group_right",
	// aggregation operators, which may be followed by by (...) rather
	// than by their argument list
	"sum", "min", "max", "avg", "group", "stddev", "stdvar", "count",
	"count_values", "bottomk", "topk", "quantile", "limitk", "limit_ratio",
	// number literals
	"inf", "nan",
}

type promqlToken struct {
	kind byte // 'i' identifier, 'n' number or duration, 's' string, 'p' punctuation
	text string
}

// lexPromQL splits expr into tokens. Range and subquery brackets are
// dropped with their content, which is durations only.
func lexPromQL(expr string) ([]promqlToken, error) {
	var toks []promqlToken
	isIdent := func(c byte, first bool) bool {
		return c == '_' || c == ':' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || !first && '0' <= c && c <= '9'
	}
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '#':
			for i < len(expr) && expr[i] != '\n' {
				i++
			}
		case c == '[':
			end := strings.IndexByte(expr[i:], ']')
			if end < 0 {
				return nil, fmt.Errorf("unclosed [ at %d", i)
			}
			i += end + 1
		case c == '"' || c == '\'' || c == '`':
			j := i + 1
			for j < len(expr) && expr[j] != c {
				if expr[j] == '\\' && c != '`' {
					j++
				}
				j++
			}
			if j >= len(expr) {
				return nil, fmt.Errorf("unterminated string at %d", i)
			}
			s, err := unquotePromQL(expr[i : j+1])
			if err != nil {
				return nil, fmt.Errorf("string at %d: %v", i, err)
			}
			toks = append(toks, promqlToken{'s', s})
			i = j + 1
		case '0' <= c && c <= '9' || c == '.':
			j := i + 1
			for j < len(expr) && (isIdent(expr[j], false) && expr[j] != ':' || expr[j] == '.' ||
				(expr[j] == '+' || expr[j] == '-') && (expr[j-1] == 'e' || expr[j-1] == 'E')) {
				j++
			}
			toks = append(toks, promqlToken{'n', expr[i:j]})
			i = j
		case isIdent(c, true):
			j := i + 1
			for j < len(expr) && isIdent(expr[j], false) {
				j++
			}
			toks = append(toks, promqlToken{'i', expr[i:j]})
			i = j
		default:
			n := 1
			if i+1 < len(expr) && slices.Contains([]string{"!=", "=~", "!~", "==", "<=", ">="}, expr[i:i+2]) {
				n = 2
			} else if !strings.ContainsRune("(){},=<>+-*/%^@", rune(c)) {
				return nil, fmt.Errorf("unexpected %q at %d", c, i)
			}
			toks = append(toks, promqlToken{'p', expr[i : i+n]})
			i += n
		}
	}
	return toks, nil
}

// unquotePromQL reads a PromQL string literal: Go's escapes in double or
// single quotes, or raw in backquotes.
func unquotePromQL(lit string) (string, error) {
	if lit[0] == '\'' {
		body := strings.ReplaceAll(lit[1:len(lit)-1], `\'`, `'`)
		lit = `"` + strings.ReplaceAll(body, `"`, `\"`) + `"`
	}
	return strconv.Unquote(lit)
}

// promqlReads returns the series expr selects, with their matchers, and
// the label names in its by, without, on, ignoring, group_left and
// group_right lists.
func promqlReads(expr string) (selected, error) {
	toks, err := lexPromQL(expr)
	if err != nil {
		return selected{}, err
	}
	s := selected{names: map[string][]matcher{}}
	is := func(i int, kind byte, text string) bool {
		return i < len(toks) && toks[i].kind == kind && toks[i].text == text
	}
	// labelList reads "( name, ... )" at i and returns the index after it.
	labelList := func(i int) ([]string, int, error) {
		if !is(i, 'p', "(") {
			return nil, i, fmt.Errorf("%s not followed by (", toks[i-1].text)
		}
		var ls []string
		for i++; !is(i, 'p', ")"); i++ {
			if i >= len(toks) || toks[i].kind != 'i' && toks[i].kind != 's' {
				return nil, i, fmt.Errorf("label list after %s: want a label name", toks[i-1].text)
			}
			ls = append(ls, toks[i].text)
			if i+1 < len(toks) && is(i+1, 'p', ",") {
				i++
			}
		}
		return ls, i + 1, nil
	}
	// selector reads "{ matcher, ... }" at i for the series name (empty
	// when given by a __name__ matcher) and returns the index after it.
	selector := func(name string, i int) (int, error) {
		var ms []matcher
		if is(i, 'p', "{") {
			for i++; !is(i, 'p', "}"); i++ {
				if i >= len(toks) || toks[i].kind != 'i' && toks[i].kind != 's' {
					return i, fmt.Errorf("selector of %q: want a label name", name)
				}
				if toks[i].kind == 's' && (is(i+1, 'p', ",") || is(i+1, 'p', "}")) {
					name = toks[i].text // {"series.name", ...}
				} else {
					if i+2 >= len(toks) || toks[i+1].kind != 'p' || !slices.Contains([]string{"=", "!=", "=~", "!~"}, toks[i+1].text) || toks[i+2].kind != 's' {
						return i, fmt.Errorf("selector of %q: matcher on %s: want an operator and a string", name, toks[i].text)
					}
					m := matcher{toks[i].text, toks[i+1].text, toks[i+2].text}
					i += 2
					if m.name != "__name__" {
						ms = append(ms, m)
					} else if m.op != "=" {
						return i, fmt.Errorf("a regular expression on the series name cannot be checked: %s%s%q", m.name, m.op, m.value)
					} else {
						name = m.value
					}
				}
				if is(i+1, 'p', ",") {
					i++
				}
			}
			i++
		}
		if name == "" {
			return i, fmt.Errorf("a selector without a series name")
		}
		s.names[name] = append(s.names[name], ms...)
		return i, nil
	}
	for i := 0; i < len(toks); {
		t := toks[i]
		var err error
		switch {
		case t.kind == 'i' && slices.Contains([]string{"by", "without", "on", "ignoring", "group_left", "group_right"}, t.text):
			if !is(i+1, 'p', "(") && (t.text == "group_left" || t.text == "group_right") {
				i++ // no extra labels
				continue
			}
			ls, next, err := labelList(i + 1)
			if err != nil {
				return selected{}, err
			}
			s.grouping = append(s.grouping, ls...)
			i = next
		case t.kind == 'i' && (slices.Contains(promqlKeywords, strings.ToLower(t.text)) || is(i+1, 'p', "(")):
			i++ // an operator, a function or a number
		case t.kind == 'i':
			if i, err = selector(t.text, i+1); err != nil {
				return selected{}, err
			}
		case t.kind == 'p' && t.text == "{":
			if i, err = selector("", i); err != nil {
				return selected{}, err
			}
		default:
			i++
		}
	}
	if len(s.names) == 0 {
		return selected{}, fmt.Errorf("reads no series")
	}
	return s, nil
}

// promqlReads on the forms the kit's queries use, and a few they may.
func TestPromQLReads(t *testing.T) {
	tests := []struct {
		name     string
		expr     string
		names    map[string][]matcher
		grouping []string
		err      string
	}{
		{name: "bare", expr: "neardup_ready", names: map[string][]matcher{"neardup_ready": nil}},
		{name: "colon in name", expr: "job:neardup_documents:rate5m > 0", names: map[string][]matcher{"job:neardup_documents:rate5m": nil}},
		{
			name: "matchers and range",
			expr: `sum by (kind) (rate(neardup_documents_total{job=~"a|b", instance!="x:1", kind='uni\'que'}[$__rate_interval]))`,
			names: map[string][]matcher{"neardup_documents_total": {
				{"job", "=~", "a|b"}, {"instance", "!=", "x:1"}, {"kind", "=", "uni'que"},
			}},
			grouping: []string{"kind"},
		},
		{
			name:     "subquery, offset, grouping after the argument",
			expr:     "deriv(sum(max by (topic, partition) (neardup_consumer_lag_records offset 5m)) by (topic)[15m:1m]) > 0",
			names:    map[string][]matcher{"neardup_consumer_lag_records": nil},
			grouping: []string{"topic", "partition", "topic"},
		},
		{
			name: "vector matching and set operators",
			expr: "a > 0 unless on () sum(rate(b[5m])) > 0 and ignoring(le) c * on (instance) group_left (version) d",
			names: map[string][]matcher{
				"a": nil, "b": nil, "c": nil, "d": nil,
			},
			grouping: []string{"le", "instance", "version"},
		},
		{
			name:  "numbers, bool, functions, comments",
			expr:  "histogram_quantile(0.99, x_bucket) * 1e+3 > bool Inf # x_sum\n + absent(neardup_build_info) - NaN + 0x1F + time()",
			names: map[string][]matcher{"x_bucket": nil, "neardup_build_info": nil},
		},
		{
			name:  "aggregation parameters",
			expr:  `topk(5, count_values("version", neardup_build_info)) or quantile(0.9, y)`,
			names: map[string][]matcher{"neardup_build_info": nil, "y": nil},
		},
		{
			name:  "name as matcher",
			expr:  `{__name__="neardup_index_up", instance="a"} == 0`,
			names: map[string][]matcher{"neardup_index_up": {{"instance", "=", "a"}}},
		},
		{
			name:  "quoted name",
			expr:  `{"neardup.up", instance="a"}`,
			names: map[string][]matcher{"neardup.up": {{"instance", "=", "a"}}},
		},
		{name: "name regexp", expr: `{__name__=~"neardup_.*"}`, err: "regular expression on the series name"},
		{name: "nameless", expr: `{job="a"}`, err: "without a series name"},
		{name: "no series", expr: "vector(1) + time()", err: "reads no series"},
		{name: "unclosed range", expr: "rate(x[5m)", err: "unclosed ["},
		{name: "bad matcher", expr: `x{job}`, err: "want an operator and a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := promqlReads(tt.expr)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !equalReads(got.names, tt.names) || !slices.Equal(got.grouping, tt.grouping) {
				t.Errorf("got %v grouping %v\nwant %v grouping %v", got.names, got.grouping, tt.names, tt.grouping)
			}
		})
	}
}

func equalReads(a, b map[string][]matcher) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || !slices.Equal(v, w) {
			return false
		}
	}
	return true
}
