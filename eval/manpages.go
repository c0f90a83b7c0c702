package eval

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// The manual-page set: real generated documentation of a second kind,
// written by no one here. A sample of the machine's manual pages
// (/usr/share/man, sections 1 to 8, English), rendered by its man(1) at
// evaluation time in two versions, as two versions of one documentation
// site: at 80 columns, and at 100 columns without hyphenation or
// justification. Many pages carry generated text that many others share
// (help2man's "Report bugs to" and licence paragraphs, pod2man's and
// OpenSSL's copyright sections, the same SEE ALSO and AUTHOR sections of
// a package's pages) and pages that are the same page under another name
// (links, .so includes). Nothing of it is committed: the rendered pages
// are written into the user's cache directory (once per sample and man
// version) and read from there.

// SetManPages is the manual-page set.
const SetManPages = "manpages"

// manRoot is where the manual pages are read.
const manRoot = "/usr/share/man"

// manSample keeps one page in manSample (by an FNV-1a hash of its file
// name, so the sample is the same on every run of one machine).
const manSample = 25

// manVariants are the man options and widths of the two versions.
var manVariants = []struct {
	Width string
	Args  []string
}{
	{"80", nil},
	{"100", []string{"--no-hyphenation", "--no-justification"}},
}

// manHost is the documentation site's host; version v's page p is
// https://manHost/v{v}/p.
const manHost = "man.example.org"

// manPages returns the sampled manual pages of the machine, rendering
// them into cache (a folder; the user's cache directory when empty)
// unless an earlier run did.
func manPages(ctx context.Context, cache string) (*refDocs, error) {
	man, err := exec.LookPath("man")
	if err != nil {
		return nil, fmt.Errorf("eval: manpages: %w", err)
	}
	ver, err := exec.CommandContext(ctx, man, "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("eval: manpages: man --version: %w", err)
	}
	files, err := manSampleFiles(manRoot)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("eval: manpages: no manual pages under %s", manRoot)
	}
	if cache == "" {
		if cache, err = os.UserCacheDir(); err != nil {
			return nil, fmt.Errorf("eval: manpages: %w", err)
		}
		cache = filepath.Join(cache, "neardup")
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%v\n", ver, manVariants)
	for _, f := range files {
		st, err := os.Stat(filepath.Join(manRoot, f))
		if err != nil {
			return nil, fmt.Errorf("eval: manpages: %w", err)
		}
		fmt.Fprintf(h, "%s %d %d\n", f, st.Size(), st.ModTime().UnixNano())
	}
	dir := filepath.Join(cache, "manpages-"+hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(filepath.Join(dir, "complete")); err != nil {
		if err := renderManPages(ctx, man, files, dir); err != nil {
			return nil, err
		}
	}
	r := &refDocs{Name: SetManPages, Dir: dir, version: ver, TextVersion: len(manVariants)}
	for v := range manVariants {
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("v%d", v+1), f+".txt"))
			if errors.Is(err, fs.ErrNotExist) {
				continue // man rendered nothing of it
			}
			if err != nil {
				return nil, fmt.Errorf("eval: manpages: %w", err)
			}
			p := strings.TrimSuffix(f, ".gz")
			r.Pages = append(r.Pages, refPage{
				ID: fmt.Sprintf("v%d/%s", v+1, p), URL: fmt.Sprintf("https://%s/v%d/%s", manHost, v+1, p),
				Version: v + 1, Path: p, Body: b, Plain: true, Same: manTarget(f),
			})
		}
	}
	return r, nil
}

// manTarget is the file a page's file resolves to (the page itself, or
// the page a link names): two pages with one target are one page.
func manTarget(f string) string {
	t, err := filepath.EvalSymlinks(filepath.Join(manRoot, f))
	if err != nil {
		return f
	}
	return t
}

