package eval

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/internal/dataset"
)

// A crawler that sends HTML pages without their url still sends the
// address each page gives itself (its canonical link): the chrome-html
// pages with their url moved into a <link rel="canonical"> give the
// events they give with urls, and without either they give others (the
// site rules then have no host to go by: docs/boilerplate.md).
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
			case "none":
				d.URL = ""
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
	_, c := run("none")
	t.Logf("with urls: %s; canonical links only: %s; neither: %s", a, b, c)
	if !reflect.DeepEqual(withURL.Events, canonical.Events) {
		t.Errorf("canonical links only: %s, want the events of the pages with urls (%s)", b, a)
	}
	if c == a {
		t.Errorf("without urls or canonical links: %s, the same as with urls: the test cannot tell", c)
	}
}
