package tui

import (
	"os"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/rubric"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// TestViewerRefusesWhereItCannotWork: over SSH or without a display, o says why instead of
// claiming it opened anything.
func TestViewerRefusesWhereItCannotWork(t *testing.T) {
	cases := []struct {
		goos string
		env  map[string]string
		want string
	}{
		{"linux", map[string]string{"DISPLAY": ":0", "SSH_CONNECTION": "1.2.3.4 5 6.7.8.9 22"}, "SSH session"},
		{"darwin", map[string]string{"SSH_TTY": "/dev/pts/1"}, "SSH session"},
		{"linux", map[string]string{}, "no display"},
		{"linux", map[string]string{"WAYLAND_DISPLAY": "wayland-0"}, ""},
		{"darwin", map[string]string{}, ""},
	}
	for _, tc := range cases {
		err := viewerEnv{goos: tc.goos, getenv: env(tc.env)}.canOpenViewer()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s %v: %v, want %q", tc.goos, tc.env, err, tc.want)
		}
	}
}

// TestViewerArgs: only existing files (made absolute, so "-x" cannot pass for an option)
// and http(s) URLs reach the viewer.
func TestViewerArgs(t *testing.T) {
	exists := func(p string) bool { return strings.HasSuffix(p, "/-rf.png") || strings.HasSuffix(p, "/ok.png") }
	args, skipped := viewerArgs([]string{"ok.png", "-rf.png", "gone.png", "https://x.org/a.png", "file:///etc/passwd", "javascript://x"}, exists)
	if len(args) != 3 || !strings.HasPrefix(args[0], "/") || !strings.HasPrefix(args[1], "/") || args[2] != "https://x.org/a.png" {
		t.Errorf("args %q", args)
	}
	if len(skipped) != 3 {
		t.Errorf("skipped %q", skipped)
	}
}

// TestKeysFromRubric: the score keys are the rubric's scale digits and their full-width
// forms; the choice keys are the rubric's, with their Caps Lock and full-width forms (issue
// 25 item 11), which answer as the plain key.
func TestKeysFromRubric(t *testing.T) {
	r, err := rubric.Parse(annotations.DefaultRubric)
	if err != nil {
		t.Fatal(err)
	}
	k := newKeyMap(r)
	keys := strings.Join(k.Score.Keys(), "")
	if keys != "1１2２3３4４5５" || k.Score.Help().Key != "1-5" {
		t.Errorf("score keys %q help %q", keys, k.Score.Help().Key)
	}
	if got := strings.Join(k.Choice.Keys(), ""); got != "ynaYｙＹNｎＮAａＡ" || k.Choice.Help().Key != "y/n/a" {
		t.Errorf("choice keys %q help %q", got, k.Choice.Help().Key)
	}
	for in, want := range map[string]string{"Y": "y", "ｙ": "y", "Ｎ": "n", "ａ": "a", "y": "y", "4": "4"} {
		if got := plainKey(in); got != want {
			t.Errorf("plainKey(%q) = %q, want %q", in, got, want)
		}
	}
	if halfWidthDigit("５") != "5" || halfWidthDigit("x") != "x" {
		t.Error("full-width digits")
	}
}

// TestTheme: flags win, COLORFGBG decides auto inside tmux, nonsense is an error.
func TestTheme(t *testing.T) {
	cases := []struct {
		theme, fgbg string
		dark, err   bool
	}{
		{"dark", "0;15", true, false},
		{"light", "15;0", false, false},
		{"auto", "15;0", true, false},
		{"", "0;default;15", false, false},
		{"auto", "0;7", false, false},
		{"auto", "7;8", true, false},
		{"blue", "", false, true},
	}
	for _, tc := range cases {
		r := lipgloss.NewRenderer(os.Stdout)
		r.SetHasDarkBackground(!tc.dark) // the opposite, so a no-op shows
		err := ApplyTheme(r, tc.theme, env(map[string]string{"COLORFGBG": tc.fgbg}))
		if (err != nil) != tc.err {
			t.Errorf("%q: err %v", tc.theme, err)
			continue
		}
		if !tc.err && r.HasDarkBackground() != tc.dark {
			t.Errorf("%q COLORFGBG=%s: dark %v, want %v", tc.theme, tc.fgbg, r.HasDarkBackground(), tc.dark)
		}
	}
}
