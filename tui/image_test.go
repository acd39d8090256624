package tui

import (
	"bytes"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/m3bench/m3eval/internal/golden"
)

// testImage is w×h with a red left half and a blue right half.
func testImage(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			c := color.RGBA{220, 20, 20, 255}
			if x >= w/2 {
				c = color.RGBA{20, 20, 220, 255}
			}
			img.SetRGBA(x, y, c)
		}
	}
	return img
}

func writeFile(t testing.TB, dir, name string, encode func(*bytes.Buffer) error) string {
	t.Helper()
	var b bytes.Buffer
	if err := encode(&b); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDecodeFormats decodes each format the preview promises from real files, and says
// what is wrong with files that are missing, not images, or directories.
func TestDecodeFormats(t *testing.T) {
	dir := t.TempDir()
	img := testImage(64, 48)
	files := map[string]string{
		"png":  writeFile(t, dir, "a.png", func(b *bytes.Buffer) error { return png.Encode(b, img) }),
		"jpeg": writeFile(t, dir, "a.jpg", func(b *bytes.Buffer) error { return jpeg.Encode(b, img, nil) }),
		"gif":  writeFile(t, dir, "a.gif", func(b *bytes.Buffer) error { return gif.Encode(b, img, nil) }),
		"webp": "testdata/images/blue-purple-pink.lossy.webp",
	}
	for format, p := range files {
		d := decodeImage(defaultImageSource{}, p)
		if d.err != nil || d.thumb == nil {
			t.Errorf("%s: %v", format, d.err)
			continue
		}
		if d.width == 0 || d.height == 0 || d.size == 0 {
			t.Errorf("%s: %d×%d, %d bytes", format, d.width, d.height, d.size)
		}
		if format != "webp" {
			// The left half stays red and the right half blue after decoding.
			l, r := d.thumb.RGBAAt(5, 24), d.thumb.RGBAAt(58, 24)
			if l.R < 150 || l.B > 100 || r.B < 150 || r.R > 100 {
				t.Errorf("%s: colours lost: left %v right %v", format, l, r)
			}
		}
	}
	garbage := writeFile(t, dir, "notes.png", func(b *bytes.Buffer) error { _, err := b.WriteString("not an image"); return err })
	for name, want := range map[string]string{
		filepath.Join(dir, "gone.png"): "missing",
		garbage:                        "unreadable: not a PNG, JPEG, GIF or WebP",
		dir:                            "a directory",
	} {
		if d := decodeImage(defaultImageSource{}, name); d.err == nil || !strings.Contains(d.err.Error(), want) {
			t.Errorf("%s: error %v, want %q", name, d.err, want)
		}
	}
	if d := decodeImage(defaultImageSource{}, "https://example.org/x.png"); !d.url || d.err != nil {
		t.Errorf("a URL is not fetched, only linked: %+v", d)
	}
	// The demo's paths work from any directory: they fall back to the embedded images.
	if d := decodeImage(defaultImageSource{}, "annotations/demo/images/park.png"); d.err != nil {
		t.Errorf("demo image: %v", d.err)
	}
}

// TestThumbnailKeepsAspect: a 4000×3000 image becomes 400×300.
func TestThumbnailKeepsAspect(t *testing.T) {
	if b := thumbnail(testImage(4000, 3000)).Bounds(); b.Dx() != 400 || b.Dy() != 300 {
		t.Fatalf("thumbnail %v", b)
	}
	if b := thumbnail(testImage(30, 90)).Bounds(); b.Dx() != 30 || b.Dy() != 90 {
		t.Fatalf("small images are not scaled up: %v", b)
	}
}

// TestHalfBlocks draws in the room given, aspect kept, in the terminal's colours.
func TestHalfBlocks(t *testing.T) {
	img := testImage(400, 300)
	lines := halfBlocks(img, 40, 20, termenv.TrueColor)
	// 40 columns × 30 pixel rows (4:3) = 15 lines, within the 20 given.
	if len(lines) != 15 {
		t.Fatalf("%d lines, want 15", len(lines))
	}
	for _, l := range lines {
		if w := ansi.StringWidth(l); w != 40 {
			t.Fatalf("line width %d, want 40", w)
		}
	}
	if !strings.Contains(lines[0], "\x1b[38;2;220;20;20m") || !strings.Contains(lines[0], "48;2;20;20;220m") {
		t.Errorf("true colour sequences missing: %q", lines[0][:80])
	}
	// Tall room: height bounds the size.
	if lines := halfBlocks(img, 200, 10, termenv.TrueColor); len(lines) != 10 || ansi.StringWidth(lines[0]) != 26 {
		t.Errorf("height-bound: %d lines of %d", len(lines), ansi.StringWidth(lines[0]))
	}
	lines = halfBlocks(img, 40, 20, termenv.ANSI256)
	if strings.Contains(lines[0], "38;2;") || !strings.Contains(lines[0], "38;5;") {
		t.Errorf("256 colours expected: %q", lines[0][:40])
	}
}

// TestPreviewWithoutColour: with NO_COLOR (an ASCII profile) the pane draws no pixels and
// says what the image is; a missing file is said plainly.
func TestPreviewWithoutColour(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "dog.png", func(b *bytes.Buffer) error { return png.Encode(b, testImage(64, 48)) })
	r := lipgloss.NewRenderer(os.Stdout)
	r.SetColorProfile(termenv.Ascii)
	pane := newImagePane(defaultImageSource{}, DefaultStyles(r), termenv.Ascii)
	cmd := pane.Show(1, []string{p, filepath.Join(dir, "gone.png")})
	pane.Update(cmd())
	pane.SetSize(80, 10)
	v := pane.View()
	if strings.Contains(v, "▀") || strings.Contains(v, "\x1b[") {
		t.Errorf("pixels or escapes without colour:\n%s", v)
	}
	for _, want := range []string{"dog.png 64×48", "missing"} {
		if !strings.Contains(v, want) {
			t.Errorf("preview lacks %q:\n%s", want, v)
		}
	}
	if pane.PreferredWidth(10) != 0 {
		t.Error("without colour the captions need no column of their own")
	}
}

// TestImageCacheIsPerPath: a second item with the same image needs no decoding.
func TestImageCacheIsPerPath(t *testing.T) {
	pane := newImagePane(defaultImageSource{}, DefaultStyles(lipgloss.NewRenderer(os.Stdout)), termenv.TrueColor)
	cmd := pane.Show(1, []string{"annotations/demo/images/park.png"})
	if cmd == nil {
		t.Fatal("first show decodes")
	}
	pane.Update(cmd())
	if cmd := pane.Show(2, []string{"annotations/demo/images/park.png"}); cmd != nil || pane.decoded == nil {
		t.Fatal("second show decoded again")
	}
}

// TestPreviewGolden pins the true-colour preview of a demo image, caption included.
func TestPreviewGolden(t *testing.T) {
	pane := newImagePane(defaultImageSource{}, DefaultStyles(lipgloss.NewRenderer(os.Stdout)), termenv.TrueColor)
	pane.Update(pane.Show(1, []string{"annotations/demo/images/umbrella.png"})())
	pane.SetSize(40, 12)
	golden.Assert(t, golden.Path(t), []byte(pane.View()))
}