// manSampleFiles lists the sampled pages of root's man1 … man8, sorted
// (paths relative to root).
func manSampleFiles(root string) ([]string, error) {
	var out []string
	for s := 1; s <= 8; s++ {
		sec := fmt.Sprintf("man%d", s)
		es, err := os.ReadDir(filepath.Join(root, sec))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("eval: manpages: %w", err)
		}
		for _, e := range es {
			if e.IsDir() {
				continue
			}
			h := fnv.New32a()
			h.Write([]byte(e.Name()))
			if h.Sum32()%manSample == 0 {
				out = append(out, sec+"/"+e.Name())
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// renderManPages renders every file in each version into dir/v1, v2
// (a page man renders as nothing is left out), then marks dir complete.
// It builds in a temporary folder beside dir and renames it into place.
func renderManPages(ctx context.Context, man string, files []string, dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("eval: manpages: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".manpages-*")
	if err != nil {
		return fmt.Errorf("eval: manpages: %w", err)
	}
	defer os.RemoveAll(tmp)
	type task struct{ v, i int }
	tasks := make(chan task)
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range tasks {
				if err := renderManPage(ctx, man, t.v, files[t.i], tmp); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for v := range manVariants {
		for i := range files {
			tasks <- task{v, i}
		}
	}
	close(tasks)
	wg.Wait()
	if first != nil {
		return first
	}
	if err := os.WriteFile(filepath.Join(tmp, "complete"), nil, 0o644); err != nil {
		return fmt.Errorf("eval: manpages: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("eval: manpages: %w", err)
	}
	return nil
}

// renderManPage renders file f (relative to manRoot) as version v into
// dir/v{v+1}/f.txt: man's plain-text output, without its formatting.
func renderManPage(ctx context.Context, man string, v int, f, dir string) error {
	args := append([]string{"--local-file"}, manVariants[v].Args...)
	cmd := exec.CommandContext(ctx, man, append(args, filepath.Join(manRoot, f))...)
	cmd.Env = append(os.Environ(), "MANWIDTH="+manVariants[v].Width, "LANG=C.UTF-8", "LC_ALL=C.UTF-8", "MAN_KEEP_FORMATTING=", "MANPAGER=cat", "PAGER=cat")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return nil // a page man cannot render (a missing preprocessor) is left out
	}
	out = plainMan(out)
	if len(bytes.Fields(out)) < 20 {
		return nil // nothing of its own
	}
	p := filepath.Join(dir, fmt.Sprintf("v%d", v+1), f+".txt")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("eval: manpages: %w", err)
	}
	if err := os.WriteFile(p, out, 0o644); err != nil {
		return fmt.Errorf("eval: manpages: %w", err)
	}
	return nil
}

// plainMan drops overstrike formatting (a character and a backspace)
// that man may leave in its output.
func plainMan(b []byte) []byte {
	if !bytes.ContainsRune(b, '\b') {
		return b
	}
	rs := []rune(string(b))
	out := make([]rune, 0, len(rs))
	for _, r := range rs {
		if r == '\b' {
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			continue
		}
		out = append(out, r)
	}
	return []byte(string(out))
}

// buildManPages is the manual-page set: the links of buildRefDocs (a
// link between versions of one page, or two names of one page, is right,
// and so is one between two pages that are near duplicates as texts:
// word-5-shingle Jaccard at least 0.5 or containment at least 0.8; every
// other link is wrong), every page of the second version expected to be
// linked to its first, and a later name of a page to its earlier one.
// Whether two pages are near duplicates as texts is decided on their
// renderings without hyphenation (refDocs.TextVersion, the last version,
// when man rendered the page in it): the words the 80-column rendering
// hyphenated at line ends are how it was rendered, not what the page
// says.
func buildManPages(r *refDocs) *Set {
	s := buildRefDocs(r)
	s.Order = fmt.Sprintf("%d pages: a sample of the machine's manual pages (%s, sections 1 to 8: each file whose name's FNV-1a hash is 0 modulo %d) rendered by its man (%s) in two versions (%d columns; %d columns, %s), version by version, each in path order, every page with its url on one host (%s)",
		len(r.Pages), manRoot, manSample, strings.TrimSpace(string(r.version)), 80, 100, strings.Join(manVariants[1].Args, " "), manHost)
	s.PairsDoc = "every expected (later, earlier) pair (positive), and every pair of pages of the first version in one section whose names start with the same letter (positive when they are near duplicates as texts or one page, else negative)"
	s.Pairs = refPairs(s, r, func(p *refPage) string {
		dir, name, _ := strings.Cut(p.Path, "/")
		return dir + "/" + strings.ToLower(name[:1])
	})
	return s
}
