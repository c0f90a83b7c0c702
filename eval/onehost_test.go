package eval

import (
	"context"
	"testing"

	"github.com/neardup/neardup/config"
	"github.com/neardup/neardup/internal/dataset"
)

// A large site's pages copy passages from each other inside their own
// text, and the site rule must not take those copies for the site's
// template: PAN13 and Clough with every document a page of one host give
// the figures they give without urls (500 of 500 pairs at plagdet ≥ 0.92;
// 17 of 19 cut answers linked and none of the 38 written without the
// source), the very same links.
func TestOneHost(t *testing.T) {
	cfg, err := config.Load("", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{setPAN13, setClough} {
		t.Run(name, func(t *testing.T) {
			dir := dataset.Dir(t, name)
			var res [2]*Result
			for i, host := range []string{"", "example.org"} {
				sets, _, err := Build(parentDir(dir), []string{name})
				if err != nil || len(sets) != 1 {
					t.Fatalf("build %s: %v", name, err)
				}
				if host != "" {
					sets[0].OnHost(host)
				}
				if res[i], err = Evaluate(context.Background(), cfg, sets[0], nil); err != nil {
					t.Fatal(err)
				}
			}
			plain, hosted := res[0], res[1]
			if a, b := plain.Links.All, hosted.Links.All; a != b {
				t.Errorf("links without urls %+v, on one host %+v", a, b)
			}
			switch name {
			case setPAN13:
				if l, p := hosted.Links.All, hosted.PAN.PAN.PlagDet; l.Found < 500 || p < 0.92 {
					t.Errorf("one host: %d of 500 pairs, plagdet %.3f; want 500 and ≥ 0.92", l.Found, p)
				}
			case setClough:
				if cut, non := hosted.Clough.Row("cut"), hosted.Clough.Row("non"); cut.Linked < 17 || non.Linked > 0 {
					t.Errorf("one host: cut %d of %d linked, non %d of %d; want ≥ 17 and 0", cut.Linked, cut.Answers, non.Linked, non.Answers)
				}
			}
		})
	}
}
