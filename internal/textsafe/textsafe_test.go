package textsafe

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

func TestString(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "It is raining 下雨了", "It is raining 下雨了"},
		{"layout kept", "a\n\tb", "a\n\tb"},
		{"crlf", "a\r\nb", "a\nb"},
		{"bare cr", "a\rb", "a␍b"},
		{"osc title", "\x1b]0;pwned\x07", "␛]0;pwned␇"},
		{"osc 52 clipboard", "\x1b]52;c;aGk=\x1b\\", "␛]52;c;aGk=␛\\"},
		{"clear screen", "\x1b[2J\x1b[H5 Fully right", "␛[2J␛[H5 Fully right"},
		{"c1 csi", "\u009b31m", "␛[31m"},
		{"c1 osc st", "\u009d0;x\u009c", "␛]0;x␛\\"},
		{"nul del", "a\x00b\x7f", "a␀b␡"},
		{"invalid utf8", "a\xffb", "a\uFFFDb"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := String(tc.in); got != tc.want {
				t.Fatalf("String(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestLine(t *testing.T) {
	if got, want := Line("a\nb\tc\x1b[1m"), "a ⏎ b c␛[1m"; got != want {
		t.Fatalf("Line = %q, want %q", got, want)
	}
}

// TestNothingForTheTerminal: whatever the input, the output holds no control character but
// newline and tab, so no terminal parser (here charmbracelet/x/ansi's) finds a sequence in it.
func FuzzNothingForTheTerminal(f *testing.F) {
	for _, s := range []string{"\x1b]0;t\x07", "\x1b[2J", "\u009b1m", "ok", "\xff\xfe", "\x1bP+q\x1b\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := String(s)
		if !Safe(out) {
			t.Fatalf("String(%q) = %q is not safe", s, out)
		}
		if stripped := ansi.Strip(out); stripped != out {
			t.Fatalf("ansi finds a sequence in %q", out)
		}
		if l := Line(s); strings.ContainsAny(l, "\n\t") || !Safe(l) {
			t.Fatalf("Line(%q) = %q", s, l)
		}
		if Safe(s) && String(s) != s {
			t.Fatalf("safe text changed: %q -> %q", s, String(s))
		}
	})
}
