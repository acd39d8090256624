package e2e

import (
	"encoding/json"
	"fmt"
	"os"
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

// keepLines rewrites a JSONL file keeping the lines for which keep is true.
func keepLines(t *testing.T, path string, keep func(line string) bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if keep(l) {
			out = append(out, l)
		}
	}
	if err := os.WriteFile(path, []byte(strings.Join(out, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestAdjudicateScreenSecondPass (issue 25 items 12–15) in a real terminal: a burst of
// "AAA" decides three fields, one each; fields that do not apply show NA, decided; a
// letter stays with its annotator on every turn; t and a letter take a whole label; c
// writes the adjudicator's comment; i shows the image full screen; ? shows the help;
// messages use the rubric's labels.
func TestAdjudicateScreenSecondPass(t *testing.T) {
	term := newTerminal(t)
	bin := binary(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "adj.db")
	m3 := cli(t, bin, db)
	m3("import", "--demo")
	// Turn 1: ann 2, ben 4. Turn 2: ben 4, cy 2 (ann did not label it).
	const turn2 = `"sample_id":"demo_zh_umbrella_0_turn_2"`
	for who, q := range map[string]int{"ann": 2, "ben": 4, "cy": 2} {
		p := filepath.Join(dir, who+".jsonl")
		writeDemoLabels(t, p, func(i int) int {
			if i < 2 {
				return q
			}
			return 3
		})
		switch who {
		case "ann":
			keepLines(t, p, func(l string) bool { return !strings.Contains(l, turn2) })
		case "cy":
			keepLines(t, p, func(l string) bool { return strings.Contains(l, turn2) })
		}
		m3("import", "--annotator", who, p)
	}
	pid := term.start("a", fmt.Sprintf("%s --db %s adjudicate --adjudicator judy", bin, db))
	s := term.waitFor("a", "turn 1 of 2 · 2 open", "A ann", "B ben", "≠ Correctness")
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, "Resists Misleading") && (!strings.Contains(line, "NA n/a") || strings.Contains(line, "?")) {
			t.Errorf("a field that does not apply is not shown NA, decided: %q", line)
		}
	}
	// The turn's image: named on screen, full screen with i, back with esc.
	term.waitFor("a", "image 1 of 1: annotations/demo/images/umbrella.png", "i image full screen")
	term.until("a", "the image preview beside the table", func(s string) bool {
		for _, l := range strings.Split(s, "\n") {
			if strings.Contains(l, "≠ Correctness") && strings.Contains(l, "▀") {
				return true
			}
		}
		return false
	})
	term.keys("a", "i")
	term.waitFor("a", "image 1/1 · umbrella.png · fit")
	term.keys("a", "Escape")
	term.waitFor("a", "turn 1 of 2 · 2 open", "≠ Correctness")
	term.tmux("send-keys", "-t", "a", "-l", "AAA")
	s = term.waitFor("a", "turn 1 of 2 · 1 open", "Overall Quality = 2 saved")
	if n := strings.Count(s, "2 (A)"); n != 3 {
		t.Fatalf("AAA took ann's answer for %d fields, want 3:\n%s", n, s)
	}

	term.keys("a", "?")
	term.waitFor("a", "m3eval — keys", "take a whole label", "keeps their letter")
	term.keys("a", "Escape")
	term.waitFor("a", "turn 1 of 2")

	term.keys("a", "Right")
	s = term.waitSettled("a", "turn 2 of 2", "B ben", "C cy")
	if strings.Contains(s, "A ben") || strings.Contains(s, "B cy") {
		t.Fatalf("column letters changed meaning on turn 2:\n%s", s)
	}
	term.keys("a", "A")
	term.waitFor("a", "A (ann) did not label this turn")
	term.keys("a", "t")
	term.waitFor("a", "take whose whole label")
	term.keys("a", "C")
	term.waitFor("a", "turn 2 of 2 · 0 open", "Correctness = 2", "✓ saved")
	term.keys("a", "y")
	// Every field decided: the cursor stays; a choice key on a 1–5 field says so in words.
	term.waitFor("a", `"y" is not a value of Correctness: 1–5`)
	term.keys("a", "c")
	term.waitFor("a", "Your comment:")
	term.tmux("send-keys", "-t", "a", "-l", "cy saw the umbrella")
	term.keys("a", "Enter")
	term.waitFor("a", "final comment: cy saw the umbrella", "✓ saved")
	term.keys("a", "q")
	waitExit(t, pid)

	out := m3("export", "--final", "--format", "jsonl")
	var got map[string]any
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, turn2) {
			if err := json.Unmarshal([]byte(line), &got); err != nil {
				t.Fatal(err)
			}
		}
	}
	label, _ := got["human_annotation"].(map[string]any)
	if label == nil || label["correctness"] != float64(2) || label["overall_quality"] != float64(2) ||
		label["comments"] != "cy saw the umbrella" {
		t.Fatalf("turn 2's final label: %v\n%s", got, out)
	}
}
