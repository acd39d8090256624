package e2e

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// TestAdjudicateLockedSaysNotSaved (#42): another program holds the write lock while the
// adjudicator takes an answer. The screen says ✗ NOT SAVED within the annotator's lock wait
// (a second), as the annotate screen does, and lands the decision once the lock goes. The
// screen used to open the store with the batch commands' 30 s wait, so it said "… saving"
// for half a minute and q said nothing while it waited. The 10 s bound is the configured
// wait's (1 s against 30 s) with room for a busy machine, not a speed target.
func TestAdjudicateLockedSaysNotSaved(t *testing.T) {
	term := newTerminal(t)
	bin := build(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "adj.db")
	m3 := cli(t, bin, db)
	m3("import", "--demo")
	for _, who := range []string{"ann", "ben"} {
		p := filepath.Join(dir, who+".jsonl")
		writeDemoLabels(t, p, func(i int) int {
			if who == "ben" && i < 2 {
				return 4
			}
			return 2
		})
		m3("import", "--annotator", who, p)
	}
	term.start("a", fmt.Sprintf("%s --db %s adjudicate --adjudicator judy", bin, db))
	term.waitFor("a", "turn 1 of 2", "A ann", "B ben", "✓ saved")
	release := holdLock(t, db)
	start := time.Now()
	term.keys("a", "B")
	term.waitFor("a", "✗ NOT SAVED")
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the screen said NOT SAVED %v after the key, want about the annotator's 1 s lock wait", d)
	}
	release()
	term.waitFor("a", "Correctness = 4 saved", "✓ saved")
}
