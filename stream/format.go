package stream

import (
	"path/filepath"
	"strings"
)

// IsHTMLName reports whether a file name says HTML: .html, .htm or
// .xhtml, in any case. It is the one rule for a file's format; the
// files consumer sets [Document.IsHTML] by it and extract.FormatOf
// answers with it, so the consumer need not link the HTML extractor to
// know what it reads.
func IsHTMLName(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".html", ".htm", ".xhtml":
		return true
	}
	return false
}
