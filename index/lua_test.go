package index

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestLuacheckrcNames checks that lua/.luacheckrc, which lets luacheck read
// each script's file on its own, names every constant the store writes
// before the scripts (scriptConstants, KIND and FOUND) and every top-level
// local of the prelude: a name added to either and not there would show
// as an undefined global to the linter and the editor.
func TestLuacheckrcNames(t *testing.T) {
	b, err := os.ReadFile("lua/.luacheckrc")
	if err != nil {
		t.Fatal(err)
	}
	rc := string(b)
	quoted := map[string]bool{}
	for _, m := range regexp.MustCompile(`'(\w+)'`).FindAllStringSubmatch(rc, -1) {
		quoted[m[1]] = true
	}
	locals := regexp.MustCompile(`(?m)^local (?:function (\w+)|([\w, ]+?)\s*(?:=|--|$))`)
	names := func(src string) []string {
		var out []string
		for _, m := range locals.FindAllStringSubmatch(src, -1) {
			if m[1] != "" {
				out = append(out, m[1])
				continue
			}
			for _, n := range strings.Split(m[2], ",") {
				out = append(out, strings.TrimSpace(n))
			}
		}
		return out
	}
	consts := names((&Redis{}).scriptConstants() + luaSeqRecordOnce("v")[:strings.Index(luaSeqRecordOnce("v"), "\n")+1])
	prelude := names(luaPrelude)
	if len(consts) < 20 || len(prelude) < 50 {
		t.Fatalf("read %d constants and %d prelude locals: the patterns no longer match", len(consts), len(prelude))
	}
	for _, n := range append(consts, prelude...) {
		if !quoted[n] {
			t.Errorf("lua/.luacheckrc does not name %s", n)
		}
	}
}
