package deploy

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/buildinfo"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/linter"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/moby/patternmatcher"
	"github.com/moby/patternmatcher/ignorefile"
)

// The image's contract, checked in both Containerfiles and in the built image.
var (
	imageEntrypoint = []string{"/usr/local/bin/neardup", "serve"}
	imageUser       = "65532:65532"
	imagePort       = "8080"
	// imageFiles are the files of the final stage: destination → what.
	imageFiles = []string{"/etc/ssl/certs/ca-certificates.crt", "/etc/passwd", "/etc/group", "/usr/local/bin/neardup"}
)

// parseContainerfile parses a Containerfile with BuildKit's parser and
// instruction decoder, failing the test on a parse error or any warning of
// BuildKit's Dockerfile linter.
func parseContainerfile(t *testing.T, file string) []instructions.Stage {
	t.Helper()
	res, err := parser.Parse(bytes.NewReader(readFile(t, file)))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	for _, w := range res.Warnings {
		t.Errorf("%s: parser warning: %s", file, w.Short)
	}
	lint := linter.New(&linter.Config{Warn: func(rule, desc, url, msg string, loc []parser.Range) {
		t.Errorf("%s: lint %s: %s (%s) at %v", file, rule, msg, url, loc)
	}})
	stages, _, err := instructions.Parse(res.AST, lint)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return stages
}

// finalStage is what a Containerfile's last stage sets.
type finalStage struct {
	base       string
	copies     map[string]instructions.CopyCommand // destination → COPY
	user       string
	ports      []string
	entrypoint []string
	others     []string // any other instruction
}

func describeFinal(t *testing.T, file string, s instructions.Stage) finalStage {
	t.Helper()
	f := finalStage{base: s.BaseName, copies: map[string]instructions.CopyCommand{}}
	for _, c := range s.Commands {
		switch c := c.(type) {
		case *instructions.CopyCommand:
			if _, dup := f.copies[c.DestPath]; dup {
				t.Errorf("%s: %s copied twice", file, c.DestPath)
			}
			f.copies[c.DestPath] = *c
		case *instructions.UserCommand:
			f.user = c.User
		case *instructions.ExposeCommand:
			f.ports = append(f.ports, c.Ports...)
		case *instructions.EntrypointCommand:
			if c.PrependShell {
				t.Errorf("%s: ENTRYPOINT in shell form: signals would go to /bin/sh, and scratch has none", file)
			}
			f.entrypoint = c.CmdLine
		default:
			f.others = append(f.others, c.Name())
		}
	}
	return f
}

