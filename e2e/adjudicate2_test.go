package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// adjudicationDB is the demo with ann's and ben's labels: 2 apart on the scales of the first
// two turns (ann 2, ben 4), one apart elsewhere.
func adjudicationDB(t *testing.T, bin, dir string) (string, func(args ...string) string) {
	t.Helper()
	db := filepath.Join(dir, "adj.db")
	m3 := cli(t, bin, db)
	m3("import", "--demo")
	for _, who := range []string{"ann", "ben"} {
		p := filepath.Join(dir, who+".jsonl")
		writeDemoLabels(t, p, func(i int) int {
			if who == "ben" && i < 2 {
				return 4
			}
			if who == "ben" && i%2 == 1 {
				return 3
			}
			return 2
		})
		m3("import", "--annotator", who, p)
	}
	return db, m3
}

// TestExportFinalOnlySubmittableLabels: decisions taken field by field can add up to a label
// no annotator could submit (Overall 1 where the suggestion is 4, without the comment the
// guide asks for): export --final leaves it out and says which turn and why.
func TestExportFinalOnlySubmittableLabels(t *testing.T) {
	bin := binary(t)
	db, m3 := adjudicationDB(t, bin, t.TempDir())
	m3("adjudicate", "--adjudicator", "judy", "--turn", "demo_zh_umbrella_0_turn_1", "--take", "ben",
		"--field", "correctness", "--field", "reasoning_completeness", "--set", "overall_quality=1")
	m3("adjudicate", "--adjudicator", "judy", "--turn", "demo_zh_umbrella_0_turn_2", "--take", "ben")
	cmd := exec.Command(bin, "--db", db, "export", "--final", "--format", "jsonl")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("export --final: %v\n%s", err, stderr.String())
	}
	if strings.Contains(string(out), `"demo_zh_umbrella_0_turn_1"`) {
		t.Errorf("export --final wrote turn 1, whose final label needs a comment nobody wrote:\n%.400s", out)
	}
	if !strings.Contains(string(out), `"demo_zh_umbrella_0_turn_2"`) {
		t.Errorf("export --final left out turn 2 (taken whole from ben):\n%.400s", out)
	}
	msg := stderr.String()
	if !strings.Contains(msg, "1 final label(s) left out that an annotator could not have submitted (demo_zh_umbrella_0_turn_1)") {
		t.Errorf("export --final said:\n%s", msg)
	}
}
