package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestHeaderAlwaysOnScreen (#40): the header, with the save state, is the first line of the
// annotator's screen on every demo item at 120×40, 120×60 and 80×24, with the most the
// stacked layout ever shows below it: Overall's choices, the comment warning (Overall 1
// against 5 and 5) and the open comment box.
func TestHeaderAlwaysOnScreen(t *testing.T) {
	term := newTerminal(t)
	term.start("keep", "sleep 3600") // the tmux server outlives each size's session
	bin := build(t)
	db := filepath.Join(t.TempDir(), "h.db")
	demoInto(t, bin, db)
	for _, size := range [][2]int{{120, 40}, {120, 60}, {80, 24}} {
		name := fmt.Sprintf("h%dx%d", size[0], size[1])
		term.tmux("new-session", "-d", "-s", name, "-x", fmt.Sprint(size[0]), "-y", fmt.Sprint(size[1]),
			fmt.Sprintf("exec %s --db %s annotate --annotator %s", bin, quoteShell(db), name))
		header := func(what string, i int) {
			t.Helper()
			s := term.screen(name)
			if first, _, _ := strings.Cut(s, "\n"); !strings.HasPrefix(first, "m3eval · ") || !strings.Contains(first, "saved") {
				t.Fatalf("%s, item %d, %s: the header is not the first line:\n%s", name, i, what, s)
			}
		}
		for i := 1; i <= 35; i++ {
			term.waitFor(name, fmt.Sprintf("item %d of 35", i))
			term.keys(name, "5", "5", "1")
			term.waitFor(name, "✓ saved")
			header("scored", i)
			term.keys(name, "c")
			term.waitFor(name, "ctrl+s save & submit")
			header("comment box open", i)
			term.keys(name, "Escape")
			term.until(name, "the comment box closed", func(s string) bool { return !strings.Contains(s, "ctrl+s save & submit") })
			header("comment box closed", i)
			if i < 35 {
				term.keys(name, "Right")
			}
		}
		term.tmux("kill-session", "-t", name)
	}
}
