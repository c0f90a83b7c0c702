package eval

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/internal/dataset"
)

// A crawler that sends HTML pages without their url still sends the
// address each page gives itself (its canonical link) and its site's name
// (its title's end, "Article | Site"): the chrome-html pages with their
// url moved into a <link rel="canonical">, or with their url dropped,
// give the events they give with urls, and with neither (the site's name
// cut from the title too) they give others (the site rules then have no
// host to go by: docs/boilerplate.md).
func TestCanonicalHost(t *testing.T) {
	dir := filepath.Dir(dataset.Dir(t, SetGutenberg))
	cfg, err := config.Load("", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	run := func(how string) (*Result, string) {
		sets, _, err := Build(dir, []string{setChromeHTML})
		if err != nil {
			t.Fatal(err)
		}
		s := sets[0]
		for i := range s.Docs {
			d := &s.Docs[i]
			switch how {
			case "canonical":
				link := fmt.Sprintf("<head>\n<link rel=\"canonical\" href=\"%s\">", html.EscapeString(d.URL))
				if !bytes.Contains(d.Text, []byte("<head>")) {
					t.Fatalf("%s: no <head>", d.ID)
				}
				d.Text = bytes.Replace(d.Text, []byte("<head>"), []byte(link), 1)
				d.URL = ""
			case "title":
				d.URL = ""
			case "none":
				// Neither an address nor a site name: the title without
				// its " — Site" end.
				d.URL = ""
				t0, t1 := bytes.Index(d.Text, []byte("<title>")), bytes.Index(d.Text, []byte("</title>"))
				if t0 < 0 || t1 < t0 {
					t.Fatalf("%s: no <title>", d.ID)
				}
				title := d.Text[t0+len("<title>") : t1]
				for _, sep := range []string{" | ", " — ", " – ", " · ", " - "} {
					if k := bytes.LastIndex(title, []byte(sep)); k > 0 {
						title = title[:k]
					}
				}
				d.Text = slices.Concat(d.Text[:t0+len("<title>")], title, d.Text[t1:])
			}
		}
		r, err := Evaluate(context.Background(), cfg, s, nil)
		if err != nil {
			t.Fatal(err)
		}
		l := r.Links.All
		return r, fmt.Sprintf("precision %s recall %s flagged %d of %d", num(l.Precision()), num(l.Recall(r.Links.Expected)), r.Sites.Flagged, r.Sites.Unique)
	}
	withURL, a := run("url")
	canonical, b := run("canonical")
	titled, d := run("title")
	_, c := run("none")
	t.Logf("with urls: %s; canonical links only: %s; the site's name in the title only: %s; neither: %s", a, b, d, c)
	if !reflect.DeepEqual(withURL.Events, canonical.Events) {
		t.Errorf("canonical links only: %s, want the events of the pages with urls (%s)", b, a)
	}
	if !reflect.DeepEqual(withURL.Events, titled.Events) {
		t.Errorf("the site's name in the title only: %s, want the events of the pages with urls (%s)", d, a)

	}
	if c == a {
		t.Errorf("without urls or canonical links: %s, the same as with urls: the test cannot tell", c)
	}
}