// Containerfile builds the static binary in a Go stage and ends in a
// scratch stage with the binary, CA certificates, a non-root user and
// neardup serve as the entrypoint; Containerfile.prebuilt's stage is the
// same final stage around a host-built binary.
func TestContainerfiles(t *testing.T) {
	stages := parseContainerfile(t, "Containerfile")
	if len(stages) != 2 {
		t.Fatalf("Containerfile: %d stages, want a build stage and a final stage", len(stages))
	}
	build, final := stages[0], stages[1]
	if build.Name != "build" || !strings.Contains(build.BaseName, "golang:") {
		t.Errorf("Containerfile: first stage %q FROM %q, want build FROM a golang image", build.Name, build.BaseName)
	}
	var buildCmd string
	for _, c := range build.Commands {
		if r, ok := c.(*instructions.RunCommand); ok && strings.Contains(strings.Join(r.CmdLine, " "), "go build") {
			buildCmd = strings.Join(r.CmdLine, " ")
		}
	}
	for _, want := range []string{"CGO_ENABLED=0", "-tags nodev", "-X main.version=", "-o /out/neardup", "./cmd/neardup"} {
		if !strings.Contains(buildCmd, want) {
			t.Errorf("Containerfile: the go build step %q lacks %q", buildCmd, want)
		}
	}

	full := describeFinal(t, "Containerfile", final)
	pre := parseContainerfile(t, "Containerfile.prebuilt")
	if len(pre) != 1 {
		t.Fatalf("Containerfile.prebuilt: %d stages, want 1", len(pre))
	}
	prebuilt := describeFinal(t, "Containerfile.prebuilt", pre[0])
	for _, f := range []struct {
		file string
		s    finalStage
	}{{"Containerfile", full}, {"Containerfile.prebuilt", prebuilt}} {
		if f.s.base != "scratch" {
			t.Errorf("%s: final stage FROM %q, want scratch", f.file, f.s.base)
		}
		if got := slices.Sorted(func(yield func(string) bool) {
			for d := range f.s.copies {
				if !yield(d) {
					return
				}
			}
		}); !slices.Equal(got, slices.Sorted(slices.Values(imageFiles))) {
			t.Errorf("%s: final stage copies to %v, want %v", f.file, got, imageFiles)
		}
		if f.s.user != imageUser {
			t.Errorf("%s: USER %q, want %q", f.file, f.s.user, imageUser)
		}
		if !slices.Equal(f.s.ports, []string{imagePort}) {
			t.Errorf("%s: EXPOSE %v, want %s", f.file, f.s.ports, imagePort)
		}
		if !slices.Equal(f.s.entrypoint, imageEntrypoint) {
			t.Errorf("%s: ENTRYPOINT %q, want %q", f.file, f.s.entrypoint, imageEntrypoint)
		}
		if len(f.s.others) > 0 {
			t.Errorf("%s: final stage has other instructions %v", f.file, f.s.others)
		}
	}
	// Build-stage files come from the build stage; the rest from the
	// repository, where they must exist.
	for dest, c := range full.copies {
		if c.From != "" {
			if c.From != build.Name {
				t.Errorf("Containerfile: COPY --from=%s to %s: no such stage", c.From, dest)
			}
			continue
		}
		for _, src := range c.SourcePaths {
			if _, err := os.Stat(filepath.Join(repoRoot, src)); err != nil {
				t.Errorf("Containerfile: COPY %s: %v", src, err)
			}
		}
	}
	if c := full.copies["/usr/local/bin/neardup"]; c.From != build.Name || !slices.Equal(c.SourcePaths, []string{"/out/neardup"}) {
		t.Errorf("Containerfile: the binary is copied from %q %v, want the build stage's /out/neardup", c.From, c.SourcePaths)
	}
	// The user exists in the image's passwd with that uid and gid.
	uid, gid, _ := strings.Cut(imageUser, ":")
	if !slices.ContainsFunc(strings.Split(string(readFile(t, "image/passwd")), "\n"), func(l string) bool {
		f := strings.Split(l, ":")
		return len(f) == 7 && f[2] == uid && f[3] == gid && f[2] != "0"
	}) {
		t.Errorf("image/passwd has no non-root entry for %s", imageUser)
	}
}

// Containerfile.dockerignore keeps the build context small but excludes
// nothing the build needs: no source or embedded file of any package of
// ./cmd/neardup, nor go.mod, go.sum or a file the final stage copies.
func TestContainerfileIgnore(t *testing.T) {
	f, err := os.Open("Containerfile.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	patterns, err := ignorefile.ReadAll(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	pm, err := patternmatcher.New(patterns)
	if err != nil {
		t.Fatal(err)
	}
	list := exec.Command("go", "list", "-deps", "-f", `{{if .Module}}{{if .Module.Main}}{{.Dir}}|{{join .GoFiles ","}}|{{join .EmbedFiles ","}}{{end}}{{end}}`, "./cmd/neardup")
	list.Dir = repoRoot
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	needed := []string{"go.mod", "go.sum", "deploy/image/passwd", "deploy/image/group"}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		parts := strings.Split(line, "|")
		rel, err := filepath.Rel(repoRoot, parts[0])
		if err != nil {
			t.Fatal(err)
		}
		for _, files := range parts[1:] {
			for _, f := range strings.Split(files, ",") {
				if f != "" {
					needed = append(needed, path.Join(filepath.ToSlash(rel), f))
				}
			}
		}
	}
	if len(needed) < 30 {
		t.Fatalf("only %d files found for ./cmd/neardup", len(needed))
	}
	for _, f := range needed {
		if excluded, err := pm.MatchesOrParentMatches(f); err != nil || excluded {
			t.Errorf("Containerfile.dockerignore excludes %s, which the build needs (%v)", f, err)
		}
	}
	for _, f := range []string{".git/config", "bench/scanbench/main.go", "docs/design.md", "service/service_test.go", "deploy/compose/compose.yaml"} {
		if excluded, _ := pm.MatchesOrParentMatches(f); !excluded {
			t.Errorf("Containerfile.dockerignore lets %s into the build context", f)
		}
	}
}

