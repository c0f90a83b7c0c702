package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/neardup/neardup/extract"
	"github.com/neardup/neardup/internal/browsertest"
	"github.com/neardup/neardup/internal/dataset"
)

// compare --html on a PAN 2013 pair (a suspicious document with five
// passages copied verbatim from its source), opened in headless
// Chromium: the DOM after the page's script ran shows the verdict compare
// prints, both texts as compare read them, every highlighted passage
// equal in both columns to the text at its offsets, and a highlight over
// each passage the corpus says was copied.
func TestCompareHTMLInChromium(t *testing.T) {
	skipShort(t)
	dir := dataset.Dir(t, "pan13-text-alignment-no-obfuscation")
	src := filepath.Join(dir, "src", "source-document01079.txt")
	susp := filepath.Join(dir, "susp", "suspicious-document01027.txt")
	out := t.TempDir()
	page := filepath.Join(out, "pair.html")
	code, stdout, errOut := neardup(t, "compare", "--json", "--html", page, src, susp)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res comparison
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	s, err := browsertest.ReadShown(bytes.NewReader(browsertest.DumpDOM(t, page)))
	if err != nil {
		t.Fatal(err)
	}
	if s.Verdict != res.Verdict || res.Verdict != "partial" {
		t.Errorf("page verdict %q, compare %q, want partial", s.Verdict, res.Verdict)
	}
	if s.Method == "" || s.Method == "no check" {
		t.Errorf("page names no deciding method")
	}
	if len(s.Passages) < 5 || s.Ready != strconv.Itoa(len(s.Passages)) {
		t.Fatalf("%d passages, data-ready %q", len(s.Passages), s.Ready)
	}
	var texts [2]string
	for i, p := range []string{src, susp} {
		b, err := extract.ReadFile(p, 16<<20)
		if err != nil {
			t.Fatal(err)
		}
		texts[i] = string(b)
	}
	for _, e := range s.Check(texts[0], texts[1], s.Passages) {
		t.Error(e)
	}
	// Each copied passage of the ground truth lies mostly under a
	// highlight in the suspicious document.
	truth := panTruth(t, filepath.Join(dir, "truth", "suspicious-document01027-source-document01079.xml"))
	for _, f := range truth {
		covered := 0
		for _, p := range s.Passages {
			covered += max(0, min(f.ThisOffset+f.ThisLength, p.BOffset+p.BLength)-max(f.ThisOffset, p.BOffset))
		}
		if covered*10 < f.ThisLength*9 {
			t.Errorf("truth passage at %d+%d: %d chars highlighted", f.ThisOffset, f.ThisLength, covered)
		}
	}
	img := browsertest.Screenshot(t, page, filepath.Join(out, "pair.png"), 1440, 900)
	if n := browsertest.ColouredPixels(img); n < 5000 {
		t.Errorf("%d coloured pixels in the 1440×900 screenshot, want highlights", n)
	}
	if os.Getenv("NEARDUP_SCREENSHOT") != "" {
		// Regenerates docs/compare-html.png (see README).
		browsertest.Screenshot(t, page, os.Getenv("NEARDUP_SCREENSHOT"), 1440, 900)
	}
}

type panFeature struct {
	ThisOffset int `xml:"this_offset,attr"`
	ThisLength int `xml:"this_length,attr"`
}

func panTruth(t *testing.T, path string) []panFeature {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Features []panFeature `xml:"feature"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Features
}
