package extract

import (
	"strings"
	"testing"
)

func TestPageURL(t *testing.T) {
	for _, c := range []struct {
		name, page, want string
	}{
		{"canonical", `<html><head><title>x</title><link rel="canonical" href="https://news.example/a/1"></head><body><p>text</p></body></html>`, "https://news.example/a/1"},
		{"canonical among rel tokens, upper case", `<head><LINK REL="Alternate CANONICAL" HREF="http://b.example/x"/></head>`, "http://b.example/x"},
		{"og:url", `<head><meta property="og:url" content="https://c.example/p"></head><body></body>`, "https://c.example/p"},
		{"canonical before og:url wins", `<head><meta property="og:url" content="https://og.example/p"><link rel="canonical" href="https://canon.example/p"></head>`, "https://canon.example/p"},
		{"relative canonical names no site", `<head><link rel="canonical" href="/a/1"></head>`, ""},
		{"relative canonical, og:url absolute", `<head><link rel="canonical" href="/a/1"><meta property="og:url" content="https://d.example/a/1"></head>`, "https://d.example/a/1"},
		{"not http", `<head><link rel="canonical" href="ftp://e.example/a"></head>`, ""},
		{"in the body it is the article's, not the page's", `<head></head><body><link rel="canonical" href="https://f.example/a"></body>`, ""},
		{"stylesheet link", `<head><link rel="stylesheet" href="https://g.example/s.css"></head>`, ""},
		{"none", `<p>plain</p>`, ""},
		{"empty", ``, ""},
		{"broken markup", `<head><link rel="canonical" href="https://h.example/a`, ""},
		{"head past the bound", `<head>` + strings.Repeat("<meta name=x content=y>", maxHeadBytes/20) + `<link rel="canonical" href="https://i.example/a"></head>`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := PageURL([]byte(c.page)); got != c.want {
				t.Errorf("PageURL = %q, want %q", got, c.want)
			}
		})
	}
}

func FuzzPageURL(f *testing.F) {
	f.Add([]byte(`<head><link rel="canonical" href="https://a.example/1"></head>`))
	f.Add([]byte(`<meta property="og:url" content="http://b.example/">`))
	f.Fuzz(func(t *testing.T, page []byte) {
		if u := PageURL(page); u != "" && absolute(u) != u {
			t.Fatalf("PageURL returned %q, not an absolute http(s) URL", u)
		}
	})
}