// podman builds Containerfile.prebuilt around the host-built static
// binary (FROM scratch: nothing to pull); the saved image has exactly the
// expected files, user, port and entrypoint, and its binary, run from the
// exported file system, is the one built and works.
func TestImageBuild(t *testing.T) {
	podman := requireTool(t, "podman", "apt-get install podman (make deps installs it)")
	ctxDir := t.TempDir()
	for src, dst := range map[string]string{
		neardupBin: "neardup", "/etc/ssl/certs/ca-certificates.crt": "ca-certificates.crt",
		"image/passwd": "passwd", "image/group": "group",
	} {
		b := readFile(t, src)
		if err := os.WriteFile(filepath.Join(ctxDir, dst), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A store of the test's own: nothing is left in the machine's images.
	store := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		args = append([]string{"--root", filepath.Join(store, "root"), "--runroot", filepath.Join(store, "run"), "--storage-driver", "vfs"}, args...)
		out, err := exec.Command(podman, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("podman %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	t.Cleanup(func() { run("rmi", "--all", "--force") })
	abs, err := filepath.Abs("Containerfile.prebuilt")
	if err != nil {
		t.Fatal(err)
	}
	run("build", "--quiet", "-f", abs, "-t", "localhost/neardup:"+testVersion, ctxDir)
	oci := filepath.Join(t.TempDir(), "oci")
	run("save", "--format", "oci-dir", "-o", oci, "localhost/neardup:"+testVersion)

	cfg, layers := readOCI(t, oci)
	if cfg.Config.User != imageUser {
		t.Errorf("image user %q, want %q", cfg.Config.User, imageUser)
	}
	if !slices.Equal(cfg.Config.Entrypoint, imageEntrypoint) {
		t.Errorf("image entrypoint %q, want %q", cfg.Config.Entrypoint, imageEntrypoint)
	}
	if _, ok := cfg.Config.ExposedPorts[imagePort+"/tcp"]; !ok || len(cfg.Config.ExposedPorts) != 1 {
		t.Errorf("image exposes %v, want %s/tcp", cfg.Config.ExposedPorts, imagePort)
	}
	rootfs := t.TempDir()
	var files []string
	for _, l := range layers {
		files = append(files, untar(t, l, rootfs)...)
	}
	if slices.Sort(files); !slices.Equal(files, slices.Sorted(slices.Values(imageFiles))) {
		t.Errorf("image files %v, want %v", files, imageFiles)
	}
	bin := filepath.Join(rootfs, "usr/local/bin/neardup")
	if sum(t, bin) != sum(t, neardupBin) {
		t.Error("the image's binary is not the one built")
	}
	if e, err := elf.Open(bin); err != nil {
		t.Error(err)
	} else {
		for _, p := range e.Progs {
			if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
				t.Error("the image's binary is dynamically linked: scratch has no libc")
			}
		}
		e.Close()
	}
	if out, err := exec.Command(bin, "version").CombinedOutput(); err != nil || !strings.Contains(string(out), testVersion) {
		t.Errorf("neardup version from the image: %v %q, want %s", err, out, testVersion)
	}
	out, err := exec.Command(bin, "config", "example").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "input_topic:") || !strings.Contains(string(out), "shutdown_timeout:") {
		t.Errorf("neardup config example from the image: %v\n%s", err, out)
	}
	if pw := string(readFile(t, filepath.Join(rootfs, "etc/passwd"))); !strings.Contains(pw, ":"+imageUser+":") {
		t.Errorf("the image's /etc/passwd has no %s entry", imageUser)
	}
	if cas := readFile(t, filepath.Join(rootfs, "etc/ssl/certs/ca-certificates.crt")); !bytes.Contains(cas, []byte("BEGIN CERTIFICATE")) {
		t.Error("the image's CA bundle holds no certificate")
	}
}

// ociConfig is the part of an OCI image configuration the test reads.
type ociConfig struct {
	Config struct {
		User         string
		Entrypoint   []string
		Cmd          []string
		ExposedPorts map[string]struct{}
	} `json:"config"`
}

// readOCI reads an OCI image layout with one image: its configuration
// and its layer blobs, bottom first.
func readOCI(t *testing.T, dir string) (ociConfig, []string) {
	t.Helper()
	type desc struct {
		MediaType string `json:"mediaType"`
		Digest    string `json:"digest"`
	}
	blob := func(d desc) string {
		alg, hex, ok := strings.Cut(d.Digest, ":")
		if !ok {
			t.Fatalf("digest %q", d.Digest)
		}
		return filepath.Join(dir, "blobs", alg, hex)
	}
	var index struct{ Manifests []desc }
	if err := json.Unmarshal(readFile(t, filepath.Join(dir, "index.json")), &index); err != nil || len(index.Manifests) != 1 {
		t.Fatalf("index.json: %v, %d manifests", err, len(index.Manifests))
	}
	var manifest struct {
		Config desc
		Layers []desc
	}
	if err := json.Unmarshal(readFile(t, blob(index.Manifests[0])), &manifest); err != nil {
		t.Fatal(err)
	}
	var cfg ociConfig
	if err := json.Unmarshal(readFile(t, blob(manifest.Config)), &cfg); err != nil {
		t.Fatal(err)
	}
	var layers []string
	for _, l := range manifest.Layers {
		layers = append(layers, blob(l))
	}
	return cfg, layers
}

// untar extracts a layer (tar, gzip or not) into dir and returns the
// regular files it holds, as absolute image paths.
func untar(t *testing.T, layer, dir string) []string {
	t.Helper()
	f, err := os.Open(layer)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	br := bufio.NewReader(f)
	var r io.Reader = br
	if magic, _ := br.Peek(2); bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		gz, err := gzip.NewReader(br)
		if err != nil {
			t.Fatal(err)
		}
		r = gz
	}
	var files []string
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatalf("layer %s: %v", layer, err)
		}
		name := path.Clean("/" + h.Name)
		dst := filepath.Join(dir, filepath.FromSlash(name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(dst, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				t.Fatal(err)
			}
			out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&0o777)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(out, tr); err != nil {
				t.Fatal(err)
			}
			if err := out.Close(); err != nil {
				t.Fatal(err)
			}
			files = append(files, name)
		default:
			t.Errorf("layer entry %s of type %c: want only files and directories", name, h.Typeflag)
		}
	}
}

