package tui

import (
	"encoding/base64"
	"image"
	"os"
	"regexp"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// TestDetectGraphics: the flag wins over the environment variable, which wins over what
// the terminal announces; tmux and screen get none.
func TestDetectGraphics(t *testing.T) {
	cases := []struct {
		flag string
		env  map[string]string
		want string
		err  bool
	}{
		{"", map[string]string{"KITTY_WINDOW_ID": "1"}, GraphicsKitty, false},
		{"", map[string]string{"TERM_PROGRAM": "iTerm.app"}, GraphicsITerm, false},
		{"", map[string]string{"TERM_PROGRAM": "WezTerm"}, GraphicsITerm, false},
		{"", map[string]string{"KITTY_WINDOW_ID": "1", "TMUX": "/tmp/tmux-0/default,1,0"}, GraphicsNone, false},
		{"", map[string]string{"TERM": "xterm-256color"}, GraphicsNone, false},
		{"", map[string]string{"M3EVAL_GRAPHICS": "kitty", "TMUX": "x"}, GraphicsKitty, false},
		{"iterm2", map[string]string{"M3EVAL_GRAPHICS": "kitty"}, GraphicsITerm, false},
		{"none", map[string]string{"KITTY_WINDOW_ID": "1"}, GraphicsNone, false},
		{"sixel", nil, GraphicsSixel, false},
		{"", map[string]string{"TERM": "foot"}, GraphicsSixel, false},
		{"regis", nil, "", true},
	}
	for _, tc := range cases {
		got, err := DetectGraphics(tc.flag, env(tc.env))
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("%q %v: %q %v, want %q", tc.flag, tc.env, got, err, tc.want)
		}
	}
}

// TestKittyImageChunks: RGBA in 4096-byte base64 chunks, the size and cell box in the
// first, "more" on all but the last, and the whole image round-trips.
func TestKittyImageChunks(t *testing.T) {
	img := testImage(100, 60)
	seq := kittyImage(img, 40, 12)
	parts := regexp.MustCompile("\x1b_G([^;]*);([^\x1b]*)\x1b\\\\").FindAllStringSubmatch(seq, -1)
	if len(parts) < 2 {
		t.Fatalf("%d chunks", len(parts))
	}
	if parts[0][1] != "a=T,f=32,s=100,v=60,c=40,r=12,q=2,m=1" {
		t.Errorf("first control data %q", parts[0][1])
	}
	var data string
	for i, p := range parts {
		if len(p[2]) > 4096 {
			t.Errorf("chunk %d is %d bytes", i, len(p[2]))
		}
		last := i == len(parts)-1
		if strings.HasSuffix(p[1], "m=1") == last {
			t.Errorf("chunk %d: %q", i, p[1])
		}
		data += p[2]
	}
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil || len(raw) != 100*60*4 || raw[0] != 220 {
		t.Fatalf("payload: %d bytes, %v", len(raw), err)
	}
	if sx := sixelImage(img, 4, 2); !strings.HasPrefix(sx, "\x1bP") || !strings.HasSuffix(sx, "\x1b\\") || !strings.Contains(sx, "#") {
		t.Errorf("sixel sequence %q", sx[:min(40, len(sx))])
	}
	if it := itermImage(img, 40, 12); !strings.HasPrefix(it, "\x1b]1337;File=inline=1;size=") || !strings.Contains(it, ";width=40;height=12;") {
		t.Errorf("iterm2 sequence %q", it[:60])
	}
}

// TestCellFit keeps the aspect (a cell is twice as tall as wide) and zoom fills the width.
func TestCellFit(t *testing.T) {
	r := image.Rect(0, 0, 400, 300)
	if c, rw := cellFit(r, 100, 50, false); c != 100 || rw != 37 {
		t.Errorf("wide room: %d×%d", c, rw)
	}
	if c, rw := cellFit(r, 100, 20, false); c != 53 || rw != 20 {
		t.Errorf("short room: %d×%d", c, rw)
	}
	if c, rw := cellFit(r, 100, 20, true); c != 100 || rw != 20 {
		t.Errorf("zoom: %d×%d", c, rw)
	}
}

// TestImageViewKeys: next/previous wrap around, z toggles zoom, each image decodes once.
func TestImageViewKeys(t *testing.T) {
	v := newImageView(defaultImageSource{}, DefaultStyles(lipgloss.NewRenderer(os.Stdout)), termenv.TrueColor, GraphicsNone)
	v.SetSize(60, 20)
	names := []string{"annotations/demo/images/street_1.png", "annotations/demo/images/street_2.png"}
	v.Update(v.Open(names)())
	if !strings.Contains(v.View(), "image 1/2 · street_1.png · fit") || !strings.Contains(v.View(), "▀") {
		t.Fatalf("first image:\n%s", v.View())
	}
	_, cmd := v.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("n")})
	v.Update(cmd())
	if !strings.Contains(v.View(), "image 2/2 · street_2.png") {
		t.Fatalf("n:\n%s", v.View())
	}
	if _, cmd := v.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("n")}); cmd != nil || !strings.Contains(v.View(), "image 1/2") {
		t.Fatal("n on the last image wraps to the first, decoded already")
	}
	v.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("z")})
	if !strings.Contains(v.View(), "· zoom ·") {
		t.Fatal("z does not zoom")
	}
}
