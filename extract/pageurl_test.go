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

func TestPageSiteName(t *testing.T) {
	for _, c := range []struct {
		name, page, want string
	}{
		{"og:site_name", `<head><meta property="og:site_name" content=" The  Evening Ledger "><title>A story</title></head>`, "the evening ledger"},
		{"og:site_name before the title's end", `<head><title>A story | Ledger</title><meta property="og:site_name" content="The Evening Ledger"></head>`, "the evening ledger"},
		{"title, bar", `<head><title>A story | The Evening Ledger</title></head>`, "the evening ledger"},
		{"title, em dash", `<head><title>A story — The Granite Chronicle</title></head>`, "the granite chronicle"},
		{"title, the last separator of any kind", `<head><title>A story | Syndicated — The Granite Chronicle</title></head>`, "the granite chronicle"},
		{"title, hyphen", `<head><title>Release notes - Example Docs</title></head>`, "example docs"},
		{"a long end is the title's", `<head><title>Part one - the voyage out and what came of it</title></head>`, ""},
		{"no separator", `<head><title>ArrayList (Java SE 25 &amp; JDK 25)</title></head>`, ""},
		{"nothing before the separator", `<head><title> | Ledger</title></head>`, ""},
		{"a title in the body is the article's", `<head></head><body><title>A | B</title></body>`, ""},
		{"none", `<p>plain</p>`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := PageSite([]byte(c.page)).Name; got != c.want {
				t.Errorf("PageSite(…).Name = %q, want %q", got, c.want)
			}
		})
	}
}

func FuzzPageURL(f *testing.F) {
	f.Add([]byte(`<head><link rel="canonical" href="https://a.example/1"></head>`))
	f.Add([]byte(`<meta property="og:url" content="http://b.example/">`))
	f.Add([]byte(`<head><title>A story | The Ledger</title><meta property="og:site_name" content="Ledger"></head>`))
	f.Fuzz(func(t *testing.T, page []byte) {
		s := PageSite(page)
		if u := s.URL; u != "" && absolute(u) != u {
			t.Fatalf("PageURL returned %q, not an absolute http(s) URL", u)
		}
		if s.Name != normalName(s.Name) {
			t.Fatalf("site name %q is not lower case with its spaces collapsed", s.Name)
		}
	})
}
