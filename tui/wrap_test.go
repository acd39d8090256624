package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// closing are characters a line must not start with (kinsoku), opening those it must not
// end with.
const (
	closing = "，。、）」』】》！？：；,.)"
	opening = "（「『【《("
)

func TestWrapText(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		width int
		want  []string
	}{
		{"fits", "short line", 20, []string{"short line"}},
		{"words", "the dog lies on the grass under the tree", 16,
			[]string{"the dog lies on", "the grass under", "the tree"}},
		{"list item hangs", "- the dog lies on the grass under the tree", 18,
			[]string{"- the dog lies on", "  the grass under", "  the tree"}},
		{"numbered item hangs", "  12. first check the image, then the text", 20,
			[]string{"  12. first check", "      the image,", "      then the text"}},
		{"code keeps its indent", "    if answer == expected { return score }", 24,
			[]string{"    if answer ==", "    expected { return", "    score }"}},
		{"after a slash (UAX #14)", "see https://example.com/a/very/long/path", 12,
			[]string{"see https://", "example.com/", "a/very/long/", "path"}},
		{"long word cut", "supercalifragilistic word", 8,
			[]string{"supercal", "ifragili", "stic", "word"}},
		{"lines kept", "one\n\n- two", 10, []string{"one", "", "- two"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := wrapText(tc.text, tc.width)
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("wrapText(%q, %d) =\n%q\nwant\n%q", tc.text, tc.width, got, tc.want)
			}
		})
	}
}

// TestWrapChineseKinsoku wraps Chinese text at every width from 6 to 40 cells: no line
// starts with closing punctuation or ends with opening punctuation, no line is wider than
// the width, and no character is lost.
func TestWrapChineseKinsoku(t *testing.T) {
	texts := []string{
		"图中有一个穿红色外套的人，撑着一把黑色的伞，站在画面中间偏左的位置。右边有一棵树，天空是灰色的。",
		"我不建议直接跳到结论。简短地说：很可能是为了挡雨。但这个结论依赖于前面找到的证据（湿地面、积水、灰色天空），而图中看不到雨丝。",
		"他说「下雨了」，然后（犹豫了一下）把伞收起来了！真的吗？是的。",
	}
	for _, text := range texts {
		for w := 6; w <= 40; w++ {
			lines := wrapText(text, w)
			if got := strings.Join(lines, ""); got != text {
				t.Fatalf("width %d lost text:\n%q\n%q", w, got, text)
			}
			for i, l := range lines {
				if lw := ansi.StringWidth(l); lw > w {
					t.Errorf("width %d: line %d is %d cells: %q", w, i, lw, l)
				}
				if i > 0 && strings.ContainsRune(closing, []rune(l)[0]) {
					t.Errorf("width %d: line %d starts with closing punctuation: %q (after %q)", w, i, l, lines[i-1])
				}
				if r := []rune(l); i < len(lines)-1 && strings.ContainsRune(opening, r[len(r)-1]) {
					t.Errorf("width %d: line %d ends with opening punctuation: %q", w, i, l)
				}
			}
		}
	}
}
