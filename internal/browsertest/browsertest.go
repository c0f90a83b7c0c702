// Package browsertest drives headless Chromium for tests that check what a
// page shows a person: the DOM after the page's scripts ran, and a
// screenshot. Chromium comes from Debian's chromium package (make deps).
// When it is missing the test is skipped, or fails under CI (see
// internal/dataset).
package browsertest

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/dataset"
)

// Chromium returns the path of the browser: $CHROMIUM when set, else
// chromium, chromium-browser or google-chrome on PATH.
func Chromium(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	dataset.Missing(t, "chromium not found (make deps installs Debian's chromium package)")
	return ""
}

// run starts a headless browser on the file with the extra flags and
// returns its standard output.
func run(t testing.TB, file string, flags ...string) []byte {
	t.Helper()
	abs, err := filepath.Abs(file)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := append([]string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--no-default-browser-check", "--disable-extensions",
		"--user-data-dir=" + t.TempDir(),
		// Lets the page's scripts run (and finish) before the dump.
		"--virtual-time-budget=5000",
	}, flags...)
	args = append(args, "file://"+abs)
	cmd := exec.CommandContext(ctx, Chromium(t), args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.Dir = t.TempDir()
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", flags, err, errOut.Bytes())
	}
	return out.Bytes()
}

// DumpDOM returns the serialized DOM of the page after its scripts ran.
func DumpDOM(t testing.TB, file string) []byte {
	t.Helper()
	return run(t, file, "--dump-dom")
}

// Screenshot renders the page in a window of w×h CSS pixels to the PNG
// file out and returns the decoded image.
func Screenshot(t testing.TB, file, out string, w, h int) image.Image {
	t.Helper()
	abs, err := filepath.Abs(out)
	if err != nil {
		t.Fatal(err)
	}
	run(t, file, "--screenshot="+abs, "--hide-scrollbars", "--force-device-scale-factor=1",
		"--window-size="+strconv.Itoa(w)+","+strconv.Itoa(h))
	f, err := os.Open(abs)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot %s: %v", abs, err)
	}
	return img
}

// ColouredPixels counts clearly coloured (not grey) pixels of img, on
// every other row and column: highlights and badges, not text or
// background.
func ColouredPixels(img image.Image) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			if max(r, g, bl)-min(r, g, bl) > 0x3000 {
				n++
			}
		}
	}
	return n
}