func sum(t *testing.T, file string) string {
	t.Helper()
	return fmt.Sprintf("%x", sha256.Sum256(readFile(t, file)))
}

// TestServeBinaryLean: the image's binary (go build -tags nodev) links none
// of the development commands' code: no embedded Kafka broker (kfake), no
// plotting (gonum/plot and its fonts), no profiler (google/pprof,
// net/http/pprof), no benchmark harness or evaluation.
func TestServeBinaryLean(t *testing.T) {
	for _, name := range []string{"demo", "bench", "eval"} {
		out, err := exec.Command(neardupBin, name, "-h").CombinedOutput() // -h: quick in a build that has it
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), "not in this build") {
			t.Errorf("neardup %s in the serve binary: %v, %q; want exit 2 saying it is not in this build", name, err, out)
		}
	}
	info, err := buildinfo.ReadFile(neardupBin)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range info.Deps {
		for _, bad := range []string{"franz-go/pkg/kfake", "gonum.org/", "go-fonts/", "github.com/google/pprof"} {
			if strings.Contains(d.Path, bad) {
				t.Errorf("the serve binary links module %s", d.Path)
			}
		}
	}
	e, err := elf.Open(neardupBin)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	syms, err := e.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, s := range syms {
		for _, bad := range []string{"github.com/neardup/neardup/bench/", "github.com/neardup/neardup/eval.", "github.com/neardup/neardup/internal/synth.", "net/http/pprof.", "runtime/pprof."} {
			if strings.HasPrefix(s.Name, bad) && !seen[bad] {
				seen[bad] = true
				t.Errorf("the serve binary links %s (symbol %s)", bad, s.Name)
			}
		}
	}
}
