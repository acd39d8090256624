package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestFitBody (#40): a body taller than its room loses lines from its top, never its bottom
// (the message line, the comment box), and a line wider than the terminal is cut rather than
// wrapped: either would push the header, with its save state, off the screen.
func TestFitBody(t *testing.T) {
	body := "ctx 1\nctx 2\nctx 3\nrubric\n\x1b[31m⚠ a warning much wider than the terminal is\x1b[0m\nmessage"
	got := strings.Split(fitBody(body, 20, 4), "\n")
	if len(got) != 4 || got[0] != "ctx 3" || got[3] != "message" {
		t.Fatalf("fitted to 4 rows: %q", got)
	}
	if w := ansi.StringWidth(got[2]); w > 20 || !strings.HasSuffix(ansi.Strip(got[2]), "…") {
		t.Fatalf("a wide line is %d columns: %q", w, got[2])
	}
	if small := "a\nb"; fitBody(small, 20, 4) != small {
		t.Fatalf("a body that fits changed: %q", fitBody(small, 20, 4))
	}
}
