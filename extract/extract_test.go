package extract

import (
	"errors"
	"strings"
	"testing"
)

func TestBytes(t *testing.T) {
	tests := []struct {
		name string
		in   string
		fm   Format
		want string
		err  error
	}{
		{"text", "hello world", Text, "hello world", nil},
		{"nul", "abc\x00def", Text, "", ErrBinary},
		{"control", strings.Repeat("\x01\x02x", 100), Text, "", ErrBinary},
		{"empty", "  \n\t", Text, "", ErrEmpty},
		{"html", "<html><head><title>T</title><script>var x=1</script></head><body><p>Hello <b>there</b></p><style>p{}</style></body></html>", HTML, "Hello there", nil},
		{"html no text", "<html><script>x()</script></html>", HTML, "", ErrEmpty},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Bytes([]byte(tt.in), tt.fm)
			if !errors.Is(err, tt.err) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if strings.Join(strings.Fields(string(got)), " ") != tt.want {
				t.Errorf("text = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestReadLimit(t *testing.T) {
	if _, err := Read(strings.NewReader(strings.Repeat("a", 101)), Text, 100); !errors.Is(err, ErrTooLarge) {
		t.Errorf("101 bytes over limit 100: %v", err)
	}
	if b, err := Read(strings.NewReader(strings.Repeat("a", 100)), Text, 100); err != nil || len(b) != 100 {
		t.Errorf("100 bytes at limit 100: %d, %v", len(b), err)
	}
}

func TestMainTextDropsBoilerplate(t *testing.T) {
	article := strings.Repeat("The council approved the repair of the harbour bridge after engineers found cracks in two girders. ", 12)
	page := `<html><body><nav><a href="/">Home</a> <a href="/news">News</a> <a href="/sport">Sport</a></nav>
<div class="share">Share on social media | Subscribe to our newsletter</div>
<article><h1>Bridge repairs</h1><p>` + article + `</p></article>
<footer>Copyright Example Media. All rights reserved. Privacy policy.</footer></body></html>`
	got := string(MainText([]byte(page), "https://example.org/news/bridge"))
	if !strings.Contains(got, "harbour bridge") {
		t.Fatalf("article text missing: %q", got)
	}
	for _, junk := range []string{"Subscribe to our newsletter", "All rights reserved"} {
		if strings.Contains(got, junk) {
			t.Errorf("boilerplate %q kept", junk)
		}
	}
	if got := string(MainText([]byte("<p>short</p>"), "")); !strings.Contains(got, "short") {
		t.Errorf("fallback lost text: %q", got)
	}
}

func FuzzHTMLText(f *testing.F) {
	f.Add([]byte("<p>a</p>"))
	f.Add([]byte("<script><p></script>x"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = HTMLText(b)
		_ = MainText(b, "")
	})
}
