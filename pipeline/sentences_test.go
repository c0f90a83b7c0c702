package pipeline

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/index/redistest"
	"github.com/neardup/neardup/internal/dataset"
	"github.com/neardup/neardup/internal/schematest"
	"github.com/neardup/neardup/internal/synth"
)

// sentenceTestConfig is the web profile in sentence mode, unique events on.
func sentenceTestConfig(t testing.TB) Config {
	t.Helper()
	return testConfig(t, "web", "pipeline.granularity", "sentence")
}

func clusterIndex(t testing.TB, addrs []string) func(*Pipeline) index.Store {
	return func(p *Pipeline) index.Store {
		ix, err := index.Open(context.Background(), "redis+cluster://"+strings.Join(addrs, ","), index.Options{
			Params: p.IndexParams(), Namespace: fmt.Sprintf("s%d", time.Now().UnixNano()),
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		return ix
	}
}

// The hand-made cases of each edit class: a sentence of the original and
// its revision.
var editCases = []struct {
	orig, rev, edit string
}{
	{"The observatory on the hill was founded in 1879 by the astronomer Anna Weiß and her brother.",
		"The observatory on the hill was founded in 1897 by the astronomer Anna Weiß and her brother.", "number_or_date_changed"},
	{"On 12 March the staff opened the great dome to visitors for the first time in many years.",
		"On 14 April the staff opened the great dome to visitors for the first time in many years.", "number_or_date_changed"},
	{"Its largest telescope has a mirror of 2.5 metres and weighs about 14 tonnes in all.",
		"Its largest telescope has a mirror of 3.5 metres and weighs about 14 tonnes in all.", "number_or_date_changed"},
	{"The library keeps the original notebooks, letters and photographs of the two founders.",
		"The Library keeps the original notebooks, letters, and photographs of the two founders!", "copy_edit"},
	{"Every summer the society holds a public lecture about the long history of the stars.",
		"Every summer the society holds a public lecture about the long history of the stars.", "identical"},
	{"Visitors often remark that the view from the terrace is the finest in the whole region.",
		"Visitors often say that the view from the terrace is the loveliest in the whole region.", "reworded"},
}

// TestSentenceEditClasses streams an original, an unrelated document and a
// revision of the original (each sentence edited in one way, between new
// sentences), in sentence mode, over the memory index, Redis and a 3-master
// Redis Cluster: the revision's event lists each edited sentence against
// its original with the right places and edit class, the unrelated
// document matches nothing, and the three indexes give identical events.
func TestSentenceEditClasses(t *testing.T) {
	var orig, rev strings.Builder
	orig.WriteString("Café notes, kept by the staff since the first winter. ")
	rev.WriteString("A visitor's guide to the town begins with its markets, its bridges and its weather. ")
	type place struct{ off, length, moff int }
	want := map[int]string{}
	var places []place
	for _, c := range editCases {
		moff := utf8.RuneCountInString(orig.String())
		orig.WriteString(c.orig + " ")
		rev.WriteString("Nothing in this sentence was ever written in the original text at all. ")
		off := utf8.RuneCountInString(rev.String())
		rev.WriteString(c.rev + " ")
		places = append(places, place{off, utf8.RuneCountInString(c.rev), moff})
		want[off] = c.edit
	}
	rev.WriteString("The guide ends with a list of places to eat and the hours of the museum.")
	items := []Item{
		{Doc: Document{ID: "orig", Text: []byte(orig.String())}},
		{Doc: Document{ID: "other", Text: []byte("An unrelated page about gardening in dry climates, with advice on watering roses in the early morning.")}},
		{Doc: Document{ID: "rev", Text: []byte(rev.String())}},
	}
	cfg := sentenceTestConfig(t)
	schema := schematest.Load(t, "event.schema.json")
	mem := run(t, cfg, func(p *Pipeline) index.Store { return memoryIndex(t, p) }, items)
	if n := len(mem[1].Event.Sentences); n != 0 {
		t.Errorf("the unrelated document matched %d sentences", n)
	}
	ev := mem[2].Event
	if ev == nil {
		t.Fatal("no event for the revision")
	}
	b, _ := json.Marshal(ev)
	schema.Validate(t, b)
	if ev.Params.Granularity != "sentence" {
		t.Errorf("params.granularity %q", ev.Params.Granularity)
	}
	got := map[int]SentenceMatch{}
	for _, s := range ev.Sentences {
		if s.MatchID != "orig" {
			t.Errorf("sentence at %d matched %s", s.Offset, s.MatchID)
		}
		got[s.Offset] = s
	}
	for i, p := range places {
		s, ok := got[p.off]
		switch {
		case !ok:
			t.Errorf("case %d (%s): sentence at %d not matched; matches %+v", i, editCases[i].edit, p.off, ev.Sentences)
		case s.Length != p.length || s.MatchOffset != p.moff || s.MatchLength != utf8.RuneCountInString(editCases[i].orig):
			t.Errorf("case %d: match %+v, want offset %d length %d match_offset %d", i, s, p.off, p.length, p.moff)
		case s.Edit != want[p.off]:
			t.Errorf("case %d: edit %q, want %q (similarity %v)", i, s.Edit, want[p.off], s.Similarity)
		}
	}
	if len(ev.Sentences) != len(places) {
		t.Errorf("%d sentence matches, want %d: %+v", len(ev.Sentences), len(places), ev.Sentences)
	}

	red := run(t, cfg, redisIndex(t, redistest.StartServer(t)), items)
	clu := run(t, cfg, clusterIndex(t, redistest.StartCluster(t)), items)
	for i := range mem {
		if a, b, c := comparable(mem[i]), comparable(red[i]), comparable(clu[i]); a != b || a != c {
			t.Errorf("document %d: indexes disagree:\n memory  %s\n redis   %s\n cluster %s", i, a, b, c)
		}
	}
}

// TestSentenceModeClough streams the Clough & Stevenson corpus in a
// crawler's order (the five Wikipedia sources, then the 95 answers) in
// sentence mode: answers that cut and pasted from their task's source
// match its sentences, mostly identical or copy-edited; lightly revised
// ones match fewer, reworded; heavily revised and independently written
// ones match almost none.
func TestSentenceModeClough(t *testing.T) {
	dir := dataset.Dir(t, "clough-plagiarised-short-answers")
	f, err := os.Open(filepath.Join(dir, "file_information.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	var sources, answers []cloughAnswer
	for _, r := range rows[1:] {
		a := cloughAnswer{r[0], r[1], r[2]}
		if a.category == "orig" {
			sources = append(sources, a)
		} else {
			answers = append(answers, a)
		}
	}
	// As files, and as the articles of one encyclopedia (every answer a
	// page of one host): the host's template rule must not take the
	// sentences articles copy from each other for its template.
	var tallies []string
	for _, host := range []string{"", "en.wikipedia.org"} {
		t.Run("host="+host, func(t *testing.T) {
			var items []Item
			for _, a := range append(sources, answers...) {
				b, err := os.ReadFile(filepath.Join(dir, "texts", a.file))
				if err != nil {
					t.Fatal(err)
				}
				d := Document{ID: a.file, Text: b}
				if host != "" {
					d.URL = "https://" + host + "/wiki/" + a.file
				}
				items = append(items, Item{Doc: d})
			}
			tallies = append(tallies, checkSentenceModeClough(t, items, sources, answers))
		})
	}
	if len(tallies) == 2 && tallies[0] != tallies[1] {
		t.Errorf("sentence matches as files:\n%s\nas pages of one host:\n%s", tallies[0], tallies[1])
	}
}

type cloughAnswer struct{ file, task, category string }

// checkSentenceModeClough streams items and checks the answers' sentence
// matches; it returns them tallied by category.
func checkSentenceModeClough(t *testing.T, items []Item, sources, answers []cloughAnswer) string {
	outs := run(t, sentenceTestConfig(t), func(p *Pipeline) index.Store { return memoryIndex(t, p) }, items)
	type tally struct {
		answers, linked, sentences, other int
		edits                             map[string]int
	}
	by := map[string]*tally{}
	for i, a := range answers {
		ev := outs[len(sources)+i].Event
		tl := by[a.category]
		if tl == nil {
			tl = &tally{edits: map[string]int{}}
			by[a.category] = tl
		}
		tl.answers++
		n := 0
		for _, s := range ev.Sentences {
			switch {
			case s.MatchID == "orig_task"+a.task+".txt":
				n++
				tl.edits[s.Edit]++
			case strings.HasPrefix(s.MatchID, "orig_"):
				tl.other++
			}
		}
		tl.sentences += n
		if n > 0 {
			tl.linked++
		}
	}
	var summary strings.Builder
	for _, c := range []string{"cut", "light", "heavy", "non"} {
		tl := by[c]
		fmt.Fprintf(&summary, "%s %d %d %v %d\n", c, tl.linked, tl.sentences, tl.edits, tl.other)
		t.Logf("%-5s %2d answers, %2d with a sentence matched to their source (%d sentences: %v), %d matched to another source", c, tl.answers, tl.linked, tl.sentences, tl.edits, tl.other)
		if tl.other > 0 {
			t.Errorf("%s: %d sentences matched to another task's source", c, tl.other)
		}
	}
	cut, light, heavy, non := by["cut"], by["light"], by["heavy"], by["non"]
	// Two cut answers copy a Wikipedia text other than their task's
	// source (docs/design.md), so 17 of 19 is the most there is.
	if cut.linked < 15 {
		t.Errorf("%d of %d cut answers matched to their source, want at least 15", cut.linked, cut.answers)
	}
	if kept := cut.edits["identical"] + cut.edits["copy_edit"]; 2*kept < cut.sentences {
		t.Errorf("cut answers: %d of %d matched sentences identical or copy-edited, want most", kept, cut.sentences)
	}
	if light.linked < light.answers/2 {
		t.Errorf("%d of %d light answers matched to their source, want at least half", light.linked, light.answers)
	}
	if !(cut.sentences > light.sentences && light.sentences > heavy.sentences) {
		t.Errorf("matched sentences cut %d, light %d, heavy %d: want fewer as the revision gets heavier", cut.sentences, light.sentences, heavy.sentences)
	}
	if non.sentences > 0 {
		t.Errorf("%d sentences of answers written without the source matched it", non.sentences)
	}
	return summary.String()
}

// TestSentenceBoilerplate streams pages that share a legal footer, each
// with sentences of its own and one sentence copied from the page before:
// once the footer's buckets are full (index.common_docs 4 here: from the
// fifth page on), the footer is boilerplate, counted in
// sentences_boilerplate and never matched again, while the copied
// sentences still are; memory, Redis and cluster agree.
func TestSentenceBoilerplate(t *testing.T) {
	const footer = "All rights reserved: no part of this page may be copied without the written permission of the publisher."
	var items []Item
	g := synth.NewGenerator(7, 5000)
	sentences := make([][2]string, 12)
	for i := range sentences {
		for k := range 2 {
			// 14 words of a Zipf vocabulary: about 90 characters.
			sentences[i][k] = strings.ToUpper(g.Words(1)[0]) + " " + strings.Join(g.Words(13), " ") + "."
		}
	}
	own := func(i, k int) string { return sentences[i][k] }
	for i := range 12 {
		text := own(i, 0) + " " + own(i, 1) + " "
		if i > 0 {
			text += own(i-1, 1) + " "
		}
		items = append(items, Item{Doc: Document{ID: fmt.Sprint("page", i), Text: []byte(text + footer)}})
	}
	cfg := sentenceTestConfig(t)
	opts := index.Options{CommonDocs: 4}
	open := func(url string) func(*Pipeline) index.Store {
		return func(p *Pipeline) index.Store {
			o := opts
			o.Params, o.Namespace = p.IndexParams(), fmt.Sprintf("b%d", time.Now().UnixNano())
			ix, err := index.Open(context.Background(), url, o)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ix.Close() })
			return ix
		}
	}
	mem := run(t, cfg, open("memory"), items)
	footerMatches := 0
	for i, o := range mem[1:] {
		ev := o.Event
		copied, foot := 0, 0
		for _, s := range ev.Sentences {
			if s.Length == utf8.RuneCountInString(footer) {
				foot++
			} else if s.MatchID == fmt.Sprint("page", i) {
				copied++
			}
		}
		footerMatches += foot
		if copied != 1 {
			t.Errorf("page%d: the sentence copied from page%d matched %d times: %+v", i+1, i, copied, ev.Sentences)
		}
		if hot := i+1 >= opts.CommonDocs; hot != (ev.SentencesBoilerplate == 1) || hot && foot > 0 {
			t.Errorf("page%d: %d footer matches, sentences_boilerplate %d", i+1, foot, ev.SentencesBoilerplate)
		}
	}
	if footerMatches == 0 || footerMatches > opts.CommonDocs*5 {
		t.Errorf("the footer matched %d times in all", footerMatches)
	}
	red := run(t, cfg, open("redis://"+redistest.StartServer(t)), items)
	clu := run(t, cfg, open("redis+cluster://"+strings.Join(redistest.StartCluster(t), ",")), items)
	for i := range mem {
		if a, b, c := comparable(mem[i]), comparable(red[i]), comparable(clu[i]); a != b || a != c {
			t.Errorf("document %d: indexes disagree:\n memory  %s\n redis   %s\n cluster %s", i, a, b, c)
		}
	}
}
